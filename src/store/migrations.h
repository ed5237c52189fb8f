#ifndef ACCORD_STORE_MIGRATIONS_H
#define ACCORD_STORE_MIGRATIONS_H

/* The numbered schema migrations, generated at build time by scripts/embed-sql from
 * src/store/schema/NNN_name.sql (SQLite's dialect; PostgreSQL's text is translated from it,
 * or is NNN_name.pg.sql where PostgreSQL needs more).  Each table ends with an entry whose
 * name is NULL. */
struct migration {
	int number;
	const char *name;
	const char *sql;
};

extern const struct migration store_migrations[];
extern const struct migration store_migrations_pg[];

#endif
