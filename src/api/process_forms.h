#ifndef ACCORD_API_PROCESS_FORMS_H
#define ACCORD_API_PROCESS_FORMS_H

#include <jansson.h>
#include <stdint.h>

#include "api/process_access.h"
#include "http/multipart.h"
#include "store/processes.h"

/* What the form routes (process_forms.c) share with the custom forms (custom_forms.c):
 * the loading of a pending form with its access rule, the reading of submitted values and
 * the one validation and resume every submit goes through. */

struct form_req {
	struct process p;
	json_t *forms; /* all pending forms (owned) */
	json_t *form;  /* the named one (borrowed from forms) */
};

/* Loads the process of the route's {id}, its pending forms and (when name is given) the
 * named form, checking access: a form with runAs users or LDAP groups may be read and
 * submitted by them (and admins) only (api/form_run_as.h); any other form needs `need`.
 * PROC_WRITE also needs the process SUSPENDED (ERR_CONFLICT).  ERR_NOT_FOUND for an
 * unknown process or form.  api_form_req_cleanup in every case. */
int api_form_load(struct api_call *c, const char *name, enum proc_need need, struct form_req *r) WUR;
void api_form_req_cleanup(struct form_req *r);

struct submission {
	json_t *values; /* fieldName → submitted value */
	json_t *files;	/* [{path, data}] for the supervisor */
	json_t *errors; /* fieldName → message found before validation */
	uint64_t file_bytes;
};

/* Empty (values, files, errors new) and its release. */
void api_form_submission_init(struct submission *s);
void api_form_submission_cleanup(struct submission *s);

/* The field `name` of a form (borrowed from it; NULL: none), and whether it takes files. */
const json_t *api_form_field(const json_t *form, const char *name);
bool api_form_is_file(const json_t *field);

/* Adds a submitted value; a repeated name makes a list, as Concord does. */
void api_form_add_value(json_t *values, const char *name, json_t *v);

/* The parts of a multipart/form-data body that name fields of form into s (file fields
 * become files for the supervisor). */
int api_form_read_multipart(struct api_call *c, const json_t *form, struct submission *s) WUR;

/* Validates s against the form; valid values resume the process (FORM_VALID, and *errors
 * NULL), invalid ones store nothing and give FORM_INVALID with *errors (NEW object,
 * fieldName → message).  < 0 on an error (c->err). */
int api_form_apply(struct api_call *c, struct form_req *r, struct submission *s, json_t **errors) WUR;

#endif
