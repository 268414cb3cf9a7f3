/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "db/sql/sql-internal.h"

/* The SQL of a page of the job list, put together for one JobFilter; the
 * findings' summaries (summaries.c) read the same page. */

typedef struct JobArg {
        const char *text; /* NULL: num */
        int64_t num;
} JobArg;

typedef struct JobQuery {
        FILE *f;
        char *where;        /* what every job must match, "" for nothing */
        size_t where_size;
        /* Who may see (store/auth/identity.h), when the filter does not already
         * keep to it: the argument naming the viewer (0: anyone may), and
         * those naming the accounts they lead. */
        int viewer;
        int *accounts;
        size_t n_accounts;
        JobArg *args;
        size_t n_args, alloc_args;
} JobQuery;

int job_query_init(JobQuery *q, const JobFilter *f);
void job_query_done(JobQuery *q);
/* Writes the SQL of the page's ids to out: ?L and ?L+1 after the query's
 * arguments are the limit and the offset. */
void job_query_page(const JobQuery *q, const JobFilter *f, FILE *out);
/* Writes " ORDER BY ..." of the filter's sort, columns prefixed. */
void job_query_order(const JobFilter *f, FILE *out, const char *prefix);
/* Prepares sql (not cached: it depends on the filter) and binds the
 * query's arguments, then extra[] as integers after them. */
int job_query_prepare(Conn *c, const JobQuery *q, const char *sql, const int64_t *extra, size_t n_extra,
                      DbStmt **ret);
/* Writes the SQL of a statement over the query's jobs to out. */
typedef void (*JobQueryWriter)(const JobQuery *q, const JobFilter *f, FILE *out);
/* The SQL fn writes, into *ret. -ENOMEM. */
int job_query_sql(const JobQuery *q, const JobFilter *f, JobQueryWriter fn, char **ret);
/* Runs the SQL fn writes, with the query's arguments and extra[] bound
 * (job_query_prepare()), and reads the integer of its one row: a count. */
int job_query_step_int(Conn *c, const JobQuery *q, const JobFilter *f, JobQueryWriter fn, const int64_t *extra,
                       size_t n_extra, int64_t *ret);
