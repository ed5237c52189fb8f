#include "inventory/json.h"

#include <stdlib.h>
#include <string.h>

#include "inventory/json_text.h"
#include "store/sqlite_api.h"

/* SQLite's subtype for JSON values (what its own JSON functions set and check). */
#define JSON_SUBTYPE 74

#define DECODE_FLAGS (JSON_DECODE_ANY | JSON_ALLOW_NUL)

static bool is_container(const json_t *v)
{
	return json_is_object(v) || json_is_array(v);
}

static long double num_value(const json_t *v)
{
	return json_is_integer(v) ? (long double)json_integer_value(v) : (long double)json_real_value(v);
}

static bool scalar_eq(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b)) {
		if (json_is_integer(a) && json_is_integer(b))
			return json_integer_value(a) == json_integer_value(b);
		/* long double holds every int64 and every double exactly */
		return num_value(a) == num_value(b);
	}
	if (json_typeof(a) != json_typeof(b))
		return false;
	if (json_is_string(a))
		return json_string_length(a) == json_string_length(b) &&
		       memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
	return true; /* true, false, null */
}

static bool deep_contains(const json_t *a, const json_t *b);

static bool value_contains(const json_t *a, const json_t *b)
{
	if (is_container(a) || is_container(b))
		return json_typeof(a) == json_typeof(b) && deep_contains(a, b);
	return scalar_eq(a, b);
}

static bool array_has(const json_t *a, const json_t *eb)
{
	size_t i;
	const json_t *ea;

	json_array_foreach(a, i, ea)
	{
		if (is_container(eb) ? json_typeof(ea) == json_typeof(eb) && deep_contains(ea, eb)
				     : !is_container(ea) && scalar_eq(ea, eb))
			return true;
	}
	return false;
}

static bool deep_contains(const json_t *a, const json_t *b)
{
	const char *key;
	size_t key_len, i;
	const json_t *vb;

	if (json_is_object(b)) {
		if (!json_is_object(a))
			return false;
		json_object_keylen_foreach((json_t *)b, key, key_len, vb)
		{
			const json_t *va = json_object_getn(a, key, key_len);
			if (!va || !value_contains(va, vb))
				return false;
		}
		return true;
	}
	if (json_is_array(b)) {
		if (!json_is_array(a))
			return false;
		json_array_foreach(b, i, vb)
		{
			if (!array_has(a, vb))
				return false;
		}
		return true;
	}
	return !is_container(a) && scalar_eq(a, b);
}

bool inv_json_contains(const json_t *a, const json_t *b)
{
	if (json_is_array(a) && !is_container(b))
		return array_has(a, b);
	return deep_contains(a, b);
}

/* ---- SQL functions ---- */

static json_t *arg_json(sqlite3_context *ctx, sqlite3_value *v)
{
	const char *s = (const char *)sqlite.value_text(v);
	int n = sqlite.value_bytes(v);
	json_t *j;

	if (!s) {
		sqlite.result_error_nomem(ctx);
		return NULL;
	}
	j = json_loadb(s, (size_t)n, DECODE_FLAGS, NULL);
	if (!j)
		sqlite.result_error(ctx, "json_contains: argument is not valid JSON", -1);
	return j;
}

static const char *skip_ws(const char *s)
{
	while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
		s++;
	return s;
}

static void aux_free(void *p)
{
	json_decref(p);
}

static void fn_json_contains(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	json_t *a, *b;

	(void)argc;
	if (sqlite.value_type(argv[0]) == SQLITE_NULL || sqlite.value_type(argv[1]) == SQLITE_NULL)
		return;
	b = sqlite.get_auxdata(ctx, 1);
	if (!b) {
		if (!(b = arg_json(ctx, argv[1])))
			return;
		sqlite.set_auxdata(ctx, 1, b, aux_free);
		/* SQLite may have freed it already when it will not keep it */
		b = sqlite.get_auxdata(ctx, 1);
	}
	if (b && json_is_object(b) && json_object_size(b) == 0 && sqlite.value_type(argv[0]) == SQLITE_TEXT) {
		/* {} is contained by every object: no need to parse a stored item */
		const char *s = skip_ws((const char *)sqlite.value_text(argv[0]));
		if (*s == '{')
			return sqlite.result_int(ctx, 1);
	}
	if (b && sqlite.value_type(argv[0]) == SQLITE_TEXT) {
		/* decided on the text when it can, without building the item (json_text.h) */
		const char *s = (const char *)sqlite.value_text(argv[0]);
		int in = s ? inv_json_text_contains(s, (size_t)sqlite.value_bytes(argv[0]), b) : -1;
		if (in >= 0)
			return sqlite.result_int(ctx, in);
	}
	if (!(a = arg_json(ctx, argv[0])))
		return;
	if (!b) {
		if (!(b = arg_json(ctx, argv[1]))) {
			json_decref(a);
			return;
		}
		sqlite.result_int(ctx, inv_json_contains(a, b));
		json_decref(b);
	} else {
		sqlite.result_int(ctx, inv_json_contains(a, b));
	}
	json_decref(a);
}

