/* libFuzzer driver for http/multipart.  Input: the Content-Type value, a NUL byte, then the
 * body.  Checks that every slice lies inside the inputs and that helpers agree with the
 * parts. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "http/multipart.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int inside(struct str s, const char *base, size_t len)
{
	if (!s.len)
		return 1;
	return s.p >= base && s.p + s.len <= base + len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *nul = memchr(data, 0, size);
	struct multipart mp;
	struct str ct, body, v;
	struct err e;
	char *copy;

	if (!limits.multipart_parts)
		limits_defaults();
	if (!nul)
		return 0;
	/* Copies with exact sizes so ASan catches any read past either input. */
	copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	ct = (struct str){copy, (size_t)(nul - (const char *)data)};
	body = (struct str){copy + ct.len + 1, size - ct.len - 1};
	if (multipart_parse(ct, body, &mp, &e) == 0) {
		assert(mp.n_parts <= limits.multipart_parts);
		for (size_t i = 0; i < mp.n_parts; i++) {
			const struct multipart_part *p = &mp.parts[i];
			assert(p->name.len > 0);
			assert(inside(p->name, body.p, body.len));
			assert(inside(p->filename, body.p, body.len));
			assert(inside(p->content_type, body.p, body.len));
			assert(inside(p->data, body.p, body.len));
			(void)multipart_part_is_text(p);
		}
		if (mp.n_parts) {
			char name[64];
			size_t n = mp.parts[0].name.len < sizeof name - 1 ? mp.parts[0].name.len : sizeof name - 1;
			memcpy(name, mp.parts[0].name.p, n);
			name[n] = '\0';
			if (!memchr(name, 0, n) && n == mp.parts[0].name.len)
				assert(multipart_find(&mp, name) != NULL);
			if (multipart_text(&mp, name, &v))
				assert(v.len > 0 && inside(v, body.p, body.len));
			(void)multipart_bool(&mp, name);
		}
		multipart_cleanup(&mp);
	} else {
		assert(mp.parts == NULL && mp.n_parts == 0);
		assert(e.code == ERR_INVALID || e.code == ERR_MEDIA_TYPE || e.code == ERR_TOO_LARGE);
	}
	free(copy);
	return 0;
}
