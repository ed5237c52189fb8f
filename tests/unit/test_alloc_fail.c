/* Allocation-failure testing (issue 15 part 8), as SQLite's and curl's test suites do it:
 * every allocation Accord's own code makes goes through malloc/calloc/realloc/strdup/
 * strndup, which this binary wraps (Makefile: -Wl,--wrap=…), and jansson's through
 * json_set_alloc_funcs.  Each operation below runs once per allocation it makes, with
 * exactly that allocation failing: it must return an error (or succeed when the failure
 * was absorbed), never crash, and never leak (LeakSanitizer checks at exit).
 * Operations: the multipart parser, the start-request parser, a start held in memory (its
 * parts into a memdir, packed, unpacked, through a start frame and back; libarchive's own
 * allocations are not failed), the flow loader (YAML →
 * model; libyaml's own allocations are not failed), JSON parsing, the inventory query
 * translator, and store writes on a SQLite file (SQLite's own allocations are not failed;
 * the store's are).  And a flow run in the VM with each of jansson's allocations failing
 * in turn, then with each of all allocations failing in turn, in a child process (issue 23
 * item 11): the run must fail saying "Out of memory" (or stop by abort() after saying it),
 * or finish with every value whole — never finish with a list or a map that silently lost
 * elements. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sanitizer/common_interface_defs.h>
#include <jansson.h>

#include "api/process_start_req.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/memdir.h"
#include "base/oom.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/str.h"
#include "base/uuid.h"
#include "flow/mask.h"
#include "flow/model.h"
#include "flow/vm.h"
#include "http/multipart.h"
#include "inventory/dialect.h"
#include "store/inventories.h"
#include "store/orgs.h"
#include "store/processes.h"
#include "store/store.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);

static long fail_at = -1; /* the allocation (1-based) that fails; -1: none */
static long seen;
static int only_json; /* only jansson's allocations are counted and failed */

/* $ALLOC_FAIL_TRACE set: each failed allocation prints where it was made (to find the
 * code that did not handle it). */
static int fail_now(void)
{
	if (fail_at < 0 || ++seen != fail_at)
		return 0;
	if (getenv("ALLOC_FAIL_TRACE"))
		__sanitizer_print_stack_trace();
	return 1;
}

static int fail_own(void)
{
	return !only_json && fail_now();
}

void *__wrap_malloc(size_t n)
{
	return fail_own() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
	return fail_own() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
	return fail_own() ? NULL : __real_realloc(p, n);
}

char *__wrap_strdup(const char *s)
{
	return fail_own() ? NULL : __real_strdup(s);
}

char *__wrap_strndup(const char *s, size_t n)
{
	return fail_own() ? NULL : __real_strndup(s, n);
}

/* As the runner's (base/oom.c): a failure is counted. */
static void *json_alloc(size_t n)
{
	void *p = only_json ? (fail_now() ? NULL : __real_malloc(n)) : __wrap_malloc(n);

	if (!p)
		oom_note();
	return p;
}

/* Runs op with allocation 1, 2, … failing until a run makes fewer allocations than the
 * one set to fail: that run must succeed.  Every run that met a failure must return an
 * error or succeed; the count of runs is returned (at least one allocation was failed). */
static long each_failure(const char *name, int (*op)(void *), void *arg)
{
	long n;

	for (n = 1;; n++) {
		int rc;

		seen = 0;
		fail_at = n;
		rc = op(arg);
		fail_at = -1;
		if (seen < n) {
			if (rc != 0)
				fail_msg("%s failed without an allocation failure", name);
			break;
		}
		assert_true(rc <= 0);
	}
	if (n == 1)
		fail_msg("%s made no allocation", name);
	print_message("%s: %ld allocations, each failed once\n", name, n - 1);
	return n;
}

/* ---- parsers ---- */

#define CT "multipart/form-data; boundary=B0"
static const char BODY[] = "--B0\r\nContent-Disposition: form-data; name=\"arguments.x.y\"\r\n\r\nvalue\r\n"
			   "--B0\r\nContent-Disposition: form-data; name=\"tags\"\r\n\r\na,b,c\r\n"
			   "--B0\r\nContent-Disposition: form-data; name=\"request\"; filename=\"r.json\"\r\n"
			   "Content-Type: application/json\r\n\r\n{\"arguments\": {\"k\": [1, 2, {\"z\": true}]}}\r\n"
			   "--B0\r\nContent-Disposition: form-data; name=\"meta\"; filename=\"m.json\"\r\n"
			   "Content-Type: application/json\r\n\r\n{\"m\": \"v\"}\r\n"
			   "--B0\r\nContent-Disposition: form-data; name=\"concord.yml\"; filename=\"concord.yml\"\r\n"
			   "Content-Type: application/octet-stream\r\n\r\nflows: {default: [{log: hi}]}\r\n"
			   "--B0--\r\n";

