/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One job's summary (get_job): its row, its breakdowns by kind, object,
 * phase and node, notes, markers, ranks, time line and functions, in one
 * read transaction; and its functions alone (get_job_functions). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "db/sql/sql-internal.h"

/* A line of a breakdown from columns at col: name, [kind, build_id,]
 * samples, cpu_seconds, cpu_time_ns, cycles, instructions,
 * multiplexed_samples. */
static int read_share_row(DbStmt *st, int col, bool with_kind, Share *x) {
        int r = 0, k = col + (with_kind ? 3 : 1);

        x->name = column_strdup(st, col, &r);
        if (with_kind) {
                const char *build_id = db_column_text(st, col + 2);

                x->kind = column_strdup(st, col + 1, &r);
                x->build_id = build_id && *build_id ? column_strdup(st, col + 2, &r) : NULL;
        }
        x->samples = db_column_int(st, k);
        x->cpu_seconds = db_column_double(st, k + 1);
        x->cpu_time_ns = column_nullable_int(st, k + 2);
        x->cycles = column_nullable_int(st, k + 3);
        x->instructions = column_nullable_int(st, k + 4);
        x->multiplexed_samples = db_column_int(st, k + 5);
        x->first_seen = x->last_seen = NAN;
        return r;
}

/* A job's node from columns at col: name, samples, first_seen, last_seen,
 * cpu_seconds, cpus_alloc, installed, node type, energy_joules,
 * energy_alone_joules. */
static int read_node_row(DbStmt *st, int col, Share *x) {
        int r = 0;

        x->name = column_strdup(st, col, &r);
        x->samples = db_column_int(st, col + 1);
        x->first_seen = db_column_double(st, col + 2);
        x->last_seen = db_column_double(st, col + 3);
        x->cpu_seconds = db_column_double(st, col + 4);
        x->cpus_alloc = column_nullable_int(st, col + 5);
        x->installed = column_strdup(st, col + 6, &r);
        x->node_type = column_strdup(st, col + 7, &r);
        x->has_energy = !db_column_null(st, col + 8);
        x->energy_joules = column_nullable_double(st, col + 8);
        x->energy_alone_joules = column_nullable_double(st, col + 9);
        x->cpu_time_ns = x->cycles = x->instructions = STORAGE_NULL;
        return r;
}

/* A switched-off marker from columns at col: comm, phase, state,
 * first_seen, last_seen, batches. */
int read_marker_row(DbStmt *st, int col, Marker *m) {
        int r = 0;

        m->comm = column_strdup(st, col, &r);
        m->phase = column_strdup(st, col + 1, &r);
        m->state = column_strdup(st, col + 2, &r);
        m->first_seen = db_column_double(st, col + 3);
        m->last_seen = db_column_double(st, col + 4);
        m->batches = db_column_int(st, col + 5);
        return r;
}

/* A job's breakdown by statement id: its kinds, objects (with_kind) or
 * phases, or its nodes (STMT_JOB_NODES). */
static int read_shares(Conn *c, Stmt id, int64_t job_id, int64_t limit, bool with_kind, ShareList *ret) {
        ShareList l = {};
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, id, &st);
        if (r < 0)
                return r;
        if ((r = db_bind_int(st, 1, job_id)) < 0 || (limit > 0 && (r = db_bind_int(st, 2, limit)) < 0))
                return r;
        while ((rc = db_step(st)) == 1) {
                r = grow((void **) &l.items, l.n, &alloc, sizeof(Share));
                if (r < 0)
                        break;
                r = id == STMT_JOB_NODES ? read_node_row(st, 0, &l.items[l.n++])
                                         : read_share_row(st, 0, with_kind, &l.items[l.n++]);
                if (r < 0)
                        break;
        }
        if (r >= 0 && rc != 1 && rc != 0)
                r = step_errno(rc);
        if (r < 0) {
                share_list_free(&l);
                return r;
        }
        *ret = l;
        return 0;
}

