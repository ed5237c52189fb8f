#ifndef ACCORD_STORE_MIGRATIONS_H
#define ACCORD_STORE_MIGRATIONS_H

/* The numbered schema migrations, generated at build time from src/store/schema/NNN_*.sql
 * (SQLite) and src/store/schema_pg/NNN_*.sql (PostgreSQL, the same numbers and names) by
 * scripts/embed-sql.  Each table ends with an entry whose name is NULL. */
struct migration {
	int number;
	const char *name;
	const char *sql;
};

extern const struct migration store_migrations[];
extern const struct migration store_migrations_pg[];

#endif
