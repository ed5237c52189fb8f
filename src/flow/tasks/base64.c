#include <stdlib.h>
#include <string.h>

#include "base/oom.h"
#include "base/b64.h"
#include "flow/tasks/task.h"
#include "flow/vm.h"

static int m_encode(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	const char *s;
	char *enc;
	if (task_arg_str(args, 0, "value", &s, e) < 0)
		return -1;
	if (!(enc = b64_encode(s, strlen(s), B64_STD)))
		return oom_fail(e);
	*out = json_string(enc);
	free(enc);
	if (*out && vm_is_sensitive(c->vm, s)) /* the encoding of a sensitive value is one too */
		vm_mark_sensitive(c->vm, *out);
	return 0;
}

static int m_decode(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	const char *s;
	size_t len;
	unsigned char *dec;
	if (task_arg_str(args, 0, "value", &s, e) < 0 || !(dec = b64_decode(s, strlen(s), &len, e)))
		return -1;
	*out = json_stringn((const char *)dec, len);
	free(dec);
	if (!*out)
		return err_set(e, ERR_INVALID, "decoded value is not UTF-8 text");
	if (vm_is_sensitive(c->vm, s))
		vm_mark_sensitive(c->vm, *out);
	return 0;
}

static const struct task_method methods[] = {
    {"encode", m_encode, 1, 1}, {"decode", m_decode, 1, 1}, {NULL, NULL, 0, 0}};

const struct task_def task_base64 = {"base64", NULL, methods, false, true};
