#include "store/users.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "base/datetime.h"
#include "base/str.h"
#include "base/username.h"
#include "store/orgs.h"
#include "store/teams.h"

static _Atomic uint64_t generation = 1;

static const struct {
	unsigned bit;
	const char *name;
} role_names[] = {
    {ROLE_ADMIN, "concordAdmin"},
    {ROLE_SYSTEM_READER, "concordSystemReader"},
    {ROLE_SYSTEM_WRITER, "concordSystemWriter"},
};

int user_roles_parse(const char *const *names, size_t n, unsigned *out, struct err *e)
{
	unsigned roles = 0;

	for (size_t i = 0; i < n; i++) {
		size_t j;
		for (j = 0; j < sizeof role_names / sizeof role_names[0]; j++)
			if (strcmp(names[i], role_names[j].name) == 0)
				break;
		if (j == sizeof role_names / sizeof role_names[0])
			return err_set(e, ERR_INVALID,
				       "unknown role '%.100s' (known: concordAdmin, concordSystemReader, "
				       "concordSystemWriter)",
				       names[i]);
		roles |= role_names[j].bit;
	}
	*out = roles;
	return 0;
}

void user_roles_format(unsigned roles, char *out, size_t cap)
{
	size_t pos = 0;

	pos += (size_t)snprintf(out, cap, "[");
	for (size_t j = 0; j < sizeof role_names / sizeof role_names[0] && pos < cap; j++)
		if (roles & role_names[j].bit)
			pos +=
			    (size_t)snprintf(out + pos, cap - pos, "%s\"%s\"", pos > 1 ? "," : "", role_names[j].name);
	if (pos + 1 >= cap) /* a cut list would be stored as is; 128 bytes hold all three roles */
		abort();
	memcpy(out + pos, "]", 2);
}

/* Roles are stored as the JSON array user_roles_format writes (["concordAdmin",…]); a
 * quoted-name search reads it without a JSON parse on every authentication. */
static unsigned roles_from_json(const char *text)
{
	unsigned roles = 0;
	char quoted[64];

	for (size_t j = 0; text && j < sizeof role_names / sizeof role_names[0]; j++) {
		if (str_fmt(quoted, sizeof quoted, "\"%s\"", role_names[j].name)) /* always fits */
			abort();
		if (strstr(text, quoted))
			roles |= role_names[j].bit;
	}
	return roles;
}

static void read_row(struct store_stmt *st, void *out)
{
	store_user_read(st, 0, out);
}

void store_user_read(struct store_stmt *st, int first, struct user *u)
{
	int i = first;

	store_col_copy(st, i + 0, u->id, sizeof u->id);
	store_col_copy(st, i + 1, u->username, sizeof u->username);
	store_col_copy(st, i + 2, u->domain, sizeof u->domain);
	store_col_copy(st, i + 3, u->type, sizeof u->type);
	store_col_copy(st, i + 4, u->display_name, sizeof u->display_name);
	store_col_copy(st, i + 5, u->email, sizeof u->email);
	u->roles = roles_from_json(store_col_text(st, i + 6));
	u->disabled = store_col_int64(st, i + 7) != 0;
	u->has_password = store_col_int64(st, i + 8) != 0;
	u->created_at = store_col_int64(st, i + 9);
	u->updated_at = store_col_int64(st, i + 10);
}

int store_user_get(struct store_conn *c, const char *id, struct user *u, struct err *e)
{
	static const char SQL[] = "SELECT " USER_COLS " FROM users WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_one(st, read_row, u, "User", id, e);
}

/* SQLite's lower() folds ASCII only: a name with other letters is compared, after
 * Unicode case folding (base/username.h), with every name of as many characters (folding
 * keeps the count). */
static int find_rows(struct store_conn *c, const char *username, const char *domain, struct user *u, int *n,
		     struct err *e)
{
	static const char SQL_ASCII[] = "SELECT " USER_COLS " FROM users WHERE lower(username) = lower(?1)"
					" AND (?2 IS NULL OR lower(user_domain) = lower(?2)) LIMIT 2";
	static const char SQL_FOLD[] = "SELECT " USER_COLS " FROM users WHERE length(username) = length(?1)"
				       " AND (?2 IS NULL OR lower(user_domain) = lower(?2))";
	bool fold = username_has_non_ascii(username);
	struct store_stmt *st = store_prepare(c, fold ? SQL_FOLD : SQL_ASCII, e);
	int rc;

	*n = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, username);
	store_bind_text(st, 2, domain);
	while ((rc = store_step(st, e)) == STORE_ROW) {
		struct user row;

		read_row(st, &row);
		if (fold && !username_eq(row.username, username))
			continue;
		if ((*n)++ == 0)
			*u = row;
		if (*n > 1)
			break;
	}
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_user_find(struct store_conn *c, const char *username, const char *domain, struct user *u, struct err *e)
{
	int rc, n = 0;

	if ((rc = find_rows(c, username, domain, u, &n, e)))
		return rc;
	if (n == 0)
		return err_set(e, ERR_NOT_FOUND, "User not found: %.128s", username);
	if (n > 1)
		return err_set(e, ERR_CONFLICT, "several users are named '%.128s': give userDomain", username);
	return 0;
}

