"""The CPU of a throwaway PostgreSQL cluster (scripts/pg-cluster) and of processes, from
/proc, for bench/suites/backends and bench/suites/pg."""
import os

TICK = os.sysconf("SC_CLK_TCK")


def proc_cpu(pid, children=True):
    """utime + stime (+ the reaped children's) of pid, in seconds; 0 when it is gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12]) + ((int(fields[13]) + int(fields[14])) if children else 0)
    return ticks / TICK


def cluster_cpu(folder):
    """The postmaster's CPU with its reaped backends', and its live children's."""
    with open(os.path.join(folder, "data", "postmaster.pid")) as f:
        master = int(f.readline())
    total = proc_cpu(master)
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open("/proc/%s/stat" % d) as f:
                    if int(f.read().rsplit(")", 1)[1].split()[1]) == master:
                        total += proc_cpu(int(d))
            except OSError:
                pass
    return total


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])
