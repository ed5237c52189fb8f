#ifndef ACCORD_FLOW_FORM_MESSAGES_H
#define ACCORD_FLOW_FORM_MESSAGES_H

#include <stddef.h>

#include <jansson.h>

#include "base/err.h"
#include "flow/host.h"

/* A form's own error messages, as Concord takes them from a locale.properties file in the
 * process's files (docs/flows.md "Forms"): `forms/<form>/locale.properties`, else
 * `locale.properties`, whose keys are a kind of error (`invalidCardinality`,
 * `expectedString`, `expectedInteger`, `expectedDecimal`, `expectedBoolean`,
 * `expectedDate`, `doesntMatchPattern`, `integerRangeError`, `decimalRangeError`,
 * `valueNotAllowed`), alone or after a field's name and a dot (`phone.doesntMatchPattern`),
 * and whose values are java.text.MessageFormat patterns over that kind's arguments. */

/* The messages for form `form` from the working directory of h: a NEW object, or NULL
 * without a file (e untouched) or with e set (a file that is not a properties text, or too
 * large).  NULL too when h has no working directory. */
json_t *form_messages_load(const struct flow_host *h, const char *form, struct err *e);

/* The message of messages (BORROWED, may be NULL) for field and kind, formatted with the n
 * args ({0}…{n-1}; a quote starts and ends literal text, two quotes are one), into *msg
 * (NEW): 1; 0 when messages has none for them. */
int form_message(const json_t *messages, const char *field, const char *kind, const char *const *args, size_t n,
		 json_t **msg);

#endif
