#ifndef ACCORD_FLOW_FORM_VALIDATE_H
#define ACCORD_FLOW_FORM_VALIDATE_H

#include <jansson.h>

#include "base/err.h"

/* Validation of submitted form values, shared by the flow engine (`accord run`, the runner's
 * vm_resume) and the server's form API.  Pure: no I/O, no global state, thread-safe.
 *
 * form is one pending form as forms_call builds it: {name, eventName, fields: [{name, label,
 * type ("string", "int", "decimal", "boolean", "date", "dateTime", "file", … with an optional
 * cardinality suffix ? + *), allow, pattern, min, max, readonly, value, …}], values, options}.
 *
 * submitted (an object, may be NULL) maps field names to values; strings are coerced to the
 * field's type ("30" → 30, "true" → true, dates → ISO-8601 UTC).  A missing or null value
 * (or an empty list) takes the form's current value (`values`, then the field's `value`); a
 * read-only field always keeps it; a required field (no suffix or +) still empty whose
 * `allow` is one value (or a list of one) takes that value, as in Concord.  Unknown keys are
 * ignored.
 *
 * Returns FORM_VALID with *out a NEW object fieldName → coerced value (every field present:
 * null for an empty `?`, [] for an empty `*`) plus the form's `values` that name no field
 * (kept as given, as Concord keeps them), or FORM_INVALID with *out a NEW object
 * fieldName → message for every field that fails (one message per field, the first
 * problem found), or < 0 with e set when the form itself is malformed or memory runs out. */
enum { FORM_VALID = 0, FORM_INVALID = 1 };

int form_validate(const json_t *form, const json_t *submitted, json_t **out, struct err *e) WUR;

/* The cardinality of a field type in Concord's names: "ONE_AND_ONLY_ONE" (no suffix),
 * "ONE_OR_NONE" (?), "AT_LEAST_ONE" (+), "ANY" (*).  type may be NULL. */
const char *form_cardinality(const char *type);

/* The length of type without its cardinality suffix. */
size_t form_base_type_len(const char *type);

#endif
