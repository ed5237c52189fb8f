#include "flow/form_validate.h"

#include <math.h>
#include <regex.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/oom.h"
#include "base/str.h"
#include "flow/form_messages.h"
#include "flow/value.h"

#define TYPE_MAX 64

struct field {
	const json_t *def;
	const char *name;
	const char *label;	/* the label, else the name: how Concord's messages name a field */
	const json_t *messages; /* the form's own messages (flow/form_messages.h), or NULL */
	char type[TYPE_MAX];	/* without the cardinality suffix */
	char card;		/* 0, '?', '+' or '*' */
};

size_t form_base_type_len(const char *type)
{
	size_t len = type ? strlen(type) : 0;
	return len && strchr("?+*", type[len - 1]) ? len - 1 : len;
}

const char *form_cardinality(const char *type)
{
	size_t len = type ? strlen(type) : 0;
	switch (len ? type[len - 1] : 0) {
	case '?':
		return "ONE_OR_NONE";
	case '+':
		return "AT_LEAST_ONE";
	case '*':
		return "ANY";
	default:
		return "ONE_AND_ONLY_ONE";
	}
}

/* The field's error of kind into *msg (NEW): the form's own message for it when there is
 * one (formatted with args), else Concord's default text, fmt.  Returns FORM_INVALID. */