static int read_notes(Conn *c, int64_t job_id, JobSummary *js) {
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, STMT_JOB_NOTES, &st);
        if (r < 0 || (r = db_bind_int(st, 1, job_id)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                r = grow((void **) &js->notes, js->n_notes, &alloc, sizeof(KeyValue));
                if (r < 0)
                        return r;
                js->notes[js->n_notes].key = column_strdup(st, 0, &r);
                js->notes[js->n_notes++].value = column_strdup(st, 1, &r);
                if (r < 0)
                        return r;
        }
        return rc == 0 ? 0 : step_errno(rc);
}

static int read_markers(Conn *c, int64_t job_id, JobSummary *js) {
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, STMT_JOB_MARKERS, &st);
        if (r < 0 || (r = db_bind_int(st, 1, job_id)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                r = grow((void **) &js->markers, js->n_markers, &alloc, sizeof(Marker));
                if (r < 0)
                        return r;
                r = read_marker_row(st, 0, &js->markers[js->n_markers++]);
                if (r < 0)
                        return r;
        }
        return rc == 0 ? 0 : step_errno(rc);
}

/* A job's rank figures from STMT_JOB_RANKS (per phase and rank) or
 * STMT_RUN_RANKS (per rank, phase ""): at most JOB_SUMMARY_MAX_RANK_ROWS. */
int read_rank_rows(Conn *c, Stmt id, int64_t job_id, RankFigures **v, size_t *n, bool *truncated) {
        size_t alloc = 0;
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, id, &st);
        if (r < 0 || (r = db_bind_int(st, 1, job_id)) < 0 ||
            (r = db_bind_int(st, 2, JOB_SUMMARY_MAX_RANK_ROWS + 1)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                RankFigures *f;

                if (*n == JOB_SUMMARY_MAX_RANK_ROWS) {
                        *truncated = true;
                        rc = 0;
                        break;
                }
                r = grow((void **) v, *n, &alloc, sizeof(RankFigures));
                if (r < 0)
                        return r;
                f = &(*v)[(*n)++];
                *f = (RankFigures) {
                        .phase = column_strdup(st, 0, &r),
                        .rank = db_column_int(st, 1),
                        .samples = db_column_int(st, 2),
                        .comm_samples = db_column_int(st, 3),
                        .cpu_seconds = db_column_double(st, 4),
                        .comm_seconds = db_column_double(st, 5),
                        .first_seen = db_column_double(st, 6),
                        .last_seen = db_column_double(st, 7),
                };
                if (r < 0)
                        return r;
        }
        return rc == 0 ? 0 : step_errno(rc);
}

/* The job's time line in at most JOB_TIMELINE_MAX_STEPS steps: whole
 * batches for a job of up to that many of them, else buckets of the
 * smallest grain that covers a step, so that at most about as many rows
 * per node are read however long the job ran. */
