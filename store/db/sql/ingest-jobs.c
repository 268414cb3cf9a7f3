/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The jobs of one batch: their clusters, what is stored of them (do the
 * batch's sums still fit, does its metadata differ from the first claim),
 * their rows in jobs, their notes, their node and their time lines. Each
 * step is one statement for all the batch's jobs (conn_read_rows(),
 * conn_write_rows()), not one per job: on PostgreSQL every statement whose
 * answer is needed is a round trip to the server. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/ingest-jobs.h"

/* What check_job() compares, in the order the log names them. */
static const char *const differ_names[] = { "user", "account", "partition", "name", "nodes", "tasks", "notes" };
enum { DIFFERS_NOTES = 6 };

int ctx_job(IngestCtx *x, const char *job, JobAcc **ret) {
        JobAcc *j = hashmap_get(x->jobs, job);
        int r;

        if (!j) {
                if (x->n_jobs >= x->max_jobs)
                        return -ENOBUFS;
                j = &x->job_pool[x->n_jobs++];
                /* a slot keeps its pack's buffer from batch to batch */
                job_acc_clear(j);
                *j = (JobAcc) { .job = job, .cpu_time_ns = STORAGE_NULL, .cycles = STORAGE_NULL,
                                .instructions = STORAGE_NULL, .stored_id = STORAGE_NULL, .pack = j->pack };
                r = sample_pack_begin(&j->pack, x->b->frequency_hz);
                if (r < 0)
                        return r;
                r = hashmap_put(x->jobs, job, j);
                if (r < 0)
                        return r;
        }
        *ret = j;
        return 0;
}

/* A node that knows no cluster name may push a job's first batch before it
 * has read the job's SLURM_CLUSTER_NAME: the job is then the same one as
 * the one id on a named cluster. An unnamed copy is adopted by the first
 * named claim (check_jobs()); an unnamed claim joins the one named job of
 * that id (with two or more, it stays apart: which one is unknown). */
static int join_named_cluster(IngestCtx *x, JobAcc *j) {
        DbStmt *st;
        int r, rc, n = 0;

        if ((r = conn_stmt(&x->s->writer, STMT_JOB_NAMED_CLUSTER, &st)) < 0 ||
            (r = bind_nullable_text(st, 1, j->job)) < 0)
                return r;
        while ((rc = db_step(st)) == 1)
                if (n++ == 0) {
                        free(j->named_cluster);
                        j->named_cluster = strdup(db_column_text(st, 0));
                        if (!j->named_cluster) {
                                db_reset(st);
                                return -ENOMEM;
                        }
                }
        db_reset(st);
        if (rc != 0)
                return step_errno(rc);
        if (n == 1)
                j->cluster = j->named_cluster;
        return 0;
}

static int job_clusters(IngestCtx *x) {
        const Batch *b = x->b;
        int r;

        for (size_t i = 0; i < x->n_jobs; i++) {
                JobAcc *j = &x->job_pool[i];

                j->cluster = (j->meta ? j->meta->cluster : NULL) ?: b->cluster ?: "";
                if (!j->cluster[0] && (r = join_named_cluster(x, j)) < 0)
                        return r;
        }
        return 0;
}

static bool text_differs(DbStmt *st, int col, const char *claim) {
        const char *kept = db_column_text(st, col);

        return claim && kept && !streq(kept, claim);
}

static bool int_differs(DbStmt *st, int col, int64_t claim) {
        return claim != BATCH_NULL && !db_column_null(st, col) &&
                db_column_int(st, col) != claim;
}

/* The job's exact figures and energy from jobs[i] (columns 13 on of
 * STMT_JOBS_CURRENT) still fit. */
static int check_job_measured(IngestCtx *x, const JobAcc *j, DbStmt *st) {
        static const char *const exact[] = { "cpu_time_ns", "cycles", "instructions" };
        const BatchJob *m = j->meta;
        size_t i = (size_t) (m - x->b->jobs);
        const int64_t add[] = { m->cpu_time_ns, m->cycles, m->instructions };
        char field[48];

        if (!isnan(m->energy_joules) && !isfinite(db_column_double(st, 13) + m->energy_joules)) {
                snprintf(field, sizeof(field), "jobs[%zu].energy_joules", i);
                return overflow(x, field, "adding this batch's energy to job %s's is not finite", j->job);
        }
        for (size_t k = 0; k < ELEMENTSOF(exact); k++)
                if (!sum_fits(column_nullable_int(st, 15 + (int) k), add[k])) {
                        snprintf(field, sizeof(field), "jobs[%zu].%s", i, exact[k]);
                        return overflow(x, field, "adding this batch's exact %s to job %s's would overflow",
                                        exact[k], j->job);
                }
        return 0;
}