static int op_multipart(void *arg)
{
	struct multipart mp;
	struct err e;
	int rc;
	(void)arg;

	rc = multipart_parse(str_from(CT), (struct str){BODY, sizeof BODY - 1}, &mp, &e);
	if (rc == 0)
		multipart_cleanup(&mp);
	return rc;
}

static int op_start_req(void *arg)
{
	struct multipart *mp = arg;
	struct start_req r;
	struct err e;
	int rc = start_req_parse(mp, 1800000000000LL, &r, &e);

	if (rc && seen < fail_at)
		print_message("start_req: %s\n", e.msg);
	start_req_cleanup(&r);
	return rc;
}

static const char FLOW[] = "configuration:\n"
			   "  arguments: {greeting: \"hi ${initiator.username}\", n: 3}\n"
			   "flows:\n"
			   "  default:\n"
			   "    - log: \"${greeting}\"\n"
			   "    - set: {list: [1, 2, 3], m: {a: {b: c}}}\n"
			   "    - if: ${n > 2 && list.size() == 3}\n"
			   "      then:\n"
			   "        - call: other\n"
			   "          in: {x: \"${m.a.b}\"}\n"
			   "          out: y\n"
			   "      else:\n"
			   "        - throw: \"no\"\n"
			   "    - task: log\n"
			   "      in: {msg: \"${y}\"}\n"
			   "      loop: {items: \"${list}\", parallelism: 2}\n"
			   "      retry: {times: 2, delay: 1}\n"
			   "      error:\n"
			   "        - log: failed\n"
			   "    - form: myForm\n"
			   "    - switch: ${n}\n"
			   "      3: [{log: three}]\n"
			   "      default: [{log: other}]\n"
			   "  other:\n"
			   "    - return\n"
			   "forms:\n"
			   "  myForm:\n"
			   "    - name: {type: string, label: \"Name\", pattern: \"[a-z]+\"}\n"
			   "    - age: {type: int, min: 1, max: 150}\n"
			   "profiles:\n"
			   "  p1: {configuration: {arguments: {n: 4}}}\n";

static int op_model(void *arg)
{
	struct err e;
	struct model *m;
	(void)arg;

	m = model_load_buffer("concord.yml", FLOW, sizeof FLOW - 1, &e);
	if (!m)
		return -1;
	model_free(m);
	return 0;
}

/* A start of plain parts held in memory, as process_start.c, start_staged.c, the supervisor
 * and the runner handle it. */
static int op_memdir(void *arg)
{
	const struct multipart *mp = arg;
	struct memdir md, back;
	struct err e;
	void *tar = NULL;
	size_t len = 0;
	json_t *frame = NULL;
	int rc;

	memdir_init(&md);
	memdir_init(&back);
	rc = start_req_files(mp, 1 << 20, &md, &e);
	if (rc == 0)
		rc = memdir_set(&md, "_main.json", "{}", 2, &e);
	if (rc == 0)
		rc = pack_files(&md, 1 << 20, &tar, &len, &e);
	if (rc == 0)
		rc = pack_tar_files(tar, len, 1 << 20, &back, &e);
	if (rc == 0 && !(frame = memdir_to_json(&back)))
		rc = -1;
	memdir_cleanup(&back);
	memdir_init(&back);
	if (rc == 0)
		rc = memdir_from_json(&back, frame, &e);
	if (rc == 0 && (back.n != md.n || back.bytes != md.bytes))
		fail_msg("the files changed on their way: %zu/%zu entries", back.n, md.n);
	json_decref(frame);
	free(tar);
	memdir_cleanup(&back);
	memdir_cleanup(&md);
	return rc;
}

static int op_json(void *arg)
{
	static const char J[] = "{\"a\": [1, 2.5, \"s\\u00e9\", {\"b\": null, \"c\": [true, false]}], \"d\": {}}";
	struct err e;
	json_t *v;
	(void)arg;

	v = jsonx_parse(J, sizeof J - 1, 64, &e);
	if (!v)
		return -1;
	json_decref(v);
	return 0;
}

