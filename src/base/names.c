#include "base/names.h"

#include <string.h>

static bool alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

bool name_valid(const char *s, enum name_kind kind)
{
	size_t n = s ? strlen(s) : 0;

	if (n < 3 || n > 128 || !alnum(s[0]))
		return false;
	for (size_t i = 1; i < n; i++) {
		char c = s[i];
		if (alnum(c) || c == '_' || c == '@' || c == '.' || c == '-' || c == '~')
			continue;
		if (c == '#' && kind == NAME_APIKEY)
			continue;
		return false;
	}
	return true;
}

int name_check(const char *s, const char *what, enum name_kind kind, struct err *e)
{
	if (name_valid(s, kind))
		return 0;
	return err_set(e, ERR_INVALID,
		       "Invalid %s name '%.140s': must be 3 to 128 characters of letters, digits and _ @ . - ~%s, "
		       "starting with a letter or digit",
		       what, s ? s : "", kind == NAME_APIKEY ? " #" : "");
}