/* What is stored of a job (a row of STMT_JOBS_CURRENT, its place in the
 * pool first): do the batch's sums still fit, does its metadata claim
 * differ from the kept first claim. A field the batch leaves null, or that
 * nobody claimed yet, is no conflict; the same claim again (every node of
 * a multi-node job sends it, a node resends it after a restart) is none
 * either. The first job whose sum would overflow refuses the batch. */
static int check_job(DbStmt *st, void *userdata) {
        IngestCtx *x = userdata;
        int64_t place = db_column_int(st, 0);
        const BatchJob *m;
        JobAcc *j;
        int r;

        if (place < 0 || (size_t) place >= x->n_jobs)
                return -EPROTO;
        j = &x->job_pool[place];
        m = j->meta;
        j->stored_id = db_column_int(st, 1);
        j->app_by_note = db_column_int(st, 18) != 0;
        if (!sum_fits(db_column_int(st, 8), j->samples))
                return overflow(x, "rows", "adding this batch's samples to job %s's would overflow", j->job);
        if (!isfinite(db_column_double(st, 9) + j->cpu_seconds))
                return overflow(x, "rows", "adding this batch's CPU seconds to job %s's would overflow", j->job);
        if (!sum_fits(column_nullable_int(st, 10), j->cpu_time_ns))
                return overflow(x, "rows", "adding this batch's cpu_time_ns to job %s's would overflow", j->job);
        if (!sum_fits(column_nullable_int(st, 11), j->cycles))
                return overflow(x, "rows", "adding this batch's cycles to job %s's would overflow", j->job);
        if (!sum_fits(column_nullable_int(st, 12), j->instructions))
                return overflow(x, "rows", "adding this batch's instructions to job %s's would overflow", j->job);
        if (!m)
                return 0;
        r = check_job_measured(x, j, st);
        if (r < 0)
                return r;
        j->differs = (unsigned) text_differs(st, 2, m->user) << 0 |
                     (unsigned) text_differs(st, 3, m->account) << 1 |
                     (unsigned) text_differs(st, 4, m->partition) << 2 |
                     (unsigned) text_differs(st, 5, m->name) << 3 |
                     (unsigned) int_differs(st, 6, m->nodes) << 4 |
                     (unsigned) int_differs(st, 7, m->tasks) << 5;
        return 0;
}

static int bind_job_key_row(DbStmt *st, int k, size_t i, void *userdata) {
        const JobAcc *j = &((const IngestCtx *) userdata)->job_pool[i];
        int r;

        if ((r = db_bind_int(st, k, (int64_t) i)) < 0 ||
            (r = bind_nullable_text(st, k + 1, j->job)) < 0 ||
            (r = bind_nullable_text(st, k + 2, j->cluster)) < 0)
                return r;
        return 0;
}

/* x->rows_of[i]: the notes of stored jobs, as a job's place in the pool
 * times BATCH_MAX_NOTES plus the note's place in its jobs[] entry. */
static int bind_stored_note_row(DbStmt *st, int k, size_t i, void *userdata) {
        const IngestCtx *x = userdata;
        size_t place = x->rows_of[i];
        const JobAcc *j = &x->job_pool[place / BATCH_MAX_NOTES];
        int r;

        if ((r = db_bind_int(st, k, (int64_t) place)) < 0 ||
            (r = db_bind_int(st, k + 1, j->stored_id)) < 0 ||
            (r = bind_nullable_text(st, k + 2, j->meta->notes[place % BATCH_MAX_NOTES].key)) < 0)
                return r;
        return 0;
}

static int check_note(DbStmt *st, void *userdata) {
        IngestCtx *x = userdata;
        int64_t place = db_column_int(st, 0);
        JobAcc *j;

        if (place < 0 || (size_t) place / BATCH_MAX_NOTES >= x->n_jobs)
                return -EPROTO;
        j = &x->job_pool[place / BATCH_MAX_NOTES];
        if (text_differs(st, 1, j->meta->notes[place % BATCH_MAX_NOTES].value))
                j->differs |= 1u << DIFFERS_NOTES;
        return 0;
}

/* Counts the jobs whose claim differs from the stored one; the first of
 * the batch goes to the log, cut short if long. Values stay out of it:
 * free-text fields may hold control characters that have no place in a
 * log. */
