#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A store made before schema/0025 keeps its jobs' functions, packed.

A database at schema 24 (the migrations' own SQL files, applied here as
the store would have) holds job_functions and job_phase_functions rows:
named and unnamed functions of two objects, NULL and set counters, CPU
seconds whose sum over phases is not bit for bit the job's sum, and a
function whose phase rows are gone (retention deletes the two tables a
slice at a time). lmk-store migrates it: the two tables are gone, each
(job, object) is one job_function_packs row whose entries (decoded here
by a reader of the format of its own, storetest.unpack_functions) are
exactly the rows that were there, and the job's functions answer what the
rows held, over phases and per phase, the most samples first. A batch
then adds to the migrated sums. Runs on SQLite and, as function-packs-pg,
on PostgreSQL.
"""
import glob
import os
import sqlite3

from lmktest import SOURCE_ROOT, check
from storetest import (BACKEND, START, Store, check_eq, function, is_postgresql, make_batch,
                       new_database, row, sql_read, unpack_functions, workdir)

APP, LIB = "/opt/app/bin/app", "/usr/lib/libm.so.6"
# (id, object_id, name, file_offset, entry)
FUNCTIONS = [(1, 1, "solve", -1, 0), (2, 1, "", 0x2000, 0), (3, 1, "", -1, 0), (4, 2, "exp", -1, 0),
             (5, 2, "log", -1, 0)]
# job_functions: (job_id, function_id, samples, cpu_seconds, cycles, instructions)
JOB = [(1, 1, 300, 0.30000000000000004, 3000, 6000), (1, 2, 40, 0.04, None, None), (1, 3, 7, 0.007, None, 70),
       (1, 4, 120, 0.12, 1200, None), (1, 5, 9, 0.009, None, None), (2, 1, 5, 0.005, 50, 100)]
# job_phase_functions: (job_id, phase_id, function_id, ...); function 5
# has none left
PHASES = [(1, 1, 1, 200, 0.2, 2000, 4000), (1, 2, 1, 100, 0.1, 1000, 2000), (1, 1, 2, 40, 0.04, None, None),
          (1, 2, 3, 7, 0.007, None, 70), (1, 1, 4, 120, 0.12, 1200, None), (2, 1, 1, 5, 0.005, 50, 100)]


def old_store(db):
    """A database of schema 24 with the rows above."""
    pg = is_postgresql(db)
    dialect = "postgresql" if pg else "sqlite"
    if pg:
        import psycopg2
        con = psycopg2.connect(db)
    else:
        con = sqlite3.connect(db)
    cur = con.cursor()
    cur.execute("CREATE TABLE schema_version (version BIGINT PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at BIGINT NOT NULL)")
    mark = "%s" if pg else "?"

    def insert(table, rows):
        for r in rows:
            cur.execute(f"INSERT INTO {table} VALUES ({', '.join([mark] * len(r))})", r)
    for path in sorted(glob.glob(os.path.join(SOURCE_ROOT, "schema", dialect, "00*.sql"))):
        name = os.path.basename(path)[:-4]
        if int(name[:4]) > 24:
            continue
        with open(path) as f:
            if pg:
                cur.execute(f.read())
            else:
                con.executescript(f.read())
        cur.execute(f"INSERT INTO schema_version VALUES ({mark}, {mark}, 0)", (int(name[:4]), name))
    ids = "OVERRIDING SYSTEM VALUE " if pg else ""
    cur.execute(f"INSERT INTO objects (id, path, kind, build_id) {ids}VALUES (1, '{APP}', 'exe', 'aa11'), "
                f"(2, '{LIB}', 'lib', '')")
    cur.execute(f"INSERT INTO phases (id, path) {ids}VALUES (1, 'solve'), (2, 'io')")
    cur.execute(f"INSERT INTO jobs (id, cluster, job, user_name, account, first_seen, last_seen, samples, "
                f"cpu_seconds) {ids}VALUES (1, 'demo', '801', 'alice', 'p1', {START}, {START + 60}, 500, 0.5), "
                f"(2, 'demo', '802', 'alice', 'p1', {START}, {START + 60}, 5, 0.005)")
    insert("job_phases (job_id, phase_id, samples, cpu_seconds)", [(1, 1, 400, 0.4), (1, 2, 107, 0.107)])
    cur.execute(f"INSERT INTO functions (id, object_id, name, file_offset, entry) {ids}VALUES "
                + ", ".join(f"({i}, {o}, '{n}', {off}, {e})" for i, o, n, off, e in FUNCTIONS))
    insert("job_functions", JOB)
    insert("job_phase_functions", PHASES)
    if pg:
        cur.execute("SELECT setval(pg_get_serial_sequence(t, 'id'), 10) FROM unnest(ARRAY['objects', 'phases', "
                    "'jobs', 'functions']) AS t")
    con.commit()
    con.close()


def packs(db):
    """{(job_id, object_id): entries} of job_function_packs."""
    return {(j, o): unpack_functions(p) for j, o, p in
            sql_read(db, "SELECT job_id, object_id, packed FROM job_function_packs")}


def main():
    d = workdir()
    db = new_database() or os.path.join(d, "old.db")
    old_store(db)
    object_of = {f[0]: f[1] for f in FUNCTIONS}
    with Store(directory=d, db=db) as store:
        tables = {r[0] for r in sql_read(db, "SELECT name FROM sqlite_master WHERE type = 'table'" if BACKEND != "postgresql"
                                         else "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")}
        check("job_function_packs" in tables and not {"job_functions", "job_phase_functions"} & tables,
              f"the two tables replaced by packs: {sorted(tables)}")
        want = {}
        for j, f, *sums in JOB:
            want.setdefault((j, object_of[f]), []).append((0, f, *sums))
        for j, p, f, *sums in PHASES:
            want.setdefault((j, object_of[f]), []).append((p, f, *sums))
        check_eq(packs(db), {k: sorted(v) for k, v in want.items()}, "the packs: each row that was there, exactly")

        o = store.get_ok("/api/v1/jobs/801/functions")
        got = [(e["object"], e["function"], e["samples"], e["cpu_seconds"], e["cycles"], e["instructions"])
               for e in o["functions"]]
        check_eq(got, [(APP, "solve", 300, 0.3, 3000, 6000), (LIB, "exp", 120, 0.12, 1200, None),
                       (APP, "app+0x2000", 40, 0.04, None, None), (LIB, "log", 9, 0.009, None, None),
                       (APP, "(other functions)", 7, 0.007, None, 70)], "the job's functions over phases")
        o = store.get_ok("/api/v1/jobs/801/functions?by=phase")
        got = [(e["phase"], e["function"], e["samples"]) for e in o["functions"]]
        check_eq(got, [("solve", "solve", 200), ("solve", "exp", 120), ("io", "solve", 100),
                       ("solve", "app+0x2000", 40), ("io", "(other functions)", 7)], "per phase")
        o = store.get_ok("/api/v1/jobs/801/functions?by=phase&limit=2")
        check_eq(([(e["phase"], e["function"]) for e in o["functions"]], o["truncated"]),
                 ([("solve", "solve"), ("solve", "exp")], True), "per phase, the first two")
        o = store.get_ok("/api/v1/jobs/801/functions?limit=5")
        check_eq((len(o["functions"]), o["truncated"]), (5, False), "all five, not truncated")

        # a batch adds to the migrated sums, over phases and in its phase
        b = make_batch(node="cn001", seq=1, start=START, frequency=100,
                       rows=[dict(row("801", APP, "exe", 30, phase="io"), build_id="aa11")],
                       jobs=[{"job": "801", "user": "alice", "account": "p1", "cluster": "demo",
                              "first_seen": START, "last_seen": START + 60}],
                       functions=[function("801", APP, 30, name="solve", phase="io", build_id="aa11",
                                           cycles=5, instructions=7)])
        st, _, body = store.ingest(b)
        check_eq(st, 200, f"a batch of the migrated job: {body}")
        got = {(e[0], e[1]): e[2:] for e in packs(db)[(1, 1)]}
        check_eq(got[(0, 1)][:1] + got[(0, 1)][2:], (330, 3005, 6007), "the sums over phases, added to")
        check(abs(got[(0, 1)][1] - 0.6) < 1e-12, f"CPU seconds added: {got[(0, 1)]}")
        check_eq(got[(2, 1)][:1] + got[(2, 1)][2:], (130, 1005, 2007), "the phase's sums, added to")
        check_eq(packs(db)[(1, 2)], sorted(want[(1, 2)]), "the other object's pack, untouched")


if __name__ == "__main__":
    main()
