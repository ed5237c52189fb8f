/* base/frame.c: frame_read over a real pipe — several frames in one read, a frame larger
 * than any single read, a stream that ends inside a frame, a length out of range. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/frame.h"

static void write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t w = write(fd, c, n);
		assert_true(w > 0);
		c += w;
		n -= (size_t)w;
	}
}

/* A child writes bytes into a pipe (more than its capacity, so it must run beside the
 * reader) and exits; the read end is returned. */
static int feed(const void *p, size_t n, pid_t *child)
{
	int fds[2];

	assert_int_equal(pipe(fds), 0);
	*child = fork();
	assert_true(*child >= 0);
	if (*child == 0) {
		close(fds[0]);
		write_all(fds[1], p, n);
		_exit(0);
	}
	close(fds[1]);
	return fds[0];
}

static void reap(pid_t child)
{
	int st;
	assert_int_equal(waitpid(child, &st, 0), child);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void encode(struct buf *b, json_t *v)
{
	struct err e;
	assert_int_equal(frame_encode(v, b, &e), 0);
	json_decref(v);
}

static void test_frames_in_one_read_then_end(void **state)
{
	struct buf b;
	struct frame_reader r;
	struct err e;
	json_t *v = NULL;
	pid_t child;
	int fd;

	(void)state;
	buf_init(&b, 0);
	encode(&b, json_pack("{s:s, s:i}", "type", "a", "n", 1));
	encode(&b, json_pack("{s:s, s:i}", "type", "b", "n", 2));
	fd = feed(b.data, b.len, &child);
	frame_reader_init(&r);
	assert_int_equal(frame_read(fd, &r, &v, &e), 1);
	assert_string_equal(json_string_value(json_object_get(v, "type")), "a");
	json_decref(v);
	assert_int_equal(frame_read(fd, &r, &v, &e), 1);
	assert_int_equal(json_integer_value(json_object_get(v, "n")), 2);
	json_decref(v);
	assert_int_equal(frame_read(fd, &r, &v, &e), 0); /* the end, between frames */
	frame_reader_cleanup(&r);
	close(fd);
	reap(child);
	buf_cleanup(&b);
}

/* 300 kB: many reads of one frame, each asking for what it still lacks. */
static void test_large_frame(void **state)
{
	struct buf b;
	struct frame_reader r;
	struct err e;
	size_t n = 300 * 1024;
	char *big = malloc(n + 1);
	json_t *v = NULL;
	pid_t child;
	int fd;

	(void)state;
	memset(big, 'x', n);
	big[n] = '\0';
	big[n / 2] = 'y';
	buf_init(&b, 0);
	encode(&b, json_pack("{s:s, s:s}", "type", "start", "data", big));
	encode(&b, json_pack("{s:s}", "type", "after"));
	fd = feed(b.data, b.len, &child);
	frame_reader_init(&r);
	assert_int_equal(frame_read(fd, &r, &v, &e), 1);
	assert_string_equal(json_string_value(json_object_get(v, "data")), big);
	json_decref(v);
	assert_int_equal(frame_read(fd, &r, &v, &e), 1);
	assert_string_equal(json_string_value(json_object_get(v, "type")), "after");
	json_decref(v);
	frame_reader_cleanup(&r);
	close(fd);
	reap(child);
	buf_cleanup(&b);
	free(big);
}

/* A stream of n bytes that frame_read must refuse with a message containing what. */
static void expect_error(const void *p, size_t n, const char *what)
{
	struct frame_reader r;
	struct err e = {0};
	json_t *v = NULL;
	pid_t child;
	int fd = feed(p, n, &child);

	frame_reader_init(&r);
	assert_true(frame_read(fd, &r, &v, &e) < 0);
	assert_null(v);
	assert_non_null(strstr(e.msg, what));
	frame_reader_cleanup(&r);
	close(fd);
	reap(child);
}

static void test_stream_ends_inside_a_frame(void **state)
{
	static const unsigned char part[] = {0, 0, 0, 100, '{', '"', 't'};

	(void)state;
	expect_error(part, sizeof part, "ended inside a frame");
}

static void test_length_out_of_range(void **state)
{
	static const unsigned char huge[] = {0x7f, 0xff, 0xff, 0xff, '{'};

	(void)state;
	expect_error(huge, sizeof huge, "outside");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frames_in_one_read_then_end),
	    cmocka_unit_test(test_large_frame),
	    cmocka_unit_test(test_stream_ends_inside_a_frame),
	    cmocka_unit_test(test_length_out_of_range),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