static void note_conflicts(IngestCtx *x) {
        for (size_t i = 0; i < x->n_jobs; i++) {
                JobAcc *j = &x->job_pool[i];
                char differ[128] = "";

                if (!j->differs)
                        continue;
                j->conflicts = 1;
                if (x->conflicts++ > 0)
                        continue;
                for (size_t k = 0, len = 0; k < ELEMENTSOF(differ_names); k++)
                        if (j->differs & (1u << k))
                                len += (size_t) snprintf(differ + len, sizeof(differ) - len, "%s%s", len ? ", " : "",
                                                         differ_names[k]);
                if (snprintf(x->conflict, sizeof(x->conflict), "job %s%s%s: %s", j->job,
                             j->cluster[0] ? " on cluster " : "", j->cluster, differ) >= (int) sizeof(x->conflict))
                        x->conflict[sizeof(x->conflict) - 1] = 0;
        }
}

/* x->rows_of[i]: places of jobs to read. */
static int bind_job_key_of_row(DbStmt *st, int k, size_t i, void *userdata) {
        const IngestCtx *x = userdata;

        return bind_job_key_row(st, k, x->rows_of[i], userdata);
}

static int check_jobs(IngestCtx *x) {
        size_t n = 0;
        int r;

        r = conn_read_rows(&x->s->writer, STMT_JOBS_CURRENT, x->n_jobs, bind_job_key_row, check_job, x);
        if (r < 0)
                return r;
        /* The jobs of a named cluster stored under no cluster yet adopt
         * their unnamed copy, and are read again: most batches have none. */
        for (size_t i = 0; i < x->n_jobs; i++)
                if (x->job_pool[i].stored_id == STORAGE_NULL && x->job_pool[i].cluster[0])
                        x->rows_of[n++] = i;
        for (size_t i = 0; i < n; i++) {
                const JobAcc *j = &x->job_pool[x->rows_of[i]];
                DbStmt *st;

                if ((r = conn_stmt(&x->s->writer, STMT_JOB_ADOPT, &st)) < 0 ||
                    (r = bind_nullable_text(st, 1, j->job)) < 0 ||
                    (r = bind_nullable_text(st, 2, j->cluster)) < 0 ||
                    (r = db_execute(st, 0)) < 0)
                        return r;
        }
        r = conn_read_rows(&x->s->writer, STMT_JOBS_CURRENT, n, bind_job_key_of_row, check_job, x);
        if (r < 0)
                return r;
        n = 0;
        for (size_t i = 0; i < x->n_jobs; i++) {
                const JobAcc *j = &x->job_pool[i];

                for (size_t k = 0; j->stored_id != STORAGE_NULL && j->meta && k < j->meta->n_notes; k++)
                        x->rows_of[n++] = i * BATCH_MAX_NOTES + k;
        }
        r = conn_read_rows(&x->s->writer, STMT_NOTES_CURRENT, n, bind_stored_note_row, check_note, x);
        if (r < 0)
                return r;
        note_conflicts(x);
        return 0;
}

static int bind_job_row(DbStmt *st, int k, size_t i, void *userdata) {
        const IngestCtx *x = userdata;
        const Batch *b = x->b;
        const JobAcc *j = &x->job_pool[i];
        const BatchJob *m = j->meta;
        int r;

        if ((r = bind_nullable_text(st, k, j->job)) < 0 ||
            (r = bind_nullable_text(st, k + 1, j->cluster)) < 0 ||
            (r = bind_nullable_text(st, k + 2, m ? m->user : NULL)) < 0 ||
            (r = bind_nullable_text(st, k + 3, m ? m->account : NULL)) < 0 ||
            (r = bind_nullable_text(st, k + 4, m ? m->partition : NULL)) < 0 ||
            (r = bind_nullable_text(st, k + 5, m ? m->name : NULL)) < 0 ||
            (r = bind_nullable_int(st, k + 6, m ? m->nodes : BATCH_NULL)) < 0 ||
            (r = bind_nullable_int(st, k + 7, m ? m->tasks : BATCH_NULL)) < 0 ||
            (r = db_bind_int(st, k + 8, m && m->ended)) < 0 ||
            (r = bind_nullable_double(st, k + 9, m && !isnan(m->first_seen) ? m->first_seen : b->start)) < 0 ||
            (r = bind_nullable_double(st, k + 10, m && !isnan(m->last_seen) ? m->last_seen : b->end)) < 0 ||
            (r = db_bind_int(st, k + 11, j->samples)) < 0 ||
            (r = bind_sum(st, k + 12, j->cpu_seconds)) < 0 ||
            (r = bind_nullable_int(st, k + 13, j->cpu_time_ns)) < 0 ||
            (r = bind_nullable_int(st, k + 14, j->cycles)) < 0 ||
            (r = bind_nullable_int(st, k + 15, j->instructions)) < 0 ||
            (r = db_bind_int(st, k + 16, j->conflicts)) < 0 ||
            (r = bind_nullable_int(st, k + 17, x->node_type_id)) < 0 ||
            (r = bind_nullable_double(st, k + 18, m ? m->energy_joules : NAN)) < 0 ||
            (r = bind_nullable_double(st, k + 19, m ? m->energy_alone_joules : NAN)) < 0 ||
            (r = bind_nullable_int(st, k + 20, m ? m->cpu_time_ns : BATCH_NULL)) < 0 ||
            (r = bind_nullable_int(st, k + 21, m ? m->cycles : BATCH_NULL)) < 0 ||
            (r = bind_nullable_int(st, k + 22, m ? m->instructions : BATCH_NULL)) < 0 ||
            (r = db_bind_int(st, k + 23, m && m->opted_out)) < 0 ||
            (r = db_bind_int(st, k + 24, m && m->counters_released)) < 0)
                return r;
        return 0;
}

