/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* What the PostgreSQL driver offers beyond db.h. */

/* Why this thread's last db_postgresql_driver.connect() failed (one line),
 * or "" after a success: db.h's connect has no DbConn to ask db_errmsg() of
 * when it fails, and "password authentication failed for user" is what an
 * administrator needs to read. */
const char *db_postgresql_connect_error(void);

/* Environment variable: "0" turns off pipelined execute() on writers (on by
 * default), e.g. to compare ingest throughput with and without. Read at
 * connect. */
#define DB_POSTGRESQL_PIPELINE_ENV "LMK_PG_PIPELINE"
