#include "flow/yaml_dump.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "base/buf.h"
#include "base/str.h"
#include "flow/value.h"

static int write_cb(void *data, unsigned char *p, size_t n)
{
	struct err e;
	return buf_append(data, p, n, &e) == 0;
}

static int scalar(yaml_emitter_t *em, const char *s, yaml_scalar_style_t style)
{
	yaml_event_t ev;
	yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)s, (int)strlen(s), 1, 1, style);
	return yaml_emitter_emit(em, &ev);
}

static int emit(yaml_emitter_t *em, const json_t *v, int depth)
{
	yaml_event_t ev;
	char num[64];
	if (depth > 256)
		return 0;
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		const char *k;
		json_t *x;
		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
		if (!yaml_emitter_emit(em, &ev))
			return 0;
		json_object_foreach((json_t *)v, k,
				    x) if (!scalar(em, k, YAML_PLAIN_SCALAR_STYLE) || !emit(em, x, depth + 1)) return 0;
		yaml_mapping_end_event_initialize(&ev);
		return yaml_emitter_emit(em, &ev);
	}
	case JSON_ARRAY: {
		size_t i;
		json_t *x;
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
		if (!yaml_emitter_emit(em, &ev))
			return 0;
		json_array_foreach((json_t *)v, i, x) if (!emit(em, x, depth + 1)) return 0;
		yaml_sequence_end_event_initialize(&ev);
		return yaml_emitter_emit(em, &ev);
	}
	case JSON_STRING:
		return scalar(em, json_string_value(v), YAML_DOUBLE_QUOTED_SCALAR_STYLE);
	case JSON_INTEGER:
		if (str_fmt(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v)))
			return 0;
		return scalar(em, num, YAML_PLAIN_SCALAR_STYLE);
	case JSON_REAL:
		value_format_double(json_real_value(v), num);
		return scalar(em, num, YAML_PLAIN_SCALAR_STYLE);
	case JSON_TRUE:
		return scalar(em, "true", YAML_PLAIN_SCALAR_STYLE);
	case JSON_FALSE:
		return scalar(em, "false", YAML_PLAIN_SCALAR_STYLE);
	default:
		return scalar(em, "null", YAML_PLAIN_SCALAR_STYLE);
	}
}

char *yaml_dump_text(const json_t *v)
{
	yaml_emitter_t em;
	yaml_event_t ev;
	struct buf b;
	int ok;
	buf_init(&b, 0);
	if (!yaml_emitter_initialize(&em))
		return NULL;
	yaml_emitter_set_output(&em, write_cb, &b);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	ok = yaml_emitter_emit(&em, &ev);
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	ok = ok && yaml_emitter_emit(&em, &ev) && emit(&em, v, 0);
	yaml_document_end_event_initialize(&ev, 1);
	ok = ok && yaml_emitter_emit(&em, &ev);
	yaml_stream_end_event_initialize(&ev);
	ok = ok && yaml_emitter_emit(&em, &ev) && yaml_emitter_flush(&em);
	yaml_emitter_delete(&em);
	if (!ok) {
		buf_cleanup(&b);
		return NULL;
	}
	while (b.len > 0 && b.data[b.len - 1] == '\n')
		b.data[--b.len] = '\0';
	return buf_detach(&b, NULL);
}