/* A row the upsert answered: the job's id, by its job id (a batch names
 * each job once). */
static int read_job_id(DbStmt *st, void *userdata) {
        IngestCtx *x = userdata;
        const char *job = db_column_text(st, 1);
        JobAcc *j = job ? hashmap_get(x->jobs, job) : NULL;

        if (!j)
                return -EPROTO;
        j->id = db_column_int(st, 0);
        return 0;
}

static int upsert_jobs(IngestCtx *x) {
        int r;

        for (size_t i = 0; i < x->n_jobs; i++)
                x->job_pool[i].id = 0;
        r = conn_read_rows(&x->s->writer, STMT_JOB_UPSERT, x->n_jobs, bind_job_row, read_job_id, x);
        if (r < 0)
                return r;
        /* a guard that refused a job's sums answered no row for it */
        for (size_t i = 0; i < x->n_jobs; i++)
                if (x->job_pool[i].id == 0)
                        return overflow(x, "rows", "adding this batch to job %s's sums would overflow",
                                        x->job_pool[i].job);
        return 0;
}

/* The batch in its jobs' time lines: as itself (grain 0), and added to
 * the bucket of each coarser grain it starts in (schema/0009). */
typedef struct TimelineRows {
        const IngestCtx *x;
        bool raw; /* grain 0: row i is job i; else job i / grains, grain i % grains */
} TimelineRows;

static int bind_timeline_row(DbStmt *st, int k, size_t i, void *userdata) {
        const TimelineRows *t = userdata;
        const IngestCtx *x = t->x;
        const Batch *b = x->b;
        size_t grains = ELEMENTSOF(timeline_grains);
        const JobAcc *j = &x->job_pool[t->raw ? i : i / grains];
        int64_t grain = t->raw ? 0 : timeline_grains[i % grains];
        int r;

        if ((r = db_bind_int(st, k++, j->id)) < 0 ||
            (!t->raw && (r = db_bind_int(st, k++, grain)) < 0) ||
            (r = db_bind_int(st, k++, x->node_id)) < 0 ||
            (r = bind_nullable_double(st, k++, t->raw ? b->start : floor(b->start / (double) grain) * (double) grain)) < 0 ||
            (r = bind_nullable_double(st, k++, b->end - b->start)) < 0 ||
            (r = db_bind_int(st, k++, j->samples)) < 0 ||
            (r = bind_sum(st, k++, j->cpu_seconds)) < 0)
                return r;
        return 0;
}

static int write_timelines(IngestCtx *x) {
        TimelineRows raw = { x, true }, grains = { x, false };
        int r;

        r = conn_write_rows(&x->s->writer, STMT_JOB_BATCH_UPSERT, x->n_jobs, bind_timeline_row, &raw, true);
        if (r >= 0)
                r = conn_write_rows(&x->s->writer, STMT_JOB_GRAIN_UPSERT, x->n_jobs * ELEMENTSOF(timeline_grains),
                                    bind_timeline_row, &grains, true);
        if (r == -EOVERFLOW)
                return overflow(x, "rows", "adding this batch to the time line of one of its jobs on node %s would "
                                "overflow", x->b->node);
        return r;
}