static int report(const struct field *f, const char *kind, const char *const *args, size_t n, json_t **msg,
		  const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int report(const struct field *f, const char *kind, const char *const *args, size_t n, json_t **msg,
		  const char *fmt, ...)
{
	char text[512];
	va_list ap;

	if (form_message(f->messages, f->name, kind, args, n, msg))
		return FORM_INVALID;
	va_start(ap, fmt);
	str_vfmt_cut(text, sizeof text, fmt, ap);
	va_end(ap);
	*msg = json_string(text);
	return FORM_INVALID;
}

static bool coerce_int(const json_t *v, const char *text, json_t **out)
{
	int64_t n;
	struct err ignore;
	if (json_is_integer(v)) {
		*out = json_integer(json_integer_value(v));
		return true;
	}
	if (str_to_i64(str_from(text), INT64_MIN, INT64_MAX, &n, "value", &ignore) < 0)
		return false;
	*out = json_integer(n);
	return true;
}

static bool coerce_text(const struct field *f, const json_t *v, const char *text, json_t **out)
{
	struct err ignore;
	if (strcmp(f->type, "int") == 0)
		return coerce_int(v, text, out);
	if (strcmp(f->type, "decimal") == 0) {
		double d;
		/* NaN, Infinity and 1e99999 (read as infinite) have no JSON form: refused */
		if (value_to_double(v, &d, &ignore) < 0 || !isfinite(d))
			return false;
		*out = json_real(d);
		return true;
	}
	if (strcmp(f->type, "boolean") == 0) {
		if (json_is_boolean(v)) {
			*out = json_boolean(json_is_true(v));
			return true;
		}
		if (!cstr_ieq(text, "true") && !cstr_ieq(text, "false"))
			return false;
		*out = json_boolean(cstr_ieq(text, "true"));
		return true;
	}
	if (strcmp(f->type, "date") == 0 || strcmp(f->type, "dateTime") == 0) {
		int64_t ms;
		char iso[DT_ISO_LEN];
		if (dt_parse_iso(text, strlen(text), false, &ms, f->name, &ignore) < 0)
			return false;
		dt_format_iso(ms, iso);
		*out = json_string(iso);
		return true;
	}
	*out = json_string(text);
	return true;
}

/* "Label" or "Label [2]" for the idx-th value of a list (idx < 0: a single value). */
static void field_label(const struct field *f, int idx, char *out, size_t n)
{
	if (idx < 0)
		str_fmt_cut(out, n, "%s", f->label);
	else
		str_fmt_cut(out, n, "%s [%d]", f->label, idx);
}

/* Concord's name of a type in "expected an integer value, got x", and the kind of that
 * error (*kind) for a form's own messages. */
static const char *expected_of(const struct field *f, const char **kind)
{
	static const char *const types[][3] = {{"int", "an integer", "expectedInteger"},
					       {"decimal", "a decimal", "expectedDecimal"},
					       {"boolean", "a boolean", "expectedBoolean"},
					       {"date", "a date", "expectedDate"},
					       {"dateTime", "a date", "expectedDate"}};

	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		if (strcmp(f->type, types[i][0]) == 0) {
			*kind = types[i][2];
			return types[i][1];
		}
	*kind = "expectedString";
	return "a string";
}

/* One value converted to the field's type: 0 with *out NEW, FORM_INVALID with *msg, < 0. */
static int coerce(const struct field *f, int idx, const json_t *v, json_t **out, json_t **msg, struct err *e)
{
	char *text = json_is_string(v) ? strdup(json_string_value(v)) : value_to_cstr(v, NULL);
	char label[200];
	int rc = 0;
	if (!text)
		return oom_fail(e);
	field_label(f, idx, label, sizeof label);
	if (json_is_object(v) || json_is_array(v) || !coerce_text(f, v, text, out)) {
		const char *kind, *what = expected_of(f, &kind), *args[] = {label, text};
		rc = report(f, kind, args, 2, msg, "%s: expected %s value, got %.200s", label, what, text);
	}
	free(text);
	return rc;
}

static bool allowed(const json_t *allow, const json_t *v)
{
	size_t i;
	json_t *a;
	if (!allow || json_is_null(allow) || (json_is_array(allow) && json_array_size(allow) == 0))
		return true;
	if (!json_is_array(allow))
		return value_equals(allow, v);
	json_array_foreach(allow, i, a)
	{
		if (value_equals(a, v) ||
		    (json_is_string(v) && json_is_string(a) && strcmp(json_string_value(a), json_string_value(v)) == 0))
			return true;
	}
	return false;
}

/* The whole value must match the pattern, as Java's String.matches. */
static bool matches(const char *pattern, const char *text)
{
	regex_t re;
	char *full = NULL;
	bool ok = false;
	if (asprintf(&full, "^(%s)$", pattern) < 0)
		return false;
	if (regcomp(&re, full, REG_EXTENDED | REG_NOSUB) == 0) {
		ok = regexec(&re, text, 0, NULL, 0) == 0;
		regfree(&re);
	}
	free(full);
	return ok;
}

/* The text of v into out (capacity n), as Concord prints values ("[a, b]", "5.0"), cut
 * short with "…" when it does not fit. */
static void value_text(char *out, size_t n, const json_t *v)
{
	char *text = value_to_cstr(v, NULL);

	if (str_fmt(out, n, "%s", text ? text : "?") && n > 4)
		memcpy(out + n - 4, "…", 4);
	free(text);
}

/* A bound as Concord prints it: a decimal field's as a decimal ("1.0"). */
static void bound_text(const struct field *f, const json_t *b, char *out, size_t n)
{
	json_t *d = strcmp(f->type, "decimal") == 0 && json_is_integer(b) ? json_real((double)json_integer_value(b))
									  : json_incref((json_t *)b);
	value_text(out, n, d);
	json_decref(d);
}

/* "Label: value '150' must be within 21 and 100 (inclusive)", "… less or equal than 100",
 * "… equal or greater than 21" (Concord's DefaultFormValidatorLocale). */
static int out_of_range(const struct field *f, const char *label, const json_t *min, const json_t *max, const json_t *v,
			json_t **msg)
{
	char lo[64] = "null", hi[64] = "null", given[64] = "", bounds[160];
	const char *args[] = {label, given, bounds, lo, hi};

	value_text(given, sizeof given, v);
	if (json_is_number(min))
		bound_text(f, min, lo, sizeof lo);
	if (json_is_number(max))
		bound_text(f, max, hi, sizeof hi);
	if (json_is_number(min) && json_is_number(max))
		str_fmt_cut(bounds, sizeof bounds, "within %s and %s (inclusive)", lo, hi);
	else if (json_is_number(min))
		str_fmt_cut(bounds, sizeof bounds, "equal or greater than %s", lo);
	else
		str_fmt_cut(bounds, sizeof bounds, "less or equal than %s", hi);
	return report(f, strcmp(f->type, "int") == 0 ? "integerRangeError" : "decimalRangeError", args, 5, msg,
		      "%s: value '%s' must be %s", label, given, bounds);
}

static int check(const struct field *f, int idx, const json_t *v, json_t **msg)
{
	const json_t *min = json_object_get(f->def, "min"), *max = json_object_get(f->def, "max");
	const json_t *allow = json_object_get(f->def, "allow");
	const char *pattern = json_string_value(json_object_get(f->def, "pattern"));
	char label[200], given[200], list[300];
	double d;
	struct err ignore;

	field_label(f, idx, label, sizeof label);
	value_text(given, sizeof given, v);
	if (!allowed(allow, v)) {
		const char *args[] = {label, given, list};
		value_text(list, sizeof list, allow);
		return report(f, "valueNotAllowed", args, 3, msg, "%s: value '%s' is not allowed, valid values: %s",
			      label, given, list);
	}
	if (pattern && json_is_string(v) && !matches(pattern, json_string_value(v))) {
		const char *args[] = {label, given, pattern};
		return report(f, "doesntMatchPattern", args, 3, msg, "%s: value '%s' doesn't match pattern '%.200s'",
			      label, given, pattern);
	}
	if (json_is_number(v) && value_to_double(v, &d, &ignore) == 0 &&
	    ((json_is_number(min) && d < json_number_value(min)) ||
	     (json_is_number(max) && d > json_number_value(max))))
		return out_of_range(f, label, min, max, v, msg);
	return 0;
}

static int one(const struct field *f, int idx, const json_t *v, json_t **out, json_t **msg, struct err *e)
{
	int rc = coerce(f, idx, v, out, msg, e);
	if (rc == 0 && (rc = check(f, idx, *out, msg)) != 0) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

static int many(const struct field *f, const json_t *v, json_t **out, json_t **msg, struct err *e)
{
	json_t *list = json_array(), *x, *res = NULL;
	size_t i;
	int rc = 0;
	if (!json_is_array(v)) {
		if ((rc = one(f, 0, v, &res, msg, e)) == 0)
			json_array_append_new(list, res);
	} else {
		json_array_foreach(v, i, x)
		{
			if ((rc = one(f, (int)i, x, &res, msg, e)) != 0)
				break;
			json_array_append_new(list, res);
		}
	}
	if (rc != 0) {
		json_decref(list);
		return rc;
	}
	*out = list;
	return 0;
}

static bool empty(const json_t *v)
{
	return !v || json_is_null(v) || (json_is_array(v) && json_array_size(v) == 0);
}

/* "Label: Invalid cardinality, expected a single value" for the value v (NULL: none). */
static int bad_cardinality(const struct field *f, const json_t *v, json_t **msg)
{
	static const char *const spelt[][2] = {{"", "a single value"},
					       {"?", "a single optional value"},
					       {"+", "at least a single value"},
					       {"*", "any number of values"}};
	char given[200] = "null", type[2] = {f->card, 0};
	const char *spell = spelt[0][1], *args[4];

	for (size_t i = 0; i < 4; i++)
		if (strcmp(type, spelt[i][0]) == 0)
			spell = spelt[i][1];
	if (v && !json_is_null(v))
		value_text(given, sizeof given, v);
	args[0] = f->label;
	args[1] = spell;
	args[2] = form_cardinality(type);
	args[3] = given;
	return report(f, "invalidCardinality", args, 4, msg, "%s: Invalid cardinality, expected %s", f->label, spell);
}

static int field_value(const struct field *f, const json_t *given, const json_t *dflt, json_t **out, json_t **msg,
		       struct err *e)
{
	const json_t *v = json_is_true(json_object_get(f->def, "readonly")) || empty(given) ? dflt : given;
	const json_t *allow = json_object_get(f->def, "allow");

	/* A required field left empty whose `allow` is one value takes it (Concord). */
	if (empty(v) && f->card != '?' && f->card != '*' && allow && !json_is_null(allow) &&
	    (!json_is_array(allow) || json_array_size(allow) == 1))
		v = json_is_array(allow) ? json_array_get(allow, 0) : allow;
	if (empty(v)) {
		if (f->card == '?' || f->card == '*') {
			*out = f->card == '*' ? json_array() : json_null();
			return 0;
		}
		return bad_cardinality(f, v, msg);
	}
	if (f->card == '+' || f->card == '*')
		return many(f, v, out, msg, e);
	if (json_is_array(v)) {
		if (json_array_size(v) > 1)
			return bad_cardinality(f, v, msg);
		v = json_array_get(v, 0);
	}
	return one(f, -1, v, out, msg, e);
}

static int field_parse(const json_t *def, size_t i, struct field *f, struct err *e)
{
	const char *type = json_string_value(json_object_get(def, "type"));
	size_t len;
	f->def = def;
	f->name = json_string_value(json_object_get(def, "name"));
	f->label = json_string_value(json_object_get(def, "label"));
	if (!f->label)
		f->label = f->name;
	if (!f->name || !type)
		return err_set(e, ERR_INVALID, "form field %zu has no name or type", i);
	len = form_base_type_len(type);
	if (len == 0 || len >= sizeof f->type)
		return err_set(e, ERR_INVALID, "form field '%s' has an invalid type '%.80s'", f->name, type);
	memcpy(f->type, type, len);
	f->type[len] = 0;
	f->card = type[len];
	return 0;
}

static bool names_a_field(const json_t *fields, const char *k)
{
	const json_t *def;
	size_t i;

	json_array_foreach(fields, i, def)
	{
		const char *name = json_string_value(json_object_get(def, "name"));
		if (name && strcmp(name, k) == 0)
			return true;
	}
	return false;
}

/* The form's `values` that name no field ("additional data", Concord's docs say) are kept
 * in the result beside the fields' values. */
static int keep_extra_values(json_t *ok, const json_t *fields, const json_t *values)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)values, k, v)
	{
		if (!names_a_field(fields, k) && json_object_set(ok, k, v) < 0)
			return -1;
	}
	return 0;
}

