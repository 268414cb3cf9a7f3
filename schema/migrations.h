/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The schema migrations, embedded at build time from schema/sqlite/NNNN-name.sql and schema/postgresql/NNNN-name.sql.
 * schema_migrations[i].version == i + 1. */
typedef struct SchemaMigration {
        unsigned version;
        const char *name;
        const char *sql;
} SchemaMigration;

extern const SchemaMigration schema_migrations[];
extern const unsigned schema_migrations_count;

/* The same from schema/postgresql/NNNN-name.sql: same numbers and names,
 * PostgreSQL's dialect. */
extern const SchemaMigration schema_postgresql_migrations[];
extern const unsigned schema_postgresql_migrations_count;
