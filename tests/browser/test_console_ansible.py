"""The process page's Ansible tab (issue 25): a real playbook (Debian's ansible-core, local
connection host aliases) run by the `ansible` task; the tab shows the hosts by outcome with
counts, the failed host first, a host's tasks with status and duration, follows the run
while the process runs, draws a long host list a window at a time, and is offered only to
processes that have ANSIBLE events."""
import os

from selenium.webdriver.common.by import By

from conftest import (click_css, ADMIN_PASSWORD, console_errors, sign_in, start_process, texts, visit, wait_css, wait_process,
                      wait_ready, wait_until)

LOCAL = "{ansible_connection: local, ansible_python_interpreter: /usr/bin/python3}"

# Play 1: every host says hello, zz-bad fails (named to sort last by name: the tab must put
# it first for being failed).  Play 2: the gate host waits for the file "go" in the working
# directory, which the test creates once it has seen the tab show the run so far.
PLAYBOOK = b"""
- hosts: web:zz-bad
  gather_facts: false
  tasks:
    - name: hello
      debug: {msg: "hello from {{ inventory_hostname }}"}
    - name: break the bad one
      fail: {msg: "zz-bad is broken"}
      when: inventory_hostname == 'zz-bad'
- hosts: gate
  gather_facts: false
  tasks:
    - name: wait for go
      wait_for: {path: "{{ playbook_dir }}/go", timeout: 120}
    - name: after the gate
      debug: {msg: "through"}
"""

FLOW = """
flows:
  default:
    - task: ansible
      in:
        playbook: site.yml
        ignoreErrors: true
        inventory:
          web: {hosts: ["web1", "web2"], vars: %(local)s}
          bad: {hosts: ["zz-bad"], vars: %(local)s}
          gate: {hosts: ["gate"], vars: %(local)s}
""" % {"local": LOCAL}


def work_dir(server, pid):
    """The process's working directory on the server (<data>/work/<id>)."""
    path = os.path.join(server.data_dir, "work", pid)
    assert os.path.isdir(path), path
    return path


def host_rows(d):
    """(host, outcome) of each drawn row of the hosts table, in order."""
    return [tuple(x) for x in d.execute_script(
        "return [...document.querySelectorAll('#ansible-host-rows tr')].map(r => [r.dataset.host, r.dataset.status])")]


def counts(d):
    """{outcome: number} of the count chips shown (running only while a host runs)."""
    return dict(d.execute_script(
        "return [...document.querySelectorAll('[data-test=ansible-count]')].filter(b => !b.hidden)"
        ".map(b => [b.dataset.status, +b.querySelector('.count').textContent])"))


def test_ansible_tab_live_failed_first_and_host_tasks(driver, admin, server):
    pid = start_process(admin, FLOW, files={"site.yml": PLAYBOOK})
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/process/%s" % pid, "process")
    # offered once the playbook has recorded events, while the process runs
    wait_until(driver, lambda d: d.find_element(By.ID, "tab-ansible").is_displayed(), "the Ansible tab offered")
    click_css(driver, "#tab-ansible")
    wait_ready(driver, "process")
    wait_css(driver, "#process-tab-ansible")

    wait_until(driver, lambda d: dict(host_rows(d)).get("gate") == "RUNNING" and len(host_rows(d)) == 4,
               "the gate host running and every host listed")
    assert host_rows(driver)[0] == ("zz-bad", "FAILED")
    assert counts(driver) == {"ALL": 4, "FAILED": 1, "UNREACHABLE": 0, "RUNNING": 1, "CHANGED": 0, "OK": 2, "SKIPPED": 0}
    assert driver.find_element(By.ID, "process-status").text == "RUNNING"

    open(os.path.join(work_dir(server, pid), "go"), "w").close()
    wait_until(driver, lambda d: dict(host_rows(d)).get("gate") == "OK", "the gate host done, without a reload")
    wait_until(driver, lambda d: d.find_element(By.ID, "process-status").text == "FINISHED", "the process finished")
    assert counts(driver) == {"ALL": 4, "FAILED": 1, "UNREACHABLE": 0, "CHANGED": 0, "OK": 3, "SKIPPED": 0}
    assert host_rows(driver)[0] == ("zz-bad", "FAILED")

    # a host's tasks: status and duration of each
    click_css(driver, "tr[data-host=zz-bad] [data-test=ansible-host]")
    wait_css(driver, "#ansible-tasks[data-host=zz-bad]")
    assert texts(driver, "ansible-task-name") == ["hello", "break the bad one"]
    statuses = driver.execute_script(
        "return [...document.querySelectorAll('[data-test=ansible-task]')].map(r => r.dataset.status)")
    assert statuses == ["OK", "FAILED"]
    assert all(x.strip().endswith(("ms", " s")) for x in texts(driver, "ansible-task-duration"))

    # the outcome filter
    click_css(driver, "[data-test=ansible-count][data-status=OK]")
    wait_until(driver, lambda d: sorted(h for h, _ in host_rows(d)) == ["gate", "web1", "web2"], "only the OK hosts")
    assert driver.find_element(By.CSS_SELECTOR, "[data-test=ansible-count][data-status=OK]") \
        .get_attribute("aria-pressed") == "true"
    assert console_errors(driver) == []


def test_ansible_tab_windows_a_long_host_list(driver, admin):
    # over twice the rows the window draws at laptop size (lib/row_window.js: 67 at 860 px);
    # each host is an ansible-playbook fork, so no more than that (240 cost ~7 CPU-s)
    n = 150
    flow = """
flows:
  default:
    - task: ansible
      in:
        playbook: many.yml
        config: {defaults: {forks: 50}}
        inventory:
          many: {hosts: [%s], vars: %s}
""" % (", ".join('"h%03d"' % i for i in range(n)), LOCAL)
    play = b"- hosts: all\n  gather_facts: false\n  tasks:\n    - debug: {msg: hi}\n"
    pid = start_process(admin, flow, files={"many.yml": play})
    assert wait_process(admin, pid, timeout=180)["status"] == "FINISHED"
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/process/%s/ansible" % pid, "process")
    wait_until(driver, lambda d: counts(d).get("OK") == n, "%d OK hosts counted" % n)
    assert wait_css(driver, "#ansible-hosts").get_attribute("aria-rowcount") == str(n + 1)
    drawn = host_rows(driver)
    assert 0 < len(drawn) < n  # a window of the rows, not all of them
    assert drawn[0] == ("h000", "OK")
    driver.execute_script("window.scrollTo(0, document.body.scrollHeight)")
    wait_until(driver, lambda d: host_rows(d) and host_rows(d)[-1][0] == "h%03d" % (n - 1), "the last host at the end")
    assert console_errors(driver) == []


def test_no_ansible_tab_without_ansible_events(driver, admin):
    pid = start_process(admin, "flows:\n  default:\n    - log: plain\n")
    wait_process(admin, pid)
    sign_in(driver, "admin", ADMIN_PASSWORD)
    visit(driver, "#/process/%s" % pid, "process")
    assert not driver.find_element(By.ID, "tab-ansible").is_displayed()
    assert driver.find_element(By.ID, "tab-events").is_displayed()