int form_validate(const json_t *form, const json_t *submitted, json_t **out, struct err *e)
{
	const json_t *fields = json_object_get(form, "fields"), *values = json_object_get(form, "values"), *def;
	json_t *ok = json_object(), *errors = json_object();
	size_t i;
	int rc = 0;

	*out = NULL;
	if (!json_is_array(fields)) {
		rc = err_set(e, ERR_INVALID, "the form has no list of fields");
		goto out;
	}
	json_array_foreach(fields, i, def)
	{
		struct field f = {0};
		json_t *v = NULL, *msg = NULL;
		const json_t *dflt;
		if ((rc = field_parse(def, i, &f, e)) < 0)
			goto out;
		f.messages = json_object_get(form, "messages");
		dflt = json_object_get(values, f.name);
		if (!dflt)
			dflt = json_object_get(def, "value");
		rc = field_value(&f, json_object_get(submitted, f.name), dflt, &v, &msg, e);
		if (rc < 0)
			goto out;
		if (rc == FORM_INVALID)
			json_object_set_new(errors, f.name, msg);
		else
			json_object_set_new(ok, f.name, v);
	}
	rc = json_object_size(errors) ? FORM_INVALID : FORM_VALID;
	if (rc == FORM_VALID && keep_extra_values(ok, fields, values) < 0) {
		rc = oom_fail(e);
		goto out;
	}
	*out = json_incref(rc == FORM_VALID ? ok : errors);
out:
	json_decref(ok);
	json_decref(errors);
	return rc;
}
