/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Storing what lmkd measures beyond samples (schema/0015): the node type,
 * the counters that filled each role, named events summed per job and
 * object, job and phase, and job, and burst windows per code location.
 * Each sum is guarded like the others (docs/lmk-store.md, "Trust"): a
 * batch that would take one past INT64_MAX is refused whole. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "db/sql/ingest-measured.h"

int ingest_node_type(IngestCtx *x) {
        x->node_type_id = STORAGE_NULL;
        if (!x->b->node_type)
                return 0;
        return intern_node_type(x->s, x->b->node_type, &x->node_type_id);
}

double batch_dram_joules(const Batch *b) {
        double sum = 0;

        if (!b->energy)
                return NAN;
        for (size_t i = 0; i < b->energy->n_zones; i++)
                if (streq(b->energy->zones[i].kind, "dram"))
                        sum += b->energy->zones[i].joules;
        return sum;
}

/* sum += v, false when that would overflow */
static bool add_checked(int64_t *sum, int64_t v) {
        return !__builtin_add_overflow(*sum, v, sum);
}

/* A row's count of an event adds to its sums; instructions only from rows
 * that counted them too, so that events per instruction compare like with
 * like. */
static bool add_event(EventAcc *e, const BatchRow *row, int64_t count, int64_t cpu_time_ns) {
        if (!add_checked(&e->count, count) || !add_checked(&e->samples, row->samples) ||
            !add_checked(&e->cpu_time_ns, cpu_time_ns))
                return false;
        if (row->instructions == BATCH_NULL)
                return true;
        return add_checked(&e->instructions, row->instructions) && add_checked(&e->count_with_instructions, count);
}

int measured_add_row(IngestCtx *x, size_t i, int64_t job_id, int64_t object_id, int64_t phase_id) {
        const Batch *b = x->b;
        const BatchRow *row = &b->rows[i];
        /* the time the windows' counts are scaled to: samples x period */
        double period_ns = (double) row->samples * 1e9 / b->frequency_hz;
        int64_t cpu_time_ns;
        char field[48];
        int r;

        if (job_id == 0 || (!row->events && !row->burst))
                return 0;
        if (row->cpu_time_ns == BATCH_NULL && !(period_ns < 0x1p63)) {
                snprintf(field, sizeof(field), "rows[%zu].samples", i);
                return overflow(x, field, "its CPU time (samples / frequency) would overflow the sums of its events");
        }
        cpu_time_ns = row->cpu_time_ns != BATCH_NULL ? row->cpu_time_ns : llround(period_ns);
        for (size_t k = 0; k < b->n_roles; k++) {
                int64_t count = row->events ? row->events->count[k] : BATCH_NULL;
                EventMap *maps[] = { &x->object_events, &x->phase_events, &x->job_events };
                int64_t parts[] = { object_id, phase_id, 0 };

                for (size_t m = 0; count != BATCH_NULL && m < ELEMENTSOF(maps); m++) {
                        EventAcc *e;

                        r = event_map_get(maps[m], job_id, parts[m], (int64_t) k, 0, &e);
                        if (r < 0)
                                return r;
                        if (!add_event(e, row, count, cpu_time_ns)) {
                                snprintf(field, sizeof(field), "rows[%zu].events", i);
                                return overflow(x, field, "adding its %s to the batch's of job %s would overflow",
                                                b->roles[k], row->job);
                        }
                }
                if (row->burst && !isnan(row->burst->counts[k])) {
                        EventAcc *e;

                        r = event_map_get(&x->bursts, job_id, object_id, phase_id, (int64_t) k, &e);
                        if (r < 0)
                                return r;
                        if (!add_checked(&e->bursts, row->burst->samples) ||
                            !add_checked(&e->window_ns, row->burst->window_ns)) {
                                snprintf(field, sizeof(field), "rows[%zu].burst", i);
                                return overflow(x, field, "adding its burst windows to the batch's at this "
                                                "location would overflow");
                        }
                        e->burst_count += row->burst->counts[k];
                }
        }
        return 0;
}

static const char *job_of_id(const IngestCtx *x, int64_t id) {
        for (size_t i = 0; i < x->n_jobs; i++)
                if (x->job_pool[i].id == id)
                        return x->job_pool[i].job;
        return "?";
}

