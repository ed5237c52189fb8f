#ifndef ACCORD_BASE_USERNAME_H
#define ACCORD_BASE_USERNAME_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* One spelling per user name.  Names are compared after Unicode simple case folding (so
 * `ALICE`, `alice` and `Ａlice`'s lowercase twin meet), and only names already in
 * normalization form NFC are accepted, so that `é` (U+00E9) and `e` + U+0301 cannot be two
 * users.  Without ICU, NFC is not computed but checked conservatively: a name is refused
 * when it holds a combining mark (U+0300–036F, 1AB0–1AFF, 1DC0–1DFF, 20D0–20FF, FE20–FE2F),
 * a conjoining Hangul jamo (U+1100–11FF), or a character that NFC replaces by another
 * (singletons such as U+212B ANGSTROM SIGN or U+2126 OHM SIGN, CJK compatibility
 * ideographs).  That refuses a few NFC names with marks that do not compose; it never
 * accepts a name that NFC would change.  Case folding covers ASCII, Latin-1, Latin
 * Extended-A, Greek, Cyrillic and fullwidth Latin; it maps one character to one character,
 * so a folded name has as many characters as the name.  Thread-safe, no allocation. */

/* 0, or ERR_INVALID naming the problem: not UTF-8, or not (conservatively) NFC. */
int username_check_nfc(const char *s, struct err *e) WUR;

/* Writes the case-folded s into out (NUL-terminated; cap >= strlen(s) + 1 suffices, since
 * a folded character is never longer in UTF-8).  Bytes that are not valid UTF-8 are copied
 * unchanged. */
void username_fold(const char *s, char *out, size_t cap);

/* True when a and b are the same name after folding. */
bool username_eq(const char *a, const char *b);

/* True when s has a byte >= 0x80 (SQLite's lower() folds ASCII only). */
bool username_has_non_ascii(const char *s);

#endif
