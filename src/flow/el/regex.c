/* Java regular expressions (String.matches/replaceAll/split) on POSIX extended regular
 * expressions.  The common Java syntax is translated: \d \D \s \S \w \W (also inside
 * brackets), (?:…), a leading (?i), \Q…\E, \t \n \r; lazy quantifiers act greedily.
 * Back references and large counted repetitions are refused, so that a pattern cannot
 * make matching or compiling explode. */
#include "flow/el/internal.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

#define RE_MAX_COUNT 100
#define RE_MAX_BRACES 2
#define RE_MAX_LEN 4096

struct re_tr {
	struct buf out;
	int flags;
	int braces;
	bool bad;
	const char *why;
};

static void put(struct re_tr *t, const char *s)
{
	struct err e;

	if (buf_append_str(&t->out, s, &e) < 0)
		t->bad = true;
}

static void putc_(struct re_tr *t, char ch)
{
	struct err e;

	if (buf_append_char(&t->out, ch, &e) < 0)
		t->bad = true;
}

static void refuse(struct re_tr *t, const char *why)
{
	t->bad = true;
	t->why = why;
}

/* One escape \x; in_bracket selects the bracket-expression forms. */
static void tr_escape(struct re_tr *t, char x, bool in_bracket)
{
	static const char *const out_cls[][2] = {
	    {"d", "[0-9]"},	   {"D", "[^0-9]"},	  {"s", "[[:space:]]"},
	    {"S", "[^[:space:]]"}, {"w", "[_[:alnum:]]"}, {"W", "[^_[:alnum:]]"},
	};
	size_t i;

	if (x >= '1' && x <= '9') {
		refuse(t, "back references are not supported");
		return;
	}
	if (in_bracket && (x == 'd' || x == 's' || x == 'w')) {
		put(t, x == 'd' ? "0-9" : x == 's' ? "[:space:]" : "_[:alnum:]");
		return;
	}
	for (i = 0; !in_bracket && i < sizeof out_cls / sizeof out_cls[0]; i++) {
		if (out_cls[i][0][0] == x) {
			put(t, out_cls[i][1]);
			return;
		}
	}
	if (x == 't' || x == 'n' || x == 'r') {
		putc_(t, x == 't' ? '\t' : x == 'n' ? '\n' : '\r');
		return;
	}
	if (in_bracket) {
		if (x == ']' || x == '^' || x == '-') {
			refuse(t, "escaped ] ^ - inside [] are not supported");
			return;
		}
		putc_(t, x);
		return;
	}
	putc_(t, '\\');
	putc_(t, x);
}

static size_t tr_quoted(struct re_tr *t, const char *re, size_t i, size_t n)
{
	const char *end = strstr(re + i, "\\E");
	size_t stop = end ? (size_t)(end - re) : n;

	for (; i < stop; i++) {
		if (strchr("\\^$.|?*+()[]{}", re[i]))
			putc_(t, '\\');
		putc_(t, re[i]);
	}
	return end ? stop + 2 : n;
}

static size_t tr_brace(struct re_tr *t, const char *re, size_t i)
{
	size_t j = i + 1;
	long v = 0;

	if (++t->braces > RE_MAX_BRACES)
		refuse(t, "too many counted repetitions");
	for (; re[j] && re[j] != '}'; j++) {
		if (re[j] >= '0' && re[j] <= '9') {
			v = v * 10 + (re[j] - '0');
			if (v > RE_MAX_COUNT) {
				refuse(t, "counted repetition too large");
				break;
			}
		} else if (re[j] == ',') {
			v = 0;
		} else {
			refuse(t, "invalid counted repetition");
			break;
		}
	}
	for (; i <= j && re[i]; i++)
		putc_(t, re[i]);
	return i;
}

/* A quantifier; the lazy or possessive suffix that may follow acts greedily.  A quantifier
 * that follows nothing or another quantifier is refused (Java: "Dangling meta
 * character"), which also keeps glibc from building exponential trees for "a+++…". */
static size_t tr_quantifier(struct re_tr *t, const char *re, size_t i, bool *quant_ok)
{
	if (!*quant_ok) {
		refuse(t, "Dangling meta character");
		return i + 1;
	}
	if (re[i] == '{') {
		i = tr_brace(t, re, i);
	} else {
		putc_(t, re[i]);
		i++;
	}
	if (re[i] == '?' || re[i] == '+')
		i++;
	*quant_ok = false;
	return i;
}