static int op_inventory_query(void *arg)
{
	static const char Q[] = "with t as (select item_path, item_data->'x' as x from inventory_data i where "
				"i.item_data @> ?::jsonb and item_data->>'name' like 'a%') select x, count(*) from t "
				"group by x order by 2 desc limit 10";
	struct inv_translation t;
	struct err e;
	int rc;
	(void)arg;

	rc = inv_dialect_translate(Q, sizeof Q - 1, "inv_view", &t, &e);
	if (rc == 0)
		inv_translation_cleanup(&t);
	return rc;
}

static void test_parsers(void **state)
{
	struct multipart mp;
	struct err e;
	(void)state;

	assert_int_equal(multipart_parse(str_from(CT), (struct str){BODY, sizeof BODY - 1}, &mp, &e), 0);
	each_failure("multipart", op_multipart, NULL);
	each_failure("start_req", op_start_req, &mp);
	each_failure("memdir", op_memdir, &mp);
	multipart_cleanup(&mp);
	(void)op_model;
	each_failure("json", op_json, NULL);
	each_failure("inventory_query", op_inventory_query, NULL);
}

/* ---- the flow VM ---- */

static char vm_logged[8192];

static void vm_log_line(void *ctx, enum flow_level level, const char *msg)
{
	size_t n = strlen(vm_logged);
	(void)ctx, (void)level;
	str_fmt_cut(vm_logged + n, sizeof vm_logged - n, "%s\n", msg);
}

static int vm_no_server(void *ctx, const char *task, const char *method, json_t *args, json_t **out, char **suspend,
			struct err *e)
{
	(void)ctx, (void)method, (void)args, (void)out, (void)suspend;
	return err_set(e, ERR_UNAVAILABLE, "Task '%s' is not available", task);
}

static const struct flow_host_ops vm_ops = {.log = vm_log_line, .server_task = vm_no_server};
static const struct flow_host vm_host = {.ops = &vm_ops, .workdir = "/tmp"};

static const char VM_FLOW[] = "flows:\n"
			      "  default:\n"
			      "    - set: {l: [1, 2, 3]}\n"
			      "    - expr: \"${l.add(4)}\"\n"
			      "    - expr: \"${l.addAll([5, 6, 7, 8])}\"\n"
			      "    - call: inner\n"
			      "      in: {x: \"${l}\"}\n"
			      "      out: y\n"
			      "    - set:\n"
			      "        m: {k: \"${y.size()}\", s: \"${'a'.concat('b')}\", z: [\"${l[7]}\", 9]}\n"
			      "    - log: \"l is ${l} and m.s is ${m.s.toUpperCase()}\"\n"
			      "    - task: log\n"
			      "      in: {msg: \"task log ${l.size()}\", level: \"WARN\"}\n"
			      "    - block:\n"
			      "        - set: {q: \"${item * 2}\"}\n"
			      "      loop:\n"
			      "        items: \"${l.subList(0, 3)}\"\n"
			      "      out: q\n"
			      "    - try:\n"
			      "        - throw: \"boom ${l[0]}\"\n"
			      "      error:\n"
			      "        - set: {w: {caught: \"${lastError.message}\", doubled: \"${q}\", up: "
			      "\"${'x,y'.split(',')}\", st: \"${l.stream().filter(v -> v > 6).toList()}\"}}\n"
			      "    - if: \"${w.caught.contains('boom')}\"\n"
			      "      then:\n"
			      "        - switch: \"${m.s}\"\n"
			      "          ab:\n"
			      "            - set: {w2: \"${w.doubled}\"}\n"
			      "  inner:\n"
			      "    - set: {y: \"${x.subList(0, 8)}\"}\n";
static const char VM_OUT[] =
    "{\"l\": [1, 2, 3, 4, 5, 6, 7, 8], \"y\": [1, 2, 3, 4, 5, 6, 7, 8],"
    " \"m\": {\"k\": 8, \"s\": \"ab\", \"z\": [8, 9]},"
    " \"w\": {\"caught\": \"boom 1\", \"doubled\": [2, 4, 6], \"up\": [\"x\", \"y\"], \"st\": [7, 8]},"
    " \"w2\": [2, 4, 6]}";

/* How a run of m ended: 0 finished with every value whole, 1 failed saying it ran out of
 * memory, 2 anything else (why says what). */
