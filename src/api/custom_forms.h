#ifndef ACCORD_API_CUSTOM_FORMS_H
#define ACCORD_API_CUSTOM_FORMS_H

#include <jansson.h>

#include "api/api.h"

/* Custom forms (custom_forms.c).  Which of the pending forms (object name → form,
 * BORROWED) of process id have a custom form (forms/<name>/index.html in its stored
 * working directory): *custom a NEW object name → true/false.  < 0 with c->err. */
int api_custom_forms_which(struct api_call *c, const char *id, const json_t *forms, json_t **custom) WUR;

#endif