static void fn_pg_text(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *s, *t;
	json_t *j;

	(void)argc;
	if (sqlite.value_type(argv[0]) == SQLITE_NULL)
		return;
	s = (const char *)sqlite.value_text(argv[0]);
	if (!s)
		return sqlite.result_error_nomem(ctx);
	t = skip_ws(s);
	if (strncmp(t, "null", 4) == 0 && *skip_ws(t + 4) == '\0')
		return;
	if (*t != '"')
		return sqlite.result_text(ctx, s, sqlite.value_bytes(argv[0]), SQLITE_TRANSIENT);
	j = json_loadb(s, (size_t)sqlite.value_bytes(argv[0]), DECODE_FLAGS, NULL);
	if (!j || !json_is_string(j)) {
		json_decref(j);
		return sqlite.result_error(ctx, "->>: invalid JSON", -1);
	}
	sqlite.result_text(ctx, json_string_value(j), (int)json_string_length(j), SQLITE_TRANSIENT);
	json_decref(j);
}

static void fn_pg_bool(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	static const char *const yes[] = {"t", "true", "y", "yes", "on", "1"};
	static const char *const no[] = {"f", "false", "n", "no", "off", "0"};
	char w[8];
	const char *s;
	size_t n = 0;

	(void)argc;
	switch (sqlite.value_type(argv[0])) {
	case SQLITE_NULL:
		return;
	case SQLITE_INTEGER:
	case SQLITE_FLOAT:
		return sqlite.result_int(ctx, sqlite.value_double(argv[0]) != 0);
	default:
		break;
	}
	s = skip_ws((const char *)sqlite.value_text(argv[0]) ? (const char *)sqlite.value_text(argv[0]) : "");
	while (s[n] && s[n] != ' ' && n < sizeof(w) - 1) {
		w[n] = (s[n] >= 'A' && s[n] <= 'Z') ? (char)(s[n] - 'A' + 'a') : s[n];
		n++;
	}
	w[n] = '\0';
	if (*skip_ws(s + n) == '\0') {
		for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
			if (strcmp(w, yes[i]) == 0)
				return sqlite.result_int(ctx, 1);
			if (strcmp(w, no[i]) == 0)
				return sqlite.result_int(ctx, 0);
		}
	}
	sqlite.result_error(ctx, "invalid input syntax for type boolean", -1);
}

static void result_json(sqlite3_context *ctx, const char *s, int n)
{
	sqlite.result_text(ctx, s, n, SQLITE_TRANSIENT);
	sqlite.result_subtype(ctx, JSON_SUBTYPE);
}

static void fn_json_bool(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	if (sqlite.value_type(argv[0]) == SQLITE_NULL)
		return;
	if (sqlite.value_double(argv[0]) != 0)
		result_json(ctx, "true", 4);
	else
		result_json(ctx, "false", 5);
}

static void fn_json_value(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *type = (const char *)sqlite.value_text(argv[1]);
	const char *v;
	json_t *j;
	char *dump;

	(void)argc;
	if (!type || strcmp(type, "null") == 0)
		return result_json(ctx, "null", 4);
	if (strcmp(type, "true") == 0 || strcmp(type, "false") == 0)
		return result_json(ctx, type, -1);
	v = (const char *)sqlite.value_text(argv[0]);
	if (!v)
		return result_json(ctx, "null", 4);
	if (strcmp(type, "text") != 0)
		return result_json(ctx, v, sqlite.value_bytes(argv[0]));
	j = json_stringn_nocheck(v, (size_t)sqlite.value_bytes(argv[0]));
	dump = j ? json_dumps(j, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	if (dump)
		result_json(ctx, dump, -1);
	else
		sqlite.result_error_nomem(ctx);
	free(dump);
	json_decref(j);
}

static void fn_jsonb_typeof(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *s, *t;

	(void)argc;
	if (sqlite.value_type(argv[0]) == SQLITE_NULL)
		return;
	if (sqlite.value_type(argv[0]) != SQLITE_TEXT)
		return sqlite.result_text(ctx, "number", -1, SQLITE_STATIC);
	s = skip_ws((const char *)sqlite.value_text(argv[0]));
	switch (*s) {
	case '{':
		t = "object";
		break;
	case '[':
		t = "array";
		break;
	case '"':
		t = "string";
		break;
	case 't':
	case 'f':
		t = "boolean";
		break;
	case 'n':
		t = "null";
		break;
	default:
		t = "number";
		break;
	}
	sqlite.result_text(ctx, t, -1, SQLITE_STATIC);
}

int inv_json_register(sqlite3 *db, struct err *e)
{
	static const struct {
		const char *name;
		int n_args;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} fns[] = {
	    {"json_contains", 2, fn_json_contains},  {"accord_pg_text", 1, fn_pg_text},
	    {"accord_pg_bool", 1, fn_pg_bool},	     {"accord_json_bool", 1, fn_json_bool},
	    {"accord_json_value", 2, fn_json_value}, {"accord_jsonb_typeof", 1, fn_jsonb_typeof},
	};

	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		int rc = sqlite.create_function_v2(db, fns[i].name, fns[i].n_args,
						   SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL,
						   fns[i].fn, NULL, NULL, NULL);
		if (rc != SQLITE_OK)
			return err_set(e, ERR_INTERNAL, "registering %s: %s", fns[i].name, sqlite.errmsg(db));
	}
	return 0;
}
