/* The sanitizer build's hooks (base/sanitizer.h) and its default LeakSanitizer options. */
#include "base/sanitizer.h"

#if defined(__SANITIZE_ADDRESS__)
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <sanitizer/lsan_interface.h>

#define STR_(x) #x
#define STR(x) STR_(x)
#define EXIT_STR STR(SANITIZER_EXIT)

/* Whether this process's arguments after its program name begin with want[0..n).  Not
 * instrumented, raw system calls and no string functions: __lsan_default_options asks it
 * while the sanitizer starts, before its shadow memory and interceptors exist. */
__attribute__((no_sanitize("address", "undefined"))) static bool args_begin(const char *const *want, int n_want)
{
	char cmd[64];
	long fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	long n = fd >= 0 ? syscall(SYS_read, fd, cmd, sizeof cmd - 1) : -1;
	long i = 0;

	if (fd >= 0)
		syscall(SYS_close, fd);
	if (n <= 0)
		return false;
	cmd[n] = 0;
	while (i < n && cmd[i]) /* the program's name */
		i++;
	for (int a = 0; a < n_want; a++) {
		const char *w = want[a];
		for (long k = 0;; k++) {
			if (++i > n || cmd[i] != w[k])
				return false;
			if (!w[k])
				break;
		}
	}
	return true;
}

/* `accord git-fetch …`, the fetch child of repo/fetch.c */
__attribute__((no_sanitize("address", "undefined"))) static bool is_fetch_child(void)
{
	static const char *const want[] = {"git-fetch"};
	return args_begin(want, 1);
}

/* `accord runner --zygote`, which queue/zygote.c starts; its runners are its forks */
__attribute__((no_sanitize("address", "undefined"))) static bool is_zygote(void)
{
	static const char *const want[] = {"runner", "--zygote"};
	return args_begin(want, 2);
}

/* libgit2 1.5 leaves pcre2 match data of its config parser behind, and in the fetch child
 * (which exits right after) the known_hosts list of libssh2 and a few buffers of its ssh
 * transport: the sanitizer build would report them for every fetch.  The server's own
 * use of libgit2 (resolve, checkout) stays checked.
 * _dlerror_run: glibc keeps the last dlerror() message in a thread-local buffer; a command
 * that exits soon after a failed dl call inside a library (seen with libldap: accord serve
 * refusing its LDAP settings) would report it. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return is_fetch_child() ? "leak:libpcre2-8.so\nleak:libgit2.so\nleak:libssh2.so\nleak:_dlerror_run\n"
				: "leak:libpcre2-8.so\nleak:_dlerror_run\n";
}

/* The fetch child matches its suppressions by module name, without symbolizing: LeakSanitizer
 * symbolizes every frame of a leaked block that no module rule matches first (libasan's own
 * frames), and reading libasan's compressed debug information cost ~1.3 s of CPU at the end of
 * every fetch (half the CPU of tests/api/test_repositories.py, by perf).  An ASan report of
 * the fetch child then shows modules and offsets: ASAN_OPTIONS=symbolize=1 brings the names
 * back.
 * The runner zygote and each runner it forks (which inherits its options) end with a
 * status of their own when a sanitizer stops them, SANITIZER_EXIT. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void)
{
	if (is_fetch_child())
		return "print_suppressions=0:symbolize=0";
	return is_zygote() ? "print_suppressions=0:exitcode=" EXIT_STR : "print_suppressions=0";
}

/* libgit2's start in the fetch child loads the CA bundle through mbedTLS, whose PEM
 * reader calls strstr once per certificate on the rest of the ~200 KB file: ASan's strstr
 * wrapper measures the whole haystack each time (internal_strlen), ~30 MB a fetch — the
 * largest single cost of the runners' and children's CPU in the API suites (perf, bench/
 * RESULTS.md session 31).  In that child strstr runs unchecked; everything else stays.
 *
 * intercept_tls_get_addr=0 everywhere: GCC 12's sanitizer learns a dynamic TLS block's
 * bounds at __tls_get_addr by a glibc 2.19 heuristic (a block 16 bytes past a page boundary
 * has a {size, start} header before it); glibc 2.36 allocates the blocks with malloc and
 * keeps no such header, so a block that lands 16 bytes past a page gets bounds read from
 * whatever is there ("DTLS 9 at 0x28f-0x1400001391") and LeakSanitizer's scan at exit
 * crashes ("Tracer caught signal 11"; the server exits 1).  Seen in a test whose server
 * did nothing unusual, after an unrelated change moved allocations.  Without the
 * interception the blocks are ordinary heap blocks, found through glibc's dtv, so their
 * pointers are still scanned (GLIBC_TUNABLES=glibc.rtld.optional_static_tls=0 keeps them
 * out of the static TLS surplus, scripts/run-suites). */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return is_fetch_child() ? "intercept_strstr=0:intercept_tls_get_addr=0" : "intercept_tls_get_addr=0";
}

/* UBSan's own runtime has its own exit status: the same in the zygote's forks. */
const char *__ubsan_default_options(void);
const char *__ubsan_default_options(void)
{
	return is_zygote() ? "exitcode=" EXIT_STR : "";
}

void sanitizer_leak_check(void)
{
	__lsan_do_leak_check();
}

/* Its own frame, so that no copy of the pointer stays in a live one. */
__attribute__((noinline)) static void lose(void)
{
	char *volatile p = malloc(SANITIZER_TEST_LEAK_BYTES);

	if (p)
		memset(p, 0x5a, SANITIZER_TEST_LEAK_BYTES);
}

void sanitizer_test_leak(void)
{
	if (getenv("ACCORD_TEST_RUNNER_LEAK"))
		lose();
}

void __sanitizer_purge_allocator(void); /* libasan's; GCC ships no header declaring it */

bool sanitizer_give_back_memory(void)
{
	__sanitizer_purge_allocator();
	return true;
}
#else
void sanitizer_leak_check(void)
{
}

void sanitizer_test_leak(void)
{
}

bool sanitizer_give_back_memory(void)
{
	return false;
}
#endif
