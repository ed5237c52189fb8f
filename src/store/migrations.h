#ifndef ACCORD_STORE_MIGRATIONS_H
#define ACCORD_STORE_MIGRATIONS_H

/* The numbered schema migrations, generated at build time from src/store/schema/NNN_*.sql
 * (scripts/embed-sql).  The table ends with an entry whose name is NULL. */
struct migration {
	int number;
	const char *name;
	const char *sql;
};

extern const struct migration store_migrations[];

#endif
