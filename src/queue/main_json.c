#include "queue/main_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonx.h"
#include "base/path.h"

#define MAIN_JSON_MAX (16u * 1024 * 1024)

static char *main_path(const char *dir, struct err *e)
{
	char *path = NULL;

	if (asprintf(&path, "%s/_main.json", dir) < 0) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	return path;
}

static json_t *parse(const char *text, size_t len, struct err *e)
{
	json_t *cfg = jsonx_parse(text, len, 1000, e);

	if (cfg && !json_is_object(cfg)) {
		json_decref(cfg);
		err_set(e, ERR_INVALID, "_main.json is not a JSON object");
		return NULL;
	}
	return cfg;
}

json_t *main_json_load(const char *dir, struct err *e)
{
	size_t len;
	json_t *cfg;
	/* beneath the working directory: a flow may have replaced _main.json by a link */
	char *text = path_read_beneath(dir, "_main.json", MAIN_JSON_MAX, &len, e);

	if (!text)
		return e->code == ERR_NOT_FOUND ? json_object() : NULL;
	cfg = parse(text, len, e);
	free(text);
	return cfg;
}

json_t *main_json_load_files(const struct memdir *md, struct err *e)
{
	const struct memdir_entry *x = memdir_find(md, "_main.json");

	if (!x)
		return json_object();
	if (x->dir)
		return err_set(e, ERR_INVALID, "_main.json is a folder"), NULL;
	if (x->len > MAIN_JSON_MAX)
		return err_set(e, ERR_TOO_LARGE, "_main.json is larger than %u bytes", MAIN_JSON_MAX), NULL;
	return parse(x->data, x->len, e);
}

int main_json_save_files(struct memdir *md, json_t *cfg, struct err *e)
{
	char *text = jsonx_dump(cfg);
	int rc = text ? memdir_set(md, "_main.json", text, strlen(text), e) : err_set(e, ERR_INTERNAL, "out of memory");

	free(text);
	return rc;
}

json_t *main_json_args(json_t *cfg)
{
	json_t *args = json_object_get(cfg, "arguments");

	if (!json_is_object(args)) {
		args = json_object();
		json_object_set_new(cfg, "arguments", args);
	}
	return args;
}

int main_json_add_args(const char *dir, json_t *args, struct err *e)
{
	json_t *cfg;
	int rc;

	if (!json_is_object(args) || json_object_size(args) == 0)
		return 0;
	if (!(cfg = main_json_load(dir, e)))
		return -1;
	json_object_update(main_json_args(cfg), args);
	rc = main_json_save(dir, cfg, e);
	json_decref(cfg);
	return rc;
}

int main_json_save(const char *dir, json_t *cfg, struct err *e)
{
	char *path = main_path(dir, e), *text = path ? jsonx_dump(cfg) : NULL;
	int rc;

	if (!path)
		return -1;
	rc = text ? path_write_scratch(path, text, strlen(text), 0600, e) : err_set(e, ERR_INTERNAL, "out of memory");
	free(text);
	free(path);
	return rc;
}
