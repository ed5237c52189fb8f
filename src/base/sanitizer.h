#ifndef ACCORD_BASE_SANITIZER_H
#define ACCORD_BASE_SANITIZER_H

#include <stdbool.h>

/* The sanitizer build's hooks (AddressSanitizer with LeakSanitizer, `make asan`): each
 * function does nothing in other builds.  The build's default LeakSanitizer options and
 * suppressions per process (__lsan_default_options) are in sanitizer.c too. */

/* The exit status of a runner forked by the zygote that a sanitizer stopped (a leak, an
 * AddressSanitizer or UBSan error: the zygote's default options), distinct from the
 * runner's own 0 and 1; the server logs it (queue/zygote.c). */
#define SANITIZER_EXIT 23

/* LeakSanitizer's end-of-process check, now: a leak ends the process with the report on
 * stderr and the exit status of the sanitizer's options (SANITIZER_EXIT in the zygote's
 * forks); no check at exit follows. */
void sanitizer_leak_check(void);

/* Test-only, sanitizer builds: when ACCORD_TEST_RUNNER_LEAK is set in the runner's
 * environment (the server passes it on from its own), allocates SANITIZER_TEST_LEAK_BYTES
 * and loses the pointer, a leak that the runner's check must report
 * (tests/api/test_sanitizer_leaks.py). */
#define SANITIZER_TEST_LEAK_BYTES 4242
void sanitizer_test_leak(void);

/* Sanitizer builds: AddressSanitizer's allocator, which serves every malloc, gives its free
 * memory back to the system, and true.  Other builds: false, and the caller trims glibc's
 * arenas (malloc_trim) — never in a sanitizer build, where they were never set up and
 * malloc_trim set them up from two threads at once (a SEGV in mtrim). */
bool sanitizer_give_back_memory(void);

#endif
