/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Filling job_function_packs from job_functions and job_phase_functions
 * (schema/0025): what SQL cannot write, the packed values
 * (function-pack.h). Runs in the migration's transaction, after 0025's
 * SQL created the table and before 0026's drops the two. */
#include <errno.h>
#include <stdlib.h>

#include "db/sql/function-pack.h"
#include "db/sql/sql-internal.h"

/* Both tables' rows, the sums over phases as phase 0 (phases' ids start
 * at 1), grouped by the pack they go to. */
#define ROWS_SQL                                                                                        \
        "SELECT x.job_id, f.object_id, x.phase_id, x.function_id, x.samples, x.cpu_seconds, x.cycles, " \
        "x.instructions FROM (SELECT job_id, 0 AS phase_id, function_id, samples, cpu_seconds, cycles, " \
        "instructions FROM job_functions UNION ALL SELECT job_id, phase_id, function_id, samples, "      \
        "cpu_seconds, cycles, instructions FROM job_phase_functions WHERE phase_id > 0) AS x "           \
        "JOIN functions f ON f.id = x.function_id ORDER BY x.job_id, f.object_id"

static int write_pack(DbStmt *insert, int64_t job_id, int64_t object_id, JobFunctionSums *sums) {
        _cleanup_free_ uint8_t *packed = NULL;
        size_t len;
        int r;

        function_sums_sort(sums);
        if ((r = function_pack_encode(sums, &packed, &len)) < 0 || (r = db_bind_int(insert, 1, job_id)) < 0 ||
            (r = db_bind_int(insert, 2, object_id)) < 0 || (r = db_bind_blob(insert, 3, packed, len)) < 0)
                return r;
        /* not deferred: the value bound is freed on return */
        r = db_step(insert);
        db_reset(insert);
        sums->n = 0;
        return r < 0 ? r : 0;
}

int migrate_function_packs(Conn *c) {
        _cleanup_(function_sums_done) JobFunctionSums sums = {};
        DbStmt *rows = NULL, *insert = NULL;
        int64_t job_id = 0, object_id = 0;
        int r, rc;

        if ((r = db_prepare(c->db, ROWS_SQL, false, &rows)) < 0 ||
            (r = db_prepare(c->db, "INSERT INTO job_function_packs (job_id, object_id, packed) VALUES (?, ?, ?)",
                            false, &insert)) < 0)
                goto finish;
        while ((rc = db_step(rows)) == 1) {
                int64_t job = db_column_int(rows, 0), object = db_column_int(rows, 1);
                JobFunctionSum x = {
                        .phase_id = db_column_int(rows, 2),
                        .function_id = db_column_int(rows, 3),
                        .samples = db_column_int(rows, 4),
                        .cpu_seconds = db_column_double(rows, 5),
                        .cycles = column_nullable_int(rows, 6),
                        .instructions = column_nullable_int(rows, 7),
                };

                if (sums.n > 0 && (job != job_id || object != object_id) &&
                    (r = write_pack(insert, job_id, object_id, &sums)) < 0)
                        goto finish;
                job_id = job;
                object_id = object;
                r = function_sums_append(&sums, &x);
                if (r < 0)
                        goto finish;
        }
        r = step_errno(rc);
        if (r >= 0 && sums.n > 0)
                r = write_pack(insert, job_id, object_id, &sums);
finish:
        db_finalize(rows);
        db_finalize(insert);
        return r;
}