int store_user_password_hash(struct store_conn *c, const char *id, char *out, size_t cap, struct err *e)
{
	static const char SQL[] = "SELECT password_hash FROM users WHERE id = ? AND password_hash IS NOT NULL";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		store_col_copy(st, 0, out, cap);
		if (store_stmt_check(st, e))
			rc = -1;
	}
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "user has no password");
	return rc < 0 ? rc : 0;
}

static void bind_user(struct store_stmt *st, const struct user *u, const char *password_hash)
{
	char roles[128];

	user_roles_format(u->roles, roles, sizeof roles);
	store_bind_text(st, 1, u->username);
	store_bind_text(st, 2, u->domain);
	store_bind_text(st, 3, u->type[0] ? u->type : "LOCAL");
	store_bind_text(st, 4, u->display_name[0] ? u->display_name : NULL);
	store_bind_text(st, 5, u->email[0] ? u->email : NULL);
	store_bind_text(st, 6, roles);
	store_bind_int64(st, 7, u->disabled);
	store_bind_text(st, 8, password_hash);
	store_bind_int64(st, 9, dt_now_ms());
	store_bind_text(st, 10, u->id);
}

/* A name is stored only in NFC, and only when no other user has it in another case (the
 * unique index on lower(username) sees ASCII case only). */
static int check_name(struct store_conn *c, const struct user *u, struct err *e)
{
	struct user other;
	struct err ignored;
	int rc;

	if (username_check_nfc(u->username, e))
		return -ERR_INVALID;
	if (!username_has_non_ascii(u->username))
		return 0;
	rc = store_user_find(c, u->username, u->domain, &other, &ignored);
	if (rc == -ERR_NOT_FOUND || (rc == 0 && strcmp(other.id, u->id) == 0))
		return 0;
	if (rc == 0 || rc == -ERR_CONFLICT)
		return err_set(e, ERR_CONFLICT, "User already exists: %.128s", u->username);
	return err_set(e, ignored.code, "%s", ignored.msg);
}

int store_user_insert(struct store_conn *c, const struct user *u, const char *password_hash, struct err *e)
{
	static const char SQL[] = "INSERT INTO users (username, user_domain, user_type, display_name, email, roles,"
				  " disabled, password_hash, created_at, id, updated_at)"
				  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?9, ?10, ?9)";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st || check_name(c, u, e))
		return -1;
	bind_user(st, u, password_hash);
	rc = store_step_done(st, e);
	if (rc == -ERR_CONFLICT)
		return err_set(e, ERR_CONFLICT, "User already exists: %.128s", u->username);
	if (rc == 0)
		generation++;
	return rc;
}

int store_user_update(struct store_conn *c, const struct user *u, const char *password_hash, struct err *e)
{
	static const char SQL[] = "UPDATE users SET username = ?, user_domain = ?, user_type = ?, display_name = ?,"
				  " email = ?, roles = ?, disabled = ?, password_hash = coalesce(?, password_hash),"
				  " updated_at = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st || check_name(c, u, e))
		return -1;
	bind_user(st, u, password_hash);
	rc = store_step_done(st, e);
	if (rc == -ERR_CONFLICT)
		return err_set(e, ERR_CONFLICT, "User already exists: %.128s", u->username);
	if (rc == 0 && store_changes(c) == 0)
		return err_set(e, ERR_NOT_FOUND, "User not found: %.64s", u->id);
	generation++;
	return rc;
}

int store_user_delete(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "DELETE FROM users WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step_done(st, e);
	if (rc == 0 && store_changes(c) == 0)
		return err_set(e, ERR_NOT_FOUND, "User not found: %.64s", id);
	generation++;
	return rc;
}

uint64_t store_user_generation(void)
{
	return generation;
}

int store_user_list(struct store_conn *c, const char *filter, size_t offset, size_t limit, struct user **out, size_t *n,
		    struct err *e)
{
	static const char SQL[] = "SELECT " USER_COLS " FROM users WHERE disabled = 0 AND (?1 IS NULL"
				  " OR lower(username) LIKE ?1 ESCAPE '\\' OR lower(coalesce(display_name, '')) LIKE ?1"
				  " ESCAPE '\\' OR lower(coalesce(email, '')) LIKE ?1 ESCAPE '\\')"
				  " ORDER BY lower(username), user_domain LIMIT ?2 OFFSET ?3";
	struct store_stmt *st = store_prepare(c, SQL, e);
	char like[2 * 128 + 3];

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	if (filter)
		store_like_pattern(filter, like, sizeof like);
	store_bind_text(st, 1, filter ? like : NULL);
	store_bind_int64(st, 2, (int64_t)limit);
	store_bind_int64(st, 3, (int64_t)offset);
	return store_collect(st, sizeof **out, read_row, (void **)out, n, e);
}

int store_user_insert_joining_default(struct store_conn *c, const struct user *u, const char *password_hash,
				      struct err *e)
{
	struct team t;
	struct err none;
	int rc;

	if ((rc = store_tx_begin(c, e)))
		return rc;
	rc = store_user_insert(c, u, password_hash, e);
	if (rc == 0 && store_team_get(c, DEFAULT_TEAM_ID, &t, &none) == 0)
		rc = store_team_member_set(c, DEFAULT_TEAM_ID, u->id, TEAM_ROLE_MEMBER, e);
	if (rc == 0)
		rc = store_tx_commit(c, e);
	if (rc)
		store_tx_rollback(c);
	return rc;
}