static int vm_outcome(const struct model *m, char *why, size_t why_cap)
{
	struct vm *vm = vm_new(m, &vm_host);
	json_t *names = NULL, *out = NULL, *want = NULL;
	enum vm_status st = VM_FAILED;
	long at = fail_at;
	struct err e = {0};
	int rc = 1;

	vm_logged[0] = 0;
	if (!vm) /* its caller says "out of memory" */
		return 1;
	if (vm_start(vm, "default", NULL, NULL, &e) == 0)
		st = vm_run(vm);
	fail_at = -1; /* the results are read whole */
	if (st == VM_FINISHED) {
		names = json_pack("[sssss]", "l", "y", "m", "w", "w2");
		out = vm_out_vars(vm, names);
		want = json_loads(VM_OUT, 0, NULL);
		rc = json_equal(out, want) ? 0 : 2;
		if (rc) {
			char *got = json_dumps(out, JSON_COMPACT);
			str_fmt_cut(why, why_cap, "allocation %ld failed: the flow FINISHED with %s", at,
				    got ? got : "(null)");
			free(got);
		}
	} else if (!strstr(vm_logged, "Out of memory") && !strstr(vm_logged, "out of memory") &&
		   !strstr(e.msg, "Out of memory") && !strstr(e.msg, "out of memory")) {
		str_fmt_cut(why, why_cap, "allocation %ld failed: status %d without saying it ran out of memory: %s%s",
			    at, (int)st, e.msg, vm_logged);
		rc = 2;
	}
	json_decref(want);
	json_decref(names);
	json_decref(out);
	vm_free(vm);
	fail_at = at;
	return rc;
}

/* 0: finished with every value whole; -1: failed saying it ran out of memory. */
static int op_vm(void *arg)
{
	char why[8192];
	int rc = vm_outcome(arg, why, sizeof why);

	if (rc == 2)
		fail_msg("%s", why);
	return -rc;
}

/* op_vm in a child process, for the runner's allocations that stop it (a thread or frame
 * table that cannot grow, an expression's parse pool: base/oom.h): such a child must die by
 * abort() after saying "Out of memory" on stderr, as the runner does. */
static int op_vm_apart(void *arg)
{
	char why[8192], said[65536];
	long *child_seen = mmap(NULL, sizeof *child_seen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int fds[2], status = 0, rc;
	ssize_t got = 0, n;
	pid_t pid;

	assert_true(child_seen != MAP_FAILED);
	assert_int_equal(pipe(fds), 0);
	*child_seen = fail_at; /* an abort met the failure */
	if ((pid = fork()) == 0) {
		dup2(fds[1], 2);
		rc = vm_outcome(arg, why, sizeof why);
		*child_seen = seen;
		if (rc == 2) /* on the test's own output: stderr is read by the parent */
			printf("%s\n", why);
		fflush(stdout);
		_exit(rc);
	}
	assert_true(pid > 0);
	close(fds[1]);
	while (got < (ssize_t)sizeof said - 1 && (n = read(fds[0], said + got, sizeof said - 1 - (size_t)got)) > 0)
		got += n;
	said[got] = 0;
	close(fds[0]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	seen = *child_seen;
	munmap(child_seen, sizeof *child_seen);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT && strstr(said, "Out of memory"))
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status) > 1)
		fail_msg("allocation %ld failed: the run ended with status %d: %s", fail_at, status,
			 said + (got > 2000 ? got - 2000 : 0));
	return -WEXITSTATUS(status);
}

static void test_vm(void **state)
{
	struct err e;
	struct model *m = model_load_buffer("concord.yml", VM_FLOW, sizeof VM_FLOW - 1, &e);
	(void)state;

	if (!m)
		fail_msg("load: %s", e.msg);
	assert_int_equal(op_vm(m), 0); /* the flow itself is right */
	only_json = 1;
	each_failure("vm (jansson's allocations)", op_vm, m);
	only_json = 0;
	each_failure("vm (every allocation)", op_vm_apart, m);
	model_free(m);
}

/* ---- the sensitive values ---- */

/* A value that could not be kept is never printed: a text holding it is masked whole. */
static int op_mask(void *arg)
{
	struct mask m = {0};
	long at = fail_at;
	bool changed;
	char *text;
	int rc;
	(void)arg;

	mask_add(&m, "s3cr3t-value");
	mask_add(&m, "other");
	fail_at = -1; /* the masking itself may allocate */
	text = mask_text(&m, "a s3cr3t-value and other", &changed);
	fail_at = at;
	assert_true(changed);
	if (text && (strstr(text, "s3cr3t") || strstr(text, "other")))
		fail_msg("allocation %ld failed: a sensitive value was printed: %s", at, text);
	rc = m.lost ? -1 : 0;
	free(text);
	mask_cleanup(&m);
	return rc;
}

static void test_mask(void **state)
{
	(void)state;
	assert_int_equal(op_mask(NULL), 0);
	each_failure("mask", op_mask, NULL);
}

