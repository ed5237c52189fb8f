#ifndef ACCORD_INVENTORY_DIALECT_H
#define ACCORD_INVENTORY_DIALECT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

/* Translates an inventory or JSON store query written for PostgreSQL against the view
 * inventory_data(inventory_id, item_path, item_data) or Concord's table
 * json_store_data(json_store_id, item_path, item_data, item_data_size) into SQLite SQL (the
 * subset is documented in docs/inventory.md).
 *
 * The text must be one SELECT statement (optionally WITH … SELECT, UNION …, one trailing
 * semicolon) that reads no table but those two and its own WITH queries.  Every reference
 * to inventory_data is emitted as `<table> AS <alias>` (alias inventory_data when the query
 * gives none), every reference to json_store_data as a subquery of <table> renaming its
 * columns, `(SELECT inventory_id AS json_store_id, … FROM <table>) AS <alias>`, so the
 * caller decides which restricted view the query reads (see sandbox.h).  The PostgreSQL-only constructs become calls of the functions
 * registered by inv_json_register (json_contains, accord_pg_text, …).
 *
 * This is a syntactic translation: it does not know column types beyond item_data (jsonb),
 * item_path, inventory_id and json_store_id (text) and item_data_size (number), so it neither resolves nor checks column names; SQLite
 * does when the statement is prepared. */

struct inv_translation {
	char *sql;	   /* new, NUL-terminated SQLite text */
	unsigned n_params; /* number of ? placeholders (0 or 1) */
	/* True when the query is `SELECT … FROM inventory_data [alias] WHERE …` whose WHERE is
	 * an AND chain with the conjunct `item_data @> ?::jsonb`, and inventory_data is read
	 * nowhere else: then restricting the rows of the view to the items that contain the
	 * filter gives the same result, which lets the caller use the item key index. */
	bool prefilter;
};

/* Largest query text accepted, in bytes. */
#define INV_DIALECT_MAX_TEXT (256 * 1024)

/* Translates text[0..len) (need not be NUL-terminated).  table is the name emitted for the
 * rows of both tables (an identifier the caller chose; NULL means "inventory_data").  On success
 * out owns sql.  Errors: ERR_INVALID with a message naming what is wrong and where
 * ("syntax error: expected FROM, found 'FORM' at line 1, column 20", "table 'users' is not
 * allowed: a query can read only json_store_data or inventory_data", "only one statement is allowed…");
 * ERR_TOO_LARGE past INV_DIALECT_MAX_TEXT; ERR_INTERNAL when out of memory. Thread-safe. */
int inv_dialect_translate(const char *text, size_t len, const char *table, struct inv_translation *out,
			  struct err *e) WUR;

void inv_translation_cleanup(struct inv_translation *t);

#endif