/* The ids of the batch's roles, once it has something of them to store. */
static int intern_roles(IngestCtx *x) {
        SqlStorage *s = x->s;

        for (size_t k = 0; k < x->b->n_roles; k++) {
                int r = intern(s, s->role_ids, STMT_ROLE_SELECT, STMT_ROLE_INSERT, x->b->roles[k], NULL, NULL, 1,
                               &x->role_ids[k]);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Which event filled each role, for every job the batch touched. */
static int write_counters(IngestCtx *x) {
        const Batch *b = x->b;

        for (size_t i = 0; i < x->n_jobs; i++)
                for (size_t c = 0; c < b->n_counters; c++) {
                        int k = batch_role_index(b, b->counters[c].role);
                        DbStmt *st;
                        int r;

                        if (k < 0)
                                continue; /* cannot happen: counters[] make the roles */
                        if ((r = conn_stmt(&x->s->writer, STMT_JOB_COUNTER_UPSERT, &st)) < 0 ||
                            (r = db_bind_int(st, 1, x->job_pool[i].id)) < 0 ||
                            (r = db_bind_int(st, 2, x->role_ids[k])) < 0 ||
                            (r = bind_nullable_text(st, 3, b->counters[c].event)) < 0 ||
                            (r = db_bind_int(st, 4, b->counters[c].available)) < 0 ||
                            (r = db_execute(st, 0)) < 0)
                                return r;
                }
        return 0;
}

/* The jobs' exact counts (jobs[].events) join the job's sums of rows. */
static int add_exact_counts(IngestCtx *x) {
        const Batch *b = x->b;

        for (size_t i = 0; i < x->n_jobs; i++) {
                const JobAcc *j = &x->job_pool[i];

                for (size_t k = 0; j->meta && j->meta->events && k < b->n_roles; k++) {
                        int64_t count = j->meta->events->count[k];
                        EventAcc *e;
                        int r;

                        if (count == BATCH_NULL)
                                continue;
                        r = event_map_get(&x->job_events, j->id, 0, (int64_t) k, 0, &e);
                        if (r < 0)
                                return r;
                        e->exact_count = count;
                        e->exact_job = (size_t) (j->meta - b->jobs);
                }
        }
        return 0;
}

/* Why the job's sums of an event refused what the batch adds: its exact
 * count (jobs[].events) or the rows' counts. */
static int job_event_overflow(IngestCtx *x, const EventAcc *e) {
        const char *role = x->b->roles[e->key[2]], *job = job_of_id(x, e->key[0]);
        char field[48];
        DbStmt *st;
        int r, rc;

        if (e->exact_count != STORAGE_NULL) {
                if ((r = conn_stmt(&x->s->writer, STMT_JOB_EVENT_SUMS, &st)) < 0 ||
                    (r = db_bind_int(st, 1, e->key[0])) < 0 || (r = db_bind_int(st, 2, x->role_ids[e->key[2]])) < 0)
                        return r;
                rc = db_step(st);
                if (rc == 1 && !db_column_null(st, 1) && db_column_int(st, 1) > INT64_MAX - e->exact_count) {
                        db_reset(st);
                        snprintf(field, sizeof(field), "jobs[%zu].events", e->exact_job);
                        return overflow(x, field, "adding this batch's exact count of %s to job %s's would overflow",
                                        role, job);
                }
                db_reset(st);
                if (rc < 0)
                        return step_errno(rc);
        }
        return overflow(x, "rows", "adding this batch's %s to job %s's would overflow", role, job);
}

static int write_events(IngestCtx *x, const EventMap *m, Stmt id, const char *per) {
        for (size_t i = 0; i < m->n; i++) {
                const EventAcc *e = &m->pool[i];
                bool job = id == STMT_JOB_EVENT_UPSERT;
                DbStmt *st;
                int r, c = 1;

                if ((r = conn_stmt(&x->s->writer, id, &st)) < 0 ||
                    (r = db_bind_int(st, c++, e->key[0])) < 0 ||
                    (!job && (r = db_bind_int(st, c++, e->key[1])) < 0) ||
                    (r = db_bind_int(st, c++, x->role_ids[e->key[2]])) < 0 ||
                    (r = db_bind_int(st, c++, e->count)) < 0 ||
                    (r = db_bind_int(st, c++, e->samples)) < 0 ||
                    (r = db_bind_int(st, c++, e->cpu_time_ns)) < 0 ||
                    (r = db_bind_int(st, c++, e->instructions)) < 0 ||
                    (r = db_bind_int(st, c++, e->count_with_instructions)) < 0 ||
                    (job && (r = bind_nullable_int(st, c++, e->exact_count)) < 0))
                        return r;
                r = db_execute(st, 1);
                if (r == -EOVERFLOW)
                        return job ? job_event_overflow(x, e)
                                   : overflow(x, "rows", "adding this batch's %s to job %s's sums per %s would overflow",
                                              x->b->roles[e->key[2]], job_of_id(x, e->key[0]), per);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int write_bursts(IngestCtx *x) {
        for (size_t i = 0; i < x->bursts.n; i++) {
                const EventAcc *e = &x->bursts.pool[i];
                DbStmt *st;
                int r;

                if ((r = conn_stmt(&x->s->writer, STMT_JOB_BURST_UPSERT, &st)) < 0 ||
                    (r = db_bind_int(st, 1, e->key[0])) < 0 ||
                    (r = db_bind_int(st, 2, e->key[1])) < 0 ||
                    (r = db_bind_int(st, 3, e->key[2])) < 0 ||
                    (r = db_bind_int(st, 4, x->role_ids[e->key[3]])) < 0 ||
                    (r = db_bind_int(st, 5, e->bursts)) < 0 ||
                    (r = db_bind_int(st, 6, e->window_ns)) < 0 ||
                    (r = bind_sum(st, 7, e->burst_count)) < 0)
                        return r;
                r = db_execute(st, 1);
                if (r == -EOVERFLOW)
                        return overflow(x, "rows", "adding this batch's burst windows to job %s's would overflow",
                                        job_of_id(x, e->key[0]));
                if (r < 0)
                        return r;
        }
        return 0;
}

int ingest_measured(IngestCtx *x) {
        int r;

        if (x->b->n_roles == 0)
                return 0;
        if ((r = intern_roles(x)) < 0 ||
            (r = write_counters(x)) < 0 ||
            (r = add_exact_counts(x)) < 0 ||
            (r = write_events(x, &x->object_events, STMT_JOB_OBJECT_EVENT_UPSERT, "object")) < 0 ||
            (r = write_events(x, &x->phase_events, STMT_JOB_PHASE_EVENT_UPSERT, "phase")) < 0 ||
            (r = write_events(x, &x->job_events, STMT_JOB_EVENT_UPSERT, "job")) < 0)
                return r;
        return write_bursts(x);
}