/* ---- the store ---- */

struct store_ctx {
	struct store *s;
	int n;
};

static int op_store_writes(void *arg)
{
	struct store_ctx *x = arg;
	struct store_conn *c;
	struct process_new pn = {0};
	struct process p;
	struct org o = {.visibility = "PUBLIC"};
	struct err e;
	int rc;

	if (!(c = store_conn(x->s, &e)))
		return -1;
	uuid_v4(o.id);
	assert_int_equal(str_fmt(o.name, sizeof o.name, "org-%d", x->n++), 0);
	if ((rc = store_org_insert(c, &o, "{\"m\": 1}", NULL, &e)))
		return rc;
	uuid_v4(pn.p.instance_id);
	assert_int_equal(str_fmt(pn.p.org_id, sizeof pn.p.org_id, "0fac1b18-d179-11e7-b3e7-d7df4543ed4f"), 0);
	assert_int_equal(str_fmt(pn.p.initiator_id, sizeof pn.p.initiator_id, "230c5c9c-d9a7-11e6-bcfd-bb681c07b26c"),
			 0);
	assert_int_equal(str_fmt(pn.p.initiator, sizeof pn.p.initiator, "admin"), 0);
	assert_int_equal(str_fmt(pn.p.entry_point, sizeof pn.p.entry_point, "default"), 0);
	pn.p.tags = json_pack("[ss]", "t1", "t2");
	pn.p.meta = json_pack("{s:s, s:i}", "k", "v", "n", 1);
	pn.payload = "tar";
	pn.payload_len = 3;
	rc = pn.p.tags && pn.p.meta ? store_process_create(c, &pn, &e) : -1;
	json_decref(pn.p.tags);
	json_decref(pn.p.meta);
	if (rc)
		return rc;
	rc = store_process_get(c, pn.p.instance_id, &p, &e);
	if (rc == 0)
		store_process_cleanup(&p);
	if (rc == 0)
		rc = store_process_transition(c, pn.p.instance_id, PS_BIT(PS_ENQUEUED), PS_CANCELLED, &e);
	return rc;
}

/* An inventory's single put, then a bulk write of three items (one replaced, with its
 * postings), each all or nothing. */
static int op_inventory_writes(void *arg)
{
	struct store_ctx *x = arg;
	struct store_conn *c;
	struct org o = {.visibility = "PUBLIC"};
	struct inventory inv = {.visibility = "PUBLIC"};
	json_t *a = json_pack("{s:s, s:[i,i], s:{s:b}}", "env", "prod", "n", 1, 2, "o", "k", 1);
	json_t *b = json_pack("{s:s, s:n}", "env", "test", "x");
	struct inventory_item_in items[] = {{"h/a", a}, {"h/b", b}, {"h/a", b}};
	struct err e;
	size_t created, bad;
	int rc = -1;

	if (!a || !b || !(c = store_conn(x->s, &e)))
		goto out;
	uuid_v4(o.id);
	uuid_v4(inv.id);
	assert_int_equal(str_fmt(o.name, sizeof o.name, "iorg-%d", x->n++), 0);
	assert_int_equal(str_fmt(inv.name, sizeof inv.name, "inv"), 0);
	assert_int_equal(str_fmt(inv.org_id, sizeof inv.org_id, "%s", o.id), 0);
	if ((rc = store_org_insert(c, &o, NULL, NULL, &e)) || (rc = store_inventory_insert(c, &inv, &e)) ||
	    (rc = store_inventory_item_put(c, inv.rid, "h/a", b, &e)))
		goto out;
	rc = store_inventory_items_put(c, inv.rid, items, 3, 10000, &created, &bad, &e);
	assert_true(rc != 0 || created == 1);
out:
	json_decref(a);
	json_decref(b);
	return rc;
}

static void test_store(void **state)
{
	char dir[] = "/tmp/accord-alloc-XXXXXX", url[128];
	struct store_ctx x = {0};
	struct err e;
	(void)state;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(str_fmt(url, sizeof url, "sqlite:%s/accord.db", dir), 0);
	x.s = store_open(url, &e);
	assert_non_null(x.s);
	each_failure("store_writes", op_store_writes, &x);
	each_failure("inventory_writes", op_inventory_writes, &x);
	store_close(x.s);
	assert_int_equal(path_remove_tree(dir, &e), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parsers),
	    cmocka_unit_test(test_store),
	    cmocka_unit_test(test_vm),
	    cmocka_unit_test(test_mask),
	};

	limits_defaults();
	json_set_alloc_funcs(json_alloc, free);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
