#ifndef ACCORD_API_WEB_H
#define ACCORD_API_WEB_H

#include "http/response.h"

/* The headers every console response carries (a page, a file, an HTML error page):
 * Content-Security-Policy (no inline script, nothing from elsewhere),
 * X-Content-Type-Options: nosniff and Referrer-Policy: same-origin. */
void web_headers(struct http_response *w);

#endif
