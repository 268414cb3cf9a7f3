/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Storing one batch, inside the savepoint the write queue opened for it:
 * its node, its receipt (which tells a batch stored before), its jobs with
 * their time lines, its rows (packed per job) and their rollups, the jobs'
 * applications and the application mix, the site-wide object sums,
 * markers, ranks, functions, the node's software inventory and what lmkd
 * measures beyond samples (node type, energy, exact figures, counters,
 * named events, bursts). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "db/sql/ingest-app-mix.h"
#include "db/sql/ingest-functions.h"
#include "db/sql/ingest-inventory.h"
#include "db/sql/ingest-jobs.h"
#include "db/sql/ingest-measured.h"
#include "db/sql/ingest.h"

/* The node's upsert refused the batch: which of its sums would overflow. */
static int node_overflow(IngestCtx *x) {
        const Batch *b = x->b;
        DbStmt *st;
        int r, rc;

        if ((r = conn_stmt(&x->s->writer, STMT_NODE_SUMS, &st)) < 0 ||
            (r = bind_nullable_text(st, 1, b->node)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1) {
                int64_t samples = db_column_int(st, 0), lost = db_column_int(st, 1),
                        batches = db_column_int(st, 2);

                db_reset(st);
                if (!sum_fits(samples, b->total_samples))
                        return overflow(x, "rows", "adding this batch's samples to node %s's would overflow", b->node);
                if (!sum_fits(lost, b->samples_lost))
                        return overflow(x, "sampling.samples_lost",
                                        "adding to node %s's lost samples would overflow", b->node);
                if (!sum_fits(batches, 1))
                        return overflow(x, "batch.seq", "node %s has stored too many batches to count", b->node);
        } else if (rc != 0)
                return step_errno(rc);
        return overflow(x, "rows", "adding this batch to node %s's sums would overflow", b->node);
}

/* Whether the writer's statements may answer later (PostgreSQL's
 * pipeline): then the first attempt at a batch does not wait for answers
 * it can foresee (its node's id, that the batch is new). Each such guess
 * is checked by its statement's min_changes, and a wrong one (-EOVERFLOW)
 * has the write queue store the batch again, in order, without guesses. */
static bool answers_later(const IngestCtx *x) {
        return x->s->writer.db->driver->set_deferring && !x->in_order;
}

static int ingest_node(IngestCtx *x, int64_t now) {
        const Batch *b = x->b;
        DbStmt *st;
        int r;

        r = ingest_node_type(x);
        if (r < 0)
                return r;
        if ((r = conn_stmt(&x->s->writer, STMT_NODE_UPSERT, &st)) < 0 ||
            (r = bind_nullable_text(st, 1, b->node)) < 0 ||
            (r = bind_nullable_text(st, 2, b->hostname)) < 0 ||
            (r = bind_nullable_text(st, 3, b->cluster)) < 0 ||
            (r = db_bind_int(st, 4, b->cpus)) < 0 ||
            (r = bind_nullable_text(st, 5, b->boot_id)) < 0 ||
            (r = db_bind_int(st, 6, b->seq)) < 0 ||
            (r = bind_nullable_double(st, 7, b->start)) < 0 ||
            (r = bind_nullable_double(st, 8, b->end)) < 0 ||
            (r = db_bind_int(st, 9, now)) < 0 ||
            (r = db_bind_int(st, 10, b->total_samples)) < 0 ||
            (r = db_bind_int(st, 11, b->samples_lost)) < 0 ||
            (r = bind_nullable_int(st, 12, x->node_type_id)) < 0 ||
            (r = bind_nullable_int(st, 13, b->node_type ? b->node_type->memory_bytes : BATCH_NULL)) < 0 ||
            (r = bind_nullable_text(st, 14, b->node_type ? b->node_type->kernel : NULL)) < 0)
                return r;
        /* The guards in the upsert refuse sums that would overflow; only
         * then are the node's sums read, to name the field. */
        if (answers_later(x) && node_id_cached(x->s, b->node, &x->node_id))
                r = db_execute(st, 1);
        else {
                r = step_id(st, &x->node_id);
                if (r == -ENOENT)
                        return node_overflow(x);
                if (r >= 0 && answers_later(x))
                        r = node_id_remember(x->s, b->node, x->node_id);
        }
        if (r < 0 || !b->has_installed)
                return r;

        /* what the node has installed: rewritten only when it changed */
        _cleanup_free_ char *installed = NULL;
        size_t len = 0;
        installed = calloc(1, b->n_installed * (2 * BATCH_MAX_FAMILY_NAME + 2) + 1);
        if (!installed)
                return -ENOMEM;
        for (size_t i = 0; i < b->n_installed; i++)
                len += (size_t) sprintf(installed + len, "%s%s:%s", i ? " " : "", b->installed[i].purpose,
                                        b->installed[i].family);
        if ((r = conn_stmt(&x->s->writer, STMT_NODE_INSTALLED, &st)) < 0 ||
            (r = db_bind_int(st, 1, x->node_id)) < 0 ||
            (r = bind_nullable_text(st, 2, installed)) < 0)
                return r;
        return db_execute(st, 0);
}

/* What the batch's key (node, boot id, spool, seq) found. */
typedef enum BatchKey {
        BATCH_KEY_NEW,
        BATCH_KEY_SAME,         /* stored before with the same digest (a retry), or before digests */
        BATCH_KEY_OTHER,        /* stored before with other content */
} BatchKey;

static int batch_key_stored(IngestCtx *x, BatchKey *ret) {
        const Batch *b = x->b;
        DbStmt *st;
        int r, rc;

        if ((r = conn_stmt(&x->s->writer, STMT_BATCH_SAME, &st)) < 0 ||
            (r = db_bind_blob(st, 1, b->digest, sizeof(b->digest))) < 0 ||
            (r = db_bind_int(st, 2, x->node_id)) < 0 ||
            (r = bind_nullable_text(st, 3, b->boot_id)) < 0 ||
            (r = db_bind_text(st, 4, b->spool ?: "")) < 0 ||
            (r = db_bind_int(st, 5, b->seq)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1) {
                bool none = db_column_null(st, 0);
                int64_t same = db_column_int(st, 0);

                db_reset(st);
                /* the insert found the key, under the node's lock: it is
                 * there */
                if (none) {
                        db_error_note("batch %s/%s/%s/%" PRId64 ": its key was stored, yet no row of it is found",
                                      b->node, b->boot_id, b->spool ?: "", b->seq);
                        return -EIO;
                }
                *ret = same ? BATCH_KEY_SAME : BATCH_KEY_OTHER;
                return 0;
        }
        db_reset(st);
        return rc < 0 ? step_errno(rc) : -EIO;
}

static int ingest_batch_row(IngestCtx *x, int64_t now, BatchKey *ret) {
        const Batch *b = x->b;
        int64_t changed;
        DbStmt *st;
        int r;

        if ((r = conn_stmt(&x->s->writer, STMT_BATCH_INSERT, &st)) < 0 ||
            (r = db_bind_int(st, 1, x->node_id)) < 0 ||
            (r = bind_nullable_text(st, 2, b->boot_id)) < 0 ||
            (r = db_bind_int(st, 3, b->seq)) < 0 ||
            (r = db_bind_int(st, 4, now)) < 0 ||
            (r = bind_nullable_double(st, 5, b->start)) < 0 ||
            (r = bind_nullable_double(st, 6, b->end)) < 0 ||
            (r = bind_nullable_text(st, 7, b->event)) < 0 ||
            (r = bind_nullable_double(st, 8, b->frequency_hz)) < 0 ||
            (r = db_bind_int(st, 9, b->samples_lost)) < 0 ||
            (r = db_bind_int(st, 10, (int64_t) b->n_rows)) < 0 ||
            (r = db_bind_int(st, 11, b->total_samples)) < 0 ||
            (r = bind_nullable_double(st, 12, b->energy ? b->energy->joules : NAN)) < 0 ||
            (r = bind_nullable_double(st, 13, batch_dram_joules(b))) < 0 ||
            (r = bind_nullable_double(st, 14, b->energy ? b->energy->unattributed_joules : NAN)) < 0 ||
            (r = db_bind_text(st, 15, b->spool ?: "")) < 0 ||
            (r = db_bind_blob(st, 16, b->digest, sizeof(b->digest))) < 0)
                return r;
        /* Most batches are new; one stored before inserts no row, and is
         * stored again in order, which then asks what was stored. */
        if (answers_later(x)) {
                r = db_execute(st, 1);
                if (r >= 0)
                        *ret = BATCH_KEY_NEW;
                return r;
        }
        r = step_changes(st, &changed);
        if (r < 0)
                return r;
        if (changed > 0) {
                *ret = BATCH_KEY_NEW;
                return 0;
        }
        return batch_key_stored(x, ret);
}

/* Each row into its job's pack (or that of work outside jobs) and the
 * rollups' sums. */
static int ingest_rows(IngestCtx *x) {
        SqlStorage *s = x->s;
        const Batch *b = x->b;
        double cps = 1.0 / b->frequency_hz;
        /* looked up before, and no cache was cleared since (a rollback
         * takes the ids it interned with it) */
        bool looked_up = x->ids_ok && x->ids_generation == caches_generation(s);
        int r;

        r = sample_pack_begin(&x->outside, b->frequency_hz);
        if (r < 0)
                return r;
        for (size_t i = 0; i < b->n_rows; i++) {
                const BatchRow *row = &b->rows[i];
                JobAcc *j = row->job ? hashmap_get(x->jobs, row->job) : NULL;
                int64_t job_id = j ? j->id : 0;
                SampleRow packed = { .samples = row->samples, .cpu_time_ns = row->cpu_time_ns,
                                     .cycles = row->cycles, .instructions = row->instructions };
                double cpu_seconds = (double) row->samples * cps;

                if (looked_up) {
                        packed.object_id = x->row_ids[3 * i];
                        packed.phase_id = x->row_ids[3 * i + 1];
                        packed.task_id = x->row_ids[3 * i + 2];
                } else if ((r = intern(s, s->object_ids, STMT_OBJECT_SELECT, STMT_OBJECT_INSERT,
                                       row->object, code_kind_to_string(row->kind), row->build_id, 3,
                                       &packed.object_id)) < 0 ||
                           (r = intern(s, s->phase_ids, STMT_PHASE_SELECT, STMT_PHASE_INSERT,
                                       row->phase, NULL, NULL, 1, &packed.phase_id)) < 0 ||
                           (r = intern(s, s->task_ids, STMT_TASK_SELECT, STMT_TASK_INSERT,
                                       row->step, row->user, row->comm, 3, &packed.task_id)) < 0)
                        return r;
                /* for the functions of the row (ingest_functions()) */
                x->row_ids[3 * i] = packed.object_id;
                x->row_ids[3 * i + 1] = packed.phase_id;
                x->row_ids[3 * i + 2] = packed.task_id;
                r = sample_pack_add(j ? &j->pack : &x->outside, &packed);
                if (r < 0)
                        return r;

                if (job_id != 0 &&
                    ((r = acc_add(&x->job_objects, job_id, packed.object_id, row, cpu_seconds)) < 0 ||
                     (r = acc_add(&x->job_phases, job_id, packed.phase_id, row, cpu_seconds)) < 0 ||
                     (r = acc_add(&x->job_tasks, job_id, packed.task_id, row, cpu_seconds)) < 0))
                        return r;
                r = acc_add(&x->object_hours, packed.object_id, 0, row, cpu_seconds);
                if (r < 0)
                        return r;
                r = measured_add_row(x, i, job_id, packed.object_id, packed.phase_id);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The packs of the batch's jobs that had rows (x->packs), and of work
 * outside jobs (job 0). */
static int bind_pack_row(DbStmt *st, int k, size_t i, void *userdata) {
        const IngestCtx *x = userdata;
        const Batch *b = x->b;
        const JobAcc *j = x->packs[i];
        const SamplePack *p = j ? &j->pack : &x->outside;
        int r;

        if ((r = db_bind_int(st, k, j ? j->id : 0)) < 0 ||
            (r = db_bind_int(st, k + 1, x->bucket)) < 0 ||
            (r = db_bind_int(st, k + 2, x->node_id)) < 0 ||
            (r = bind_nullable_text(st, k + 3, b->boot_id)) < 0 ||
            (r = db_bind_text(st, k + 4, b->spool ?: "")) < 0 ||
            (r = db_bind_int(st, k + 5, b->seq)) < 0 ||
            (r = db_bind_int(st, k + 6, p->n_rows)) < 0 ||
            (r = db_bind_int(st, k + 7, p->samples)) < 0 ||
            (r = db_bind_blob(st, k + 8, p->data, p->len)) < 0)
                return r;
        return 0;
}

/* The raw rows: one pack per job of the batch that had rows, and one of
 * work outside jobs. */
static int write_packs(IngestCtx *x) {
        size_t n = 0;

        for (size_t i = 0; i < x->n_jobs; i++)
                if (x->job_pool[i].pack.n_rows > 0)
                        x->packs[n++] = &x->job_pool[i];
        if (x->outside.n_rows > 0)
                x->packs[n++] = NULL;
        return conn_write_rows(&x->s->writer, STMT_SAMPLE_PACK_INSERT, n, bind_pack_row, x, false);
}

static int bind_job_task_row(DbStmt *st, int k, size_t i, void *userdata) {
        const Acc *a = &((const AccMap *) userdata)->pool[i];
        int r;

        if ((r = db_bind_int(st, k, a->a)) < 0 ||
            (r = db_bind_int(st, k + 1, a->b)) < 0 ||
            (r = db_bind_int(st, k + 2, a->samples)) < 0)
                return r;
        return 0;
}

static int write_job_tasks(IngestCtx *x) {
        int r = conn_write_rows(&x->s->writer, STMT_JOB_TASK_UPSERT, x->job_tasks.n, bind_job_task_row,
                                &x->job_tasks, true);

        if (r == -EOVERFLOW)
                return overflow(x, "rows", "adding this batch to a job's stored sums per task would overflow");
        return r;
}

static int bind_rollup_row(DbStmt *st, int k, size_t i, void *userdata) {
        const Acc *a = &((const AccMap *) userdata)->pool[i];
        int r;

        if ((r = db_bind_int(st, k, a->a)) < 0 ||
            (r = db_bind_int(st, k + 1, a->b)) < 0 ||
            (r = db_bind_int(st, k + 2, a->samples)) < 0 ||
            (r = bind_sum(st, k + 3, a->cpu_seconds)) < 0 ||
            (r = bind_nullable_int(st, k + 4, a->cpu_time_ns)) < 0 ||
            (r = bind_nullable_int(st, k + 5, a->cycles)) < 0 ||
            (r = bind_nullable_int(st, k + 6, a->instructions)) < 0 ||
            (r = db_bind_int(st, k + 7, a->multiplexed_samples)) < 0)
                return r;
        return 0;
}

static int write_rollup(IngestCtx *x, const AccMap *m, Stmt id, const char *what) {
        int r = conn_write_rows(&x->s->writer, id, m->n, bind_rollup_row, (void *) m, true);

        if (r == -EOVERFLOW)
                return overflow(x, "rows", "adding this batch to a job's stored sums per %s would overflow", what);
        return r;
}

/* After the batch's rollups: the application of each job it touched. A
 * job named by its app= note keeps that name: the note's first claim
 * stays (STMT_NOTE_UPSERT), whatever else the batch brings. */
static int update_apps(IngestCtx *x) {
        for (size_t i = 0; i < x->n_jobs; i++) {
                DbStmt *st;
                int r;

                if (x->job_pool[i].app_by_note)
                        continue;
                if ((r = conn_stmt(&x->s->writer, STMT_JOB_APP, &st)) < 0 ||
                    (r = db_bind_int(st, 1, x->job_pool[i].id)) < 0 ||
                    (r = db_execute(st, 0)) < 0)
                        return r;
        }
        return 0;
}

typedef struct ObjectSumRows {
        const IngestCtx *x;
        int64_t bucket; /* the start of the batch's hour, day, week or four weeks */
} ObjectSumRows;

static int bind_object_sum_row(DbStmt *st, int k, size_t i, void *userdata) {
        const ObjectSumRows *o = userdata;
        const Acc *a = &o->x->object_hours.pool[i];
        int r;

        if ((r = db_bind_int(st, k, o->bucket)) < 0 ||
            (r = db_bind_int(st, k + 1, a->a)) < 0 ||
            (r = db_bind_int(st, k + 2, a->samples)) < 0 ||
            (r = bind_sum(st, k + 3, a->cpu_seconds)) < 0)
                return r;
        return 0;
}

/* When each object with samples was last used (the unused-software
 * list): those of object_hours that x->seen[0 … n) points at. */
static int bind_last_seen_row(DbStmt *st, int k, size_t i, void *userdata) {
        const IngestCtx *x = userdata;
        int r;

        if ((r = db_bind_int(st, k, x->object_hours.pool[x->seen[i]].a)) < 0 ||
            (r = db_bind_int(st, k + 1, x->bucket)) < 0)
                return r;
        return 0;
}

/* Site-wide time per object, in the batch's hour, day, week and four weeks. */
static int write_object_sums(IngestCtx *x) {
        static const struct {
                Stmt stmt;
                int64_t seconds;
                const char *name;
        } grains[] = {
                { STMT_OBJECT_HOUR_UPSERT, BUCKET_SECONDS, "hour" },
                { STMT_OBJECT_DAY_UPSERT, DAY_SECONDS, "day" },
                { STMT_OBJECT_WEEK_UPSERT, WEEK_SECONDS, "week" },
                { STMT_OBJECT_PERIOD_UPSERT, PERIOD_SECONDS, "four weeks" },
        };
        size_t n = 0;
        int r;

        for (size_t g = 0; g < ELEMENTSOF(grains); g++) {
                ObjectSumRows o = { x, x->bucket - x->bucket % grains[g].seconds };

                r = conn_write_rows(&x->s->writer, grains[g].stmt, x->object_hours.n, bind_object_sum_row, &o, true);
                if (r == -EOVERFLOW)
                        return overflow(x, "rows", "adding this batch to the site-wide samples of an "
                                        "object in that %s would overflow", grains[g].name);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < x->object_hours.n; i++)
                if (x->object_hours.pool[i].samples > 0)
                        x->seen[n++] = i;
        return conn_write_rows(&x->s->writer, STMT_OBJECT_LAST_SEEN, n, bind_last_seen_row, x, false);
}

static int ingest_markers(IngestCtx *x) {
        const Batch *b = x->b;

        for (size_t i = 0; i < b->n_markers; i++) {
                const BatchMarker *m = &b->markers[i];
                int64_t job_id = m->job ? ((JobAcc *) hashmap_get(x->jobs, m->job))->id : 0;
                DbStmt *st;
                int r;

                /* markers outside jobs are the site's (job 0) */
                if (job_id == 0 && (r = conn_lock_site(&x->s->writer)) < 0)
                        return r;
                if ((r = conn_stmt(&x->s->writer, STMT_MARKER_UPSERT, &st)) < 0 ||
                    (r = db_bind_int(st, 1, job_id)) < 0 ||
                    (r = bind_nullable_text(st, 2, m->comm)) < 0 ||
                    (r = bind_nullable_text(st, 3, m->phase)) < 0 ||
                    (r = bind_nullable_text(st, 4, m->state)) < 0 ||
                    (r = bind_nullable_double(st, 5, b->start)) < 0 ||
                    (r = bind_nullable_double(st, 6, b->end)) < 0 ||
                    (r = db_execute(st, 0)) < 0)
                        return r;
        }
        return 0;
}

static int ingest_ranks(IngestCtx *x) {
        SqlStorage *s = x->s;
        const Batch *b = x->b;
        double cps = 1.0 / b->frequency_hz;

        for (size_t i = 0; i < b->n_ranks; i++) {
                const BatchRank *k = &b->ranks[i];
                int64_t job_id = ((JobAcc *) hashmap_get(x->jobs, k->job))->id, phase_id;
                DbStmt *st;
                int r;

                if ((r = intern(s, s->phase_ids, STMT_PHASE_SELECT, STMT_PHASE_INSERT,
                                k->phase, NULL, NULL, 1, &phase_id)) < 0)
                        return r;
                if ((r = conn_stmt(&s->writer, STMT_RANK_UPSERT, &st)) < 0 ||
                    (r = db_bind_int(st, 1, job_id)) < 0 ||
                    (r = bind_nullable_text(st, 2, k->step)) < 0 ||
                    (r = db_bind_int(st, 3, k->rank)) < 0 ||
                    (r = db_bind_int(st, 4, phase_id)) < 0 ||
                    (r = db_bind_int(st, 5, k->samples)) < 0 ||
                    (r = db_bind_int(st, 6, k->comm_samples)) < 0 ||
                    (r = bind_sum(st, 7, (double) k->samples * cps)) < 0 ||
                    (r = bind_sum(st, 8, (double) k->comm_samples * cps)) < 0 ||
                    (r = bind_nullable_double(st, 9, k->first)) < 0 ||
                    (r = bind_nullable_double(st, 10, k->last)) < 0)
                        return r;
                r = db_execute(st, 1);
                if (r == -EOVERFLOW) {
                        char field[32];

                        snprintf(field, sizeof(field), "ranks[%zu]", i);
                        return overflow(x, field, "adding this rank's samples to its stored sums would overflow");
                }
                if (r < 0)
                        return r;
        }
        return 0;
}

int ingest_locked(IngestCtx *x, int64_t now, IngestResult *ret) {
        BatchKey key = BATCH_KEY_NEW;
        int r;

        r = ingest_node(x, now);
        if (r < 0)
                return r;
        r = ingest_batch_row(x, now, &key);
        if (r < 0)
                return r;
        if (key != BATCH_KEY_NEW) {
                *ret = (IngestResult) { .duplicate = key == BATCH_KEY_SAME, .conflicting = key == BATCH_KEY_OTHER,
                                        .rows = x->b->n_rows };
                return 0;
        }
        if ((r = ingest_jobs(x)) < 0 ||
            (r = ingest_rows(x)) < 0 ||
            (r = write_packs(x)) < 0 ||
            (r = write_rollup(x, &x->job_objects, STMT_JOB_OBJECT_UPSERT, "object")) < 0 ||
            (r = write_rollup(x, &x->job_phases, STMT_JOB_PHASE_UPSERT, "phase")) < 0 ||
            (r = write_job_tasks(x)) < 0 ||
            (r = update_apps(x)) < 0 ||
            (r = update_app_mix(x)) < 0 ||
            (r = write_object_sums(x)) < 0 ||
            (r = ingest_markers(x)) < 0 ||
            (r = ingest_ranks(x)) < 0 ||
            (r = ingest_functions(x)) < 0 ||
            (r = ingest_inventory(x, now)) < 0 ||
            (r = ingest_measured(x)) < 0)
                return r;
        *ret = (IngestResult) { .duplicate = false, .rows = x->b->n_rows, .metadata_conflicts = x->conflicts };
        memcpy(ret->conflict, x->conflict, sizeof(ret->conflict));
        return 0;
}