/* A job listed in the batch ran on this node, samples or not. */
static int bind_job_node_row(DbStmt *st, int k, size_t i, void *userdata) {
        const IngestCtx *x = userdata;
        const Batch *b = x->b;
        const JobAcc *j = &x->job_pool[i];
        const BatchJob *m = j->meta;
        int r;

        if ((r = db_bind_int(st, k, j->id)) < 0 ||
            (r = db_bind_int(st, k + 1, x->node_id)) < 0 ||
            (r = db_bind_int(st, k + 2, j->samples)) < 0 ||
            /* lmkd's first and last sight of the job here, else the interval */
            (r = bind_nullable_double(st, k + 3, m && !isnan(m->first_seen) ? m->first_seen : b->start)) < 0 ||
            (r = bind_nullable_double(st, k + 4, m && !isnan(m->last_seen) ? m->last_seen : b->end)) < 0 ||
            (r = bind_sum(st, k + 5, j->cpu_seconds)) < 0 ||
            (r = bind_nullable_int(st, k + 6, m ? m->cpus_allocated : BATCH_NULL)) < 0 ||
            (r = bind_nullable_int(st, k + 7, x->node_type_id)) < 0 ||
            (r = bind_nullable_double(st, k + 8, m ? m->energy_joules : NAN)) < 0 ||
            (r = bind_nullable_double(st, k + 9, m ? m->energy_alone_joules : NAN)) < 0)
                return r;
        return 0;
}

static int write_job_nodes(IngestCtx *x) {
        int r = conn_write_rows(&x->s->writer, STMT_JOB_NODE_UPSERT, x->n_jobs, bind_job_node_row, x, true);

        if (r == -EOVERFLOW)
                return overflow(x, "rows", "adding this batch to the samples of one of its jobs on node %s would "
                                "overflow", x->b->node);
        return r;
}

/* x->rows_of[i]: the notes of the jobs that came with metadata, as a
 * job's place times BATCH_MAX_NOTES plus the note's place. */
static int bind_note_row(DbStmt *st, int k, size_t i, void *userdata) {
        const IngestCtx *x = userdata;
        size_t place = x->rows_of[i];
        const JobAcc *j = &x->job_pool[place / BATCH_MAX_NOTES];
        const BatchNote *n = &j->meta->notes[place % BATCH_MAX_NOTES];
        int r;

        if ((r = db_bind_int(st, k, j->id)) < 0 ||
            (r = bind_nullable_text(st, k + 1, n->key)) < 0 ||
            (r = bind_nullable_text(st, k + 2, n->value)) < 0)
                return r;
        return 0;
}

static int write_job_notes(IngestCtx *x) {
        size_t n = 0;

        for (size_t i = 0; i < x->n_jobs; i++) {
                const BatchJob *m = x->job_pool[i].meta;

                for (size_t k = 0; m && k < m->n_notes; k++)
                        x->rows_of[n++] = i * BATCH_MAX_NOTES + k;
        }
        return conn_write_rows(&x->s->writer, STMT_NOTE_UPSERT, n, bind_note_row, x, false);
}

int ingest_jobs(IngestCtx *x) {
        const Batch *b = x->b;
        double cps = 1.0 / b->frequency_hz;
        JobAcc *j;
        int r;

        for (size_t i = 0; i < b->n_jobs; i++) {
                r = ctx_job(x, b->jobs[i].job, &j);
                if (r < 0)
                        return r;
                j->meta = &b->jobs[i];
                /* an opted-out job's samples come without rows (--lmk=off) */
                j->samples += b->jobs[i].samples;
                j->cpu_seconds += (double) b->jobs[i].samples * cps;
        }
        for (size_t i = 0; i < b->n_rows; i++) {
                const BatchRow *row = &b->rows[i];

                if (!row->job)
                        continue;
                r = ctx_job(x, row->job, &j);
                if (r < 0)
                        return r;
                j->samples += row->samples;
                j->cpu_seconds += (double) row->samples * cps;
                add_counter(&j->cpu_time_ns, row->cpu_time_ns);
                add_counter(&j->cycles, row->cycles);
                add_counter(&j->instructions, row->instructions);
        }
        for (size_t i = 0; i < b->n_markers; i++)
                if (b->markers[i].job && (r = ctx_job(x, b->markers[i].job, &j)) < 0)
                        return r;
        for (size_t i = 0; i < b->n_ranks; i++)
                if ((r = ctx_job(x, b->ranks[i].job, &j)) < 0)
                        return r;

        if ((r = job_clusters(x)) < 0 ||
            (r = check_jobs(x)) < 0 ||
            (r = upsert_jobs(x)) < 0 ||
            (r = write_job_notes(x)) < 0 ||
            (r = write_job_nodes(x)) < 0 ||
            (r = write_timelines(x)) < 0)
                return r;
        return 0;
}
