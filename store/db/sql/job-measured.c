/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What lmkd measured of a job beyond samples (get_job): its nodes' type,
 * the counters that filled each role, its named events in all, per object
 * and per phase, and its burst windows per code location (schema/0015).
 * Sums only; rates are worked out above storage (store/analysis/measured.h). */
#include <errno.h>
#include <stdlib.h>

#include "db/sql/sql-internal.h"

static int64_t count_or_zero(DbStmt *st, int col) {
        return db_column_null(st, col) ? 0 : db_column_int(st, col);
}

/* A node type from NODE_TYPE_COLUMNS at col (statements.c); all zero and
 * NULL when the row's type is not known (a LEFT JOIN without a match). */
int read_node_type(DbStmt *st, int col, NodeTypeInfo *ret) {
        NodeTypeInfo t = {};
        int r = 0;

        if (!db_column_null(st, col)) {
                t = (NodeTypeInfo) {
                        .id = db_column_int(st, col),
                        .name = column_strdup(st, col + 1, &r),
                        .cpu_model = column_strdup(st, col + 2, &r),
                        .sockets = count_or_zero(st, col + 3),
                        .cores = count_or_zero(st, col + 4),
                        .threads = count_or_zero(st, col + 5),
                        .memory_gib = count_or_zero(st, col + 6),
                        .gpus = column_strdup(st, col + 7, &r),
                };
                if (r < 0) {
                        node_type_info_free(&t);
                        return r;
                }
        }
        *ret = t;
        return 0;
}

/* The type of all the job's nodes; nothing when not known or they differ. */
int read_job_node_type(Conn *c, int64_t job_id, NodeTypeInfo *ret) {
        DbStmt *st;
        int r, rc;

        *ret = (NodeTypeInfo) {};
        if ((r = conn_stmt(c, STMT_JOB_NODE_TYPE, &st)) < 0 || (r = db_bind_int(st, 1, job_id)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1)
                r = read_node_type(st, 0, ret);
        else if (rc != 0)
                r = step_errno(rc);
        db_reset(st);
        return r;
}

static int read_counters(Conn *c, int64_t job_id, JobMeasured *m) {
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        if ((r = conn_stmt(c, STMT_JOB_COUNTERS, &st)) < 0 || (r = db_bind_int(st, 1, job_id)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                JobCounter *k;

                r = grow((void **) &m->counters, m->n_counters, &alloc, sizeof(JobCounter));
                if (r < 0)
                        return r;
                k = &m->counters[m->n_counters++];
                k->role = column_strdup(st, 0, &r);
                k->event = column_strdup(st, 1, &r);
                k->available = db_column_int(st, 2) != 0;
                if (r < 0)
                        return r;
        }
        return rc == 0 ? 0 : step_errno(rc);
}

/* Event sums of statement id (name, role, count, samples, cpu_time_ns,
 * instructions, count_with_instructions[, exact_count]): the job's own
 * all, of the others at most max rows, *truncated when there were more. */
static int read_event_sums(Conn *c, Stmt id, int64_t job_id, size_t max, EventSum **v, size_t *n, bool *truncated) {
        bool own = id == STMT_JOB_EVENTS;
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        if ((r = conn_stmt(c, id, &st)) < 0 || (r = db_bind_int(st, 1, job_id)) < 0 ||
            (!own && (r = db_bind_int(st, 2, (int64_t) max + 1)) < 0))
                return r;
        while ((rc = db_step(st)) == 1) {
                EventSum *e;

                if (!own && *n == max) {
                        *truncated = true;
                        rc = 0;
                        break;
                }
                r = grow((void **) v, *n, &alloc, sizeof(EventSum));
                if (r < 0)
                        return r;
                e = &(*v)[(*n)++];
                *e = (EventSum) {
                        .name = column_strdup(st, 0, &r),
                        .role = column_strdup(st, 1, &r),
                        .count = db_column_int(st, 2),
                        .samples = db_column_int(st, 3),
                        .cpu_time_ns = db_column_int(st, 4),
                        .instructions = db_column_int(st, 5),
                        .count_with_instructions = db_column_int(st, 6),
                        .exact_count = own ? column_nullable_int(st, 7) : STORAGE_NULL,
                };
                if (r < 0)
                        return r;
        }
        db_reset(st);
        return rc == 0 ? 0 : step_errno(rc);
}

static int read_bursts(Conn *c, int64_t job_id, JobMeasured *m) {
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        if ((r = conn_stmt(c, STMT_JOB_BURSTS, &st)) < 0 || (r = db_bind_int(st, 1, job_id)) < 0 ||
            (r = db_bind_int(st, 2, JOB_SUMMARY_MAX_BURSTS + 1)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                BurstSum *b;

                if (m->n_bursts == JOB_SUMMARY_MAX_BURSTS) {
                        m->bursts_truncated = true;
                        rc = 0;
                        break;
                }
                r = grow((void **) &m->bursts, m->n_bursts, &alloc, sizeof(BurstSum));
                if (r < 0)
                        return r;
                b = &m->bursts[m->n_bursts++];
                *b = (BurstSum) {
                        .object = column_strdup(st, 0, &r),
                        .phase = column_strdup(st, 1, &r),
                        .role = column_strdup(st, 2, &r),
                        .bursts = db_column_int(st, 3),
                        .window_ns = db_column_int(st, 4),
                        .count = db_column_double(st, 5),
                };
                if (r < 0)
                        return r;
        }
        db_reset(st);
        return rc == 0 ? 0 : step_errno(rc);
}

int read_job_measured(Conn *c, int64_t job_id, JobMeasured *ret) {
        JobMeasured m = {};
        size_t left;
        int r;

        if ((r = read_job_node_type(c, job_id, &m.node_type)) < 0 ||
            (r = read_counters(c, job_id, &m)) < 0 ||
            (r = read_event_sums(c, STMT_JOB_EVENTS, job_id, 0, &m.events, &m.n_events, NULL)) < 0 ||
            (r = read_event_sums(c, STMT_JOB_OBJECT_EVENTS, job_id, JOB_SUMMARY_MAX_EVENT_ROWS, &m.object_events,
                                 &m.n_object_events, &m.event_rows_truncated)) < 0)
                goto fail;
        /* the objects' and the phases' rows together at most the maximum */
        left = JOB_SUMMARY_MAX_EVENT_ROWS - m.n_object_events;
        if ((r = read_event_sums(c, STMT_JOB_PHASE_EVENTS, job_id, left, &m.phase_events, &m.n_phase_events,
                                 &m.event_rows_truncated)) < 0)
                goto fail;
        r = read_bursts(c, job_id, &m);
        if (r < 0)
                goto fail;
        *ret = m;
        return 0;

fail:
        job_measured_free(&m);
        return r;
}