static void translate(struct re_tr *t, const char *re)
{
	size_t n = strlen(re), i = 0;
	bool in_bracket = false, quant_ok = false;

	if (strncmp(re, "(?i)", 4) == 0) {
		t->flags |= REG_ICASE;
		i = 4;
	}
	while (i < n && !t->bad) {
		char ch = re[i];
		if (ch == '\\' && i + 1 < n) {
			if (!in_bracket && re[i + 1] == 'Q')
				i = tr_quoted(t, re, i + 2, n);
			else {
				tr_escape(t, re[i + 1], in_bracket);
				i += 2;
			}
			quant_ok = !in_bracket;
			continue;
		}
		if (in_bracket) {
			in_bracket =
			    ch != ']' || (i > 0 && (re[i - 1] == '[' || (re[i - 1] == '^' && re[i - 2] == '[')));
			quant_ok = !in_bracket;
			putc_(t, ch);
			i++;
			continue;
		}
		if (ch == '*' || ch == '+' || ch == '?' || ch == '{') {
			i = tr_quantifier(t, re, i, &quant_ok);
			continue;
		}
		in_bracket = ch == '[';
		quant_ok = ch != '(' && ch != '|' && ch != '^' && ch != '[';
		if (ch == '(' && re[i + 1] == '?') {
			if (re[i + 2] != ':')
				refuse(t, "(? groups other than (?: are not supported");
			putc_(t, '(');
			i += 3;
			continue;
		}
		putc_(t, ch);
		i++;
	}
}

/* Compiles re (whole-string match when anchored). */
static int re_compile(struct el_ctx *c, const char *re, bool anchored, regex_t *out)
{
	struct re_tr t = {.flags = REG_EXTENDED};
	char msg[128];
	int rc;

	if (strlen(re) > RE_MAX_LEN)
		return el_fail(c, ERR_INVALID, "regular expression longer than %d bytes", RE_MAX_LEN);
	buf_init(&t.out, RE_MAX_LEN * 4);
	if (anchored)
		put(&t, "^(");
	translate(&t, re);
	if (anchored)
		put(&t, ")$");
	if (t.bad) {
		buf_cleanup(&t.out);
		return el_fail(c, ERR_INVALID, "unsupported regular expression '%.100s': %s", re,
			       t.why ? t.why : "too long");
	}
	rc = regcomp(out, t.out.data ? t.out.data : "", t.flags);
	buf_cleanup(&t.out);
	if (rc != 0) {
		regerror(rc, NULL, msg, sizeof msg);
		return el_fail(c, ERR_INVALID, "invalid regular expression '%.100s': %s", re, msg);
	}
	return 0;
}

/* Java Matcher.find from `from`: fills m (absolute offsets). */
static bool re_find(const regex_t *re, const char *s, size_t len, size_t from, regmatch_t m[10])
{
	if (from > len)
		return false;
	m[0].rm_so = (regoff_t)from;
	m[0].rm_eo = (regoff_t)len;
	return regexec(re, s, 10, m, REG_STARTEND) == 0;
}

static size_t next_char(const char *s, size_t len, size_t i)
{
	i++;
	while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80)
		i++;
	return i;
}

int el_re_matches(struct el_ctx *c, const char *s, size_t len, const char *re, bool *out)
{
	regex_t r;
	regmatch_t m[10];

	if (re_compile(c, re, true, &r) < 0)
		return -1;
	*out = re_find(&r, s, len, 0, m);
	regfree(&r);
	return 0;
}

/* Java replacement: $n inserts group n, \x inserts x. */
static int append_replacement(struct el_ctx *c, struct buf *b, const char *s, const regmatch_t m[10], const char *repl)
{
	struct err e;
	size_t i;

	for (i = 0; repl[i]; i++) {
		if (repl[i] == '\\' && repl[i + 1]) {
			i++;
		} else if (repl[i] == '$') {
			int g = repl[i + 1] - '0';
			if (g < 0 || g > 9)
				return el_fail(c, ERR_INVALID, "Illegal group reference");
			i++;
			if (m[g].rm_so >= 0 && buf_append(b, s + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so), &e) < 0)
				return el_fail(c, e.code, "%s", e.msg);
			continue;
		}
		if (buf_append_char(b, repl[i], &e) < 0)
			return el_fail(c, e.code, "%s", e.msg);
	}
	return 0;
}

