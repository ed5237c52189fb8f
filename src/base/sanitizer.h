#ifndef ACCORD_BASE_SANITIZER_H
#define ACCORD_BASE_SANITIZER_H

/* The sanitizer build's hooks (AddressSanitizer with LeakSanitizer, `make asan`): each
 * function does nothing in other builds.  The build's default LeakSanitizer options and
 * suppressions per process (__lsan_default_options) are in sanitizer.c too. */

/* LeakSanitizer's global roots in the runner zygote and its runners, which run with
 * use_globals=0 (sanitizer.c): registers the writable segments of every loaded image but
 * the sanitizer runtimes' own (libasan's and libubsan's ~12 MB of counters and tables,
 * which hold no pointer into the program's heap) as root regions, each once.  Call it in
 * the zygote once its libraries are loaded and again before a leak check (a runner may
 * have loaded more).  Not thread-safe: the zygote and a runner's exit are single-threaded. */
void sanitizer_runner_roots(void);

/* sanitizer_runner_roots in the zygote, and the segments it registers mapped now
 * (MADV_POPULATE_READ): each runner's check reads them, and pages the zygote never touched
 * were each a fault in every runner (~3,000 a runner); mapped once here, they come with
 * fork.  The sanitizer runtimes' segments, which no runner reads, are left unmapped. */
void sanitizer_zygote_roots(void);

/* The exit status of a runner forked by the zygote that a sanitizer stopped (a leak, an
 * AddressSanitizer or UBSan error: the zygote's default options), distinct from the
 * runner's own 0 and 1; the server logs it (queue/zygote.c). */
#define SANITIZER_EXIT 23

/* LeakSanitizer's end-of-process check, now: a leak ends the process with the report on
 * stderr and the exit status of the sanitizer's options (SANITIZER_EXIT in the zygote's
 * forks); no check at exit follows.  A runner calls sanitizer_runner_roots first. */
void sanitizer_leak_check(void);

/* Test-only, sanitizer builds: when ACCORD_TEST_RUNNER_LEAK is set in the runner's
 * environment (the server passes it on from its own), allocates SANITIZER_TEST_LEAK_BYTES
 * and loses the pointer, a leak that the runner's check must report
 * (tests/api/test_sanitizer_leaks.py). */
#define SANITIZER_TEST_LEAK_BYTES 4242
void sanitizer_test_leak(void);

#endif