static int read_timeline(Conn *c, int64_t job_id, JobSummary *js) {
        double first, last, span, interval, target, step;
        TimelineNode *tn = NULL;
        size_t alloc = 0, steps;
        int64_t grain = 0;
        bool raw;
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, STMT_JOB_SPAN, &st);
        if (r < 0 || (r = db_bind_int(st, 1, job_id)) < 0)
                return r;
        rc = db_step(st);
        if (rc != 1)
                return step_errno(rc);
        if (db_column_null(st, 0) ||
            (db_column_null(st, 2) && !db_column_int(st, 3)))
                return 0; /* no node, or stored before the time line was */
        first = floor(db_column_double(st, 0));
        last = db_column_double(st, 1);
        /* retention deleted the batches' own rows (grain 0): the finest left */
        raw = !db_column_null(st, 2);
        interval = raw ? MAX(round(db_column_double(st, 2)), 1.0) : (double) timeline_grains[0];
        span = MAX(last - first, 1.0);
        target = span / JOB_TIMELINE_MAX_STEPS;
        if (raw && target <= interval)
                step = interval; /* whole batches */
        else {
                grain = timeline_grains[ELEMENTSOF(timeline_grains) - 1];
                for (size_t g = 0; g < ELEMENTSOF(timeline_grains); g++)
                        if ((double) timeline_grains[g] >= MAX(target, interval)) {
                                grain = timeline_grains[g];
                                break;
                        }
                first = floor(first / (double) grain) * (double) grain;
                span = MAX(last - first, 1.0);
                step = (double) grain * ceil(span / JOB_TIMELINE_MAX_STEPS / (double) grain);
        }
        steps = (size_t) ceil(span / step);
        steps = MIN(MAX(steps, (size_t) 1), (size_t) JOB_TIMELINE_MAX_STEPS);
        js->timeline_start = first;
        js->timeline_step = step;
        js->n_timeline = steps;

        r = conn_stmt(c, STMT_JOB_TIMELINE, &st);
        if (r < 0 || (r = db_bind_int(st, 1, job_id)) < 0 || (r = bind_nullable_double(st, 2, first)) < 0 ||
            (r = bind_nullable_double(st, 3, step)) < 0 || (r = db_bind_int(st, 4, (int64_t) steps)) < 0 ||
            (r = db_bind_int(st, 5, JOB_TIMELINE_MAX_NODES)) < 0 || (r = db_bind_int(st, 6, grain)) < 0)
                return r;
        while ((rc = db_step(st)) == 1) {
                const char *node = db_column_text(st, 0);
                int64_t k = db_column_int(st, 2);

                if (!tn || !streq(tn->node, node ?: "")) {
                        r = grow((void **) &js->timeline, js->n_timeline_nodes, &alloc, sizeof(TimelineNode));
                        if (r < 0)
                                return r;
                        tn = &js->timeline[js->n_timeline_nodes++];
                        *tn = (TimelineNode) {
                                .node = column_strdup(st, 0, &r),
                                .cpus_alloc = column_nullable_int(st, 1),
                                .seconds = calloc(steps, sizeof(double)),
                                .cpu_seconds = calloc(steps, sizeof(double)),
                        };
                        if (r < 0 || !tn->node || !tn->seconds || !tn->cpu_seconds)
                                return -ENOMEM;
                }
                if (k < 0 || (size_t) k >= steps)
                        continue; /* cannot happen: the query clamps */
                tn->seconds[k] += db_column_double(st, 3);
                tn->cpu_seconds[k] += db_column_double(st, 4);
        }
        if (rc != 0)
                return step_errno(rc);
        js->timeline_truncated = js->info.n_nodes > JOB_TIMELINE_MAX_NODES;
        return 0;
}

/* The job of the id (and cluster, NULL: any) that viewer may see, in the
 * read transaction begun on c: -ENOENT when there is none, -EACCES when
 * there is one the viewer may not see, -ENOTUNIQ when it may see several. */
static int find_job(Conn *c, const char *job, const char *cluster, const JobViewer *viewer, StoredJob *ret,
                    int64_t *ret_id) {
        bool found = false, hidden = false;
        StoredJob info = {};
        int64_t id = 0;
        DbStmt *st;
        int r, rc;

        r = conn_stmt(c, cluster ? STMT_JOB_FIND_CLUSTER : STMT_JOB_FIND, &st);
        if (r < 0 || (r = bind_nullable_text(st, 1, job)) < 0 ||
            (cluster && (r = bind_nullable_text(st, 2, cluster)) < 0))
                return r;
        /* The rows of the id the viewer may not see count for nothing: the
         * answer must not tell whether they exist. */
        while ((rc = db_step(st)) == 1) {
                StoredJob j;
                int64_t jid;

                r = read_job_info(st, &j, &jid);
                if (r < 0) {
                        stored_job_free(&j);
                        break;
                }
                if (!job_viewer_may_see(viewer, j.user, j.account)) {
                        stored_job_free(&j);
                        hidden = true;
                        continue;
                }
                if (found) {
                        stored_job_free(&j);
                        r = -ENOTUNIQ;
                        break;
                }
                info = j;
                id = jid;
                found = true;
        }
        if (r >= 0 && (rc < 0 || !found))
                r = rc < 0 ? step_errno(rc) : hidden ? -EACCES : -ENOENT;
        if (r < 0) {
                db_reset(st);
                stored_job_free(&info);
                return r;
        }
        *ret = info;
        *ret_id = id;
        return 0;
}