int el_re_replace_all(struct el_ctx *c, const char *s, size_t len, const char *re, const char *repl, json_t **out)
{
	regex_t r;
	regmatch_t m[10];
	struct buf b;
	struct err e;
	size_t pos = 0, from = 0;
	int rc = -1;

	if (re_compile(c, re, false, &r) < 0)
		return -1;
	buf_init(&b, EL_STR_MAX);
	while (re_find(&r, s, len, from, m)) {
		size_t so = (size_t)m[0].rm_so, eo = (size_t)m[0].rm_eo;
		/* glibc scans the rest of the string on every call: charge for it */
		if (el_budget(c, 1 + (len - so) / 4096 + b.len / 65536) < 0)
			goto out;
		if (buf_append(&b, s + pos, so - pos, &e) < 0) {
			el_fail(c, e.code, "%s", e.msg);
			goto out;
		}
		if (append_replacement(c, &b, s, m, repl) < 0)
			goto out;
		pos = eo;
		from = eo > so ? eo : next_char(s, len, eo);
	}
	if (buf_append(&b, s + pos, len - pos, &e) < 0) {
		el_fail(c, e.code, "%s", e.msg);
		goto out;
	}
	*out = json_stringn_nocheck(b.data ? b.data : "", b.len);
	rc = *out ? 0 : el_no_memory(c);
out:
	buf_cleanup(&b);
	regfree(&r);
	return rc;
}

int el_re_split(struct el_ctx *c, const char *s, size_t len, const char *re, json_t **out)
{
	regex_t r;
	regmatch_t m[10];
	json_t *arr;
	size_t index = 0, from = 0, n;

	if (re_compile(c, re, false, &r) < 0)
		return -1;
	if (!(arr = json_array())) {
		regfree(&r);
		return el_no_memory(c);
	}
	while (re_find(&r, s, len, from, m)) {
		size_t so = (size_t)m[0].rm_so, eo = (size_t)m[0].rm_eo;
		from = eo > so ? eo : next_char(s, len, eo);
		if (el_budget(c, 1 + (len - so) / 4096) < 0) {
			regfree(&r);
			json_decref(arr);
			return -1;
		}
		if (so == eo && (so == 0 || so >= len))
			continue;
		json_array_append_new(arr, json_stringn_nocheck(s + index, so - index));
		index = eo;
	}
	regfree(&r);
	json_array_append_new(arr, json_stringn_nocheck(s + index, len - index));
	n = json_array_size(arr);
	while (n > 1 && json_string_length(json_array_get(arr, n - 1)) == 0)
		json_array_remove(arr, --n);
	if (n == 1 && json_string_length(json_array_get(arr, 0)) == 0 && len > 0)
		json_array_clear(arr);
	*out = arr;
	return 0;
}

/* The POSIX group that holds Java's group 1 in the anchored translation: 1 for the anchor's
 * own group, plus every group opened up to the first capturing one ((?: groups are
 * capturing in POSIX); 0 when the pattern has no capturing group. */
static int java_group1(const char *re)
{
	bool in_bracket = false;
	int opened = 0;

	for (size_t i = strncmp(re, "(?i)", 4) == 0 ? 4 : 0; re[i]; i++) {
		if (re[i] == '\\' && re[i + 1] == 'Q') {
			const char *end = strstr(re + i + 2, "\\E");
			if (!end)
				return 0;
			i = (size_t)(end - re) + 1;
		} else if (re[i] == '\\' && re[i + 1]) {
			i++;
		} else if (in_bracket) {
			in_bracket = re[i] != ']';
		} else if (re[i] == '[') {
			in_bracket = true;
			if (re[i + 1] == '^')
				i++;
			if (re[i + 1] == ']')
				i++;
		} else if (re[i] == '(') {
			opened++;
			if (re[i + 1] != '?')
				return 1 + opened;
		}
	}
	return 0;
}

int el_regex_match(const char *re, const char *s, bool *matched, char **group1, struct err *e)
{
	struct el_ctx c = {.e = e};
	regmatch_t m[10];
	regex_t r;
	int g = java_group1(re);

	*matched = false;
	*group1 = NULL;
	if (re_compile(&c, re, true, &r) < 0)
		return -1;
	*matched = re_find(&r, s, strlen(s), 0, m);
	regfree(&r);
	if (*matched && g > 0 && g < 10 && m[g].rm_so >= 0 &&
	    !(*group1 = strndup(s + m[g].rm_so, (size_t)(m[g].rm_eo - m[g].rm_so))))
		return err_set(e, ERR_INTERNAL, "out of memory");
	return 0;
}