int sql_get_job(Storage *base, const char *job, const char *cluster, const JobViewer *viewer,
                JobSummary *ret) {
        SqlStorage *s = (SqlStorage *) base;
        JobSummary js = {};
        int64_t id = 0;
        Conn *c;
        int r;

        db_purpose_set("reading a job's summary");
        reader_acquire(s, &c);
        /* One read transaction for the job row and its rollups, so that the
         * parts add up to the total even while batches arrive. */
        r = conn_begin_read(c);
        if (r < 0) {
                reader_release(s, c);
                return r;
        }
        if ((r = find_job(c, job, cluster, viewer, &js.info, &id)) < 0 ||
            (r = read_shares(c, STMT_JOB_KINDS, id, 0, false, &js.kinds)) < 0 ||
            (r = read_shares(c, STMT_JOB_OBJECTS, id, JOB_SUMMARY_MAX_OBJECTS + 1, true, &js.objects)) < 0 ||
            (r = read_shares(c, STMT_JOB_PHASES, id, 0, false, &js.phases)) < 0 ||
            (r = read_shares(c, STMT_JOB_NODES, id, 0, false, &js.nodes)) < 0 ||
            (r = read_notes(c, id, &js)) < 0 ||
            (r = read_markers(c, id, &js)) < 0 ||
            (r = read_rank_rows(c, STMT_JOB_RANKS, id, &js.ranks, &js.n_ranks, &js.ranks_truncated)) < 0 ||
            (r = read_timeline(c, id, &js)) < 0 ||
            (r = read_job_measured(c, id, &js.measured)) < 0 ||
            (r = read_job_functions(c, id, false, JOB_SUMMARY_MAX_FUNCTIONS, &js.functions)) < 0 ||
            (r = read_job_functions(c, id, true, JOB_SUMMARY_MAX_FUNCTIONS, &js.phase_functions)) < 0)
                goto finish;
        if (js.objects.n > JOB_SUMMARY_MAX_OBJECTS) {
                Share *last = &js.objects.items[--js.objects.n];

                free(last->name);
                free(last->kind);
                free(last->build_id);
                js.objects_truncated = true;
        }

finish:
        reader_end_read(s, c);
        if (r < 0) {
                job_summary_free(&js);
                return r;
        }
        *ret = js;
        return 0;
}

int sql_get_job_functions(Storage *base, const char *job, const char *cluster, const JobViewer *viewer,
                          bool per_phase, unsigned limit, StoredJob *ret_info, FunctionList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        StoredJob info = {};
        FunctionList l = {};
        int64_t id = 0;
        Conn *c;
        int r;

        db_purpose_set("reading a job's functions");
        reader_acquire(s, &c);
        /* the job's row and its functions of one moment */
        r = conn_begin_read(c);
        if (r < 0) {
                reader_release(s, c);
                return r;
        }
        if ((r = find_job(c, job, cluster, viewer, &info, &id)) >= 0)
                r = read_job_functions(c, id, per_phase, MIN(limit, (unsigned) JOB_FUNCTIONS_MAX), &l);
        reader_end_read(s, c);
        if (r < 0) {
                stored_job_free(&info);
                return r;
        }
        *ret_info = info;
        *ret = l;
        return 0;
}
