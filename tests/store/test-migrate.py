#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmk-store migrate (docs/lmk-store.md, "Moving from SQLite to PostgreSQL").

The real lmk-store builds an SQLite store from batches of two nodes over
three days (jobs with notes holding a backslash, a tab, a newline and
non-ASCII text, markers, ranks, an ended job) and is stopped. migrate
copies it into a private PostgreSQL server; then every table's rows, all
columns, are the same on both sides (read through sqlite3 and psycopg2),
each identity sequence stands at the copied maximum id, and the source's
bytes are as they were. A second migrate into the same target is refused
and changes nothing. A missing source, a FIFO, a text file, an SQLite file
that is not a store and a store at an older schema version are refused
with their reason, touching neither the source nor the target.

The target gets its schema from the store's own migrations when this
lmk-store has the PostgreSQL backend; until then the test applies
schema/postgresql/*.sql with psql, as an administrator would. With the
backend, lmk-store is also started on the target and must answer
GET /api/v1/jobs/<id> as it did on SQLite; without it that part is
skipped and says so. Skips (77) without a PostgreSQL server or psycopg2.
"""
import hashlib
import os
import re
import sqlite3
import subprocess
import time
import urllib.parse

import lmktest
import pgserver
from lmktest import check, fail, log, skip
from storetest import Store, check_eq, function, make_batch, row, rank, store_binary, workdir, START

DAY = 86400
JOBS = ["5001", "5002", "5003", "5004"]
# What COPY's text format must escape, and what it must not mangle.
AWKWARD = "back\\slash\ttab\nnewline \u00e9t\u00e9 \u2211 'quote\" \\N"
FUNCTION_NAME = "ns::f<back\\slash, 'quote\", \\N> \u00e9t\u00e9 \u2211"


def pushes():
    out = []
    seq = 0
    for day in (2, 1, 0):  # three days: three daily partitions' worth
        base = START - day * DAY
        for node in ("cn001", "cn002"):
            for k in range(3):
                seq += 1
                t = base + k * 60
                jobs = [{"job": JOBS[day], "user": "alice", "account": "p1", "partition": "cpu",
                         "name": f"solver-{day}", "nodes": 2, "tasks": 64,
                         "notes": {"app": f"solver{day}", "comment": AWKWARD},
                         "first_seen": base, "last_seen": t + 59, "ended": day > 0 and k == 2}]
                rows = [row(JOBS[day], "/opt/solver/bin/solver", "exe", 100 + seq, phase="solve"),
                        row(JOBS[day], "/usr/lib/libmpi.so.40", "lib", 7 * seq, phase="comm"),
                        row(JOBS[day], f"/opt/solver/lib/libk{seq % 4}.so", "lib", seq),
                        row(None, "[idle]", "idle", 30)]
                markers = [{"job": JOBS[day], "comm": "solver", "phase": "solve", "state": "on"}]
                ranks = [rank(JOBS[day], r, 10 + r, 2 * r, phase="solve", first=t + 1, last=t + 59)
                         for r in range(4)]
                # functions: a C++ name with what COPY must not mangle
                functions = [function(JOBS[day], "/opt/solver/bin/solver", 60, name=FUNCTION_NAME, phase="solve"),
                             function(JOBS[day], "/opt/solver/bin/solver", 40 + seq, other=True, phase="solve"),
                             function(JOBS[day], "/usr/lib/libmpi.so.40", 7 * seq, name=f"mpi_wait_{seq % 2}",
                                      phase="comm")]
                out.append(make_batch(node=node, seq=seq, boot_id=f"boot-{node}", start=t, rows=rows,
                                      jobs=jobs, markers=markers, ranks=ranks, functions=functions))
    # work outside jobs only, on a third node
    out.append(make_batch(node="cn003", seq=1, boot_id="boot-cn003", start=START + 120,
                          rows=[row(None, "[idle]", "idle", 60), row(None, "/usr/sbin/sshd", "exe", 2, user="root")]))
    return out


# ---- reading both sides ----------------------------------------------------

def sqlite_tables(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        names = [r[0] for r in con.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
            "AND name <> 'schema_version' ORDER BY name")]
        out = {}
        for t in names:
            cols = [r[1] for r in con.execute(f'PRAGMA table_info("{t}")')]
            rows = con.execute(f'SELECT {", ".join(cols)} FROM "{t}"').fetchall()
            out[t] = (cols, sorted_rows(rows))
        return out
    finally:
        con.close()


def pg_connect(uri):
    import psycopg2
    return psycopg2.connect(uri)


def pg_tables(uri, like):
    """Each table of like (name: (columns, rows)) as PostgreSQL holds it."""
    con = pg_connect(uri)
    try:
        out = {}
        with con.cursor() as cur:
            for t, (cols, _) in like.items():
                cur.execute(f'SELECT {", ".join(cols)} FROM "{t}"')
                # psycopg2 gives BYTEA as a memoryview, sqlite3 BLOB as bytes
                out[t] = (cols, sorted_rows([[bytes(v) if isinstance(v, memoryview) else v for v in r]
                                             for r in cur.fetchall()]))
        return out
    finally:
        con.close()


def sorted_rows(rows):
    return sorted((tuple(r) for r in rows), key=lambda r: [(v is None, str(type(v)), v if v is not None else 0)
                                                          for v in r])


def pg_rows(uri, sql):
    con = pg_connect(uri)
    try:
        with con.cursor() as cur:
            cur.execute(sql)
            return cur.fetchall()
    finally:
        con.close()


def pg_user_tables(uri):
    return pg_rows(uri, "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                        "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')")[0][0]


def compare(src, dst, what):
    check_eq(sorted(dst), sorted(src), f"{what}: tables")
    for t, (cols, rows) in src.items():
        if dst[t][1] != rows:
            for a, b in zip(rows, dst[t][1]):
                if a != b:
                    fail(f"{what}: {t} differs, first at SQLite {dict(zip(cols, a))} "
                         f"vs PostgreSQL {dict(zip(cols, b))}")
            fail(f"{what}: {t} has {len(rows)} rows in SQLite, {len(dst[t][1])} in PostgreSQL")


def fingerprint(path):
    """The source's bytes and what sits beside it: migrate must not change
    either. A reader of a WAL database leaves an empty -wal and the -shm
    (SQLite's own, as the sqlite3 shell's -readonly does): those do not
    count, as long as the -wal is empty."""
    d = os.path.dirname(path)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    wal = path + "-wal"
    if os.path.exists(wal):
        check_eq(os.path.getsize(wal), 0, f"bytes in {wal}")
    beside = [n for n in os.listdir(d) if os.path.join(d, n) not in (wal, path + "-shm")]
    return digest, sorted(beside)


# ---- running migrate ---------------------------------------------------------

def migrate(src, dst, timeout=60):
    cmd = [store_binary(), "migrate", "--from", src, "--to", dst]
    log("+", " ".join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    log(p.stdout + p.stderr)
    for bad in ("runtime error:", "AddressSanitizer", "LeakSanitizer"):
        check(bad not in p.stderr, f"lmk-store migrate reported {bad}")
    return p


def new_database(pg, name):
    pg.psql(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'", dbname="postgres")
    return f"postgresql://{pgserver.USER}@{urllib.parse.quote(pg.host, safe='')}:{pg.port}/{name}"


def backend_supported(pg):
    """Whether this lmk-store runs on PostgreSQL: it either starts listening
    on a scratch database or refuses the URI ("Unsupported database")."""
    d = workdir()
    s = Store(directory=d, db=new_database(pg, "lmk_probe"))
    cmd = [store_binary(), "--db", s.db, "--listen", "127.0.0.1:0", "--token-file", s.token_file]
    with open(s.log_path, "wb") as logf:
        p = subprocess.Popen(cmd, stdout=logf, stderr=logf)
    end = time.monotonic() + 20
    while time.monotonic() < end:
        out = s.read_log()
        if "Listening on" in out:
            p.terminate()
            p.wait(20)
            return True
        if p.poll() is not None:
            out = s.read_log()
            if "Unsupported database" in out:
                log(f"lmk-store has no PostgreSQL backend yet: {out.strip()}")
                return False
            fail(f"lmk-store on PostgreSQL exited with {p.returncode}:\n{out}")
        time.sleep(0.05)
    p.kill()
    p.wait()
    fail(f"lmk-store on PostgreSQL neither listened nor refused within 20 s:\n{s.read_log()}")


def apply_schema(pg, dbname):
    """What the store's migrations do on PostgreSQL, by hand: each file and
    its schema_version row in one transaction."""
    d = os.path.join(lmktest.SOURCE_ROOT, "schema", "postgresql")
    files = sorted(f for f in os.listdir(d) if re.fullmatch(r"\d{4}-[a-z0-9-]+\.sql", f))
    pg.psql("CREATE TABLE schema_version (version BIGINT PRIMARY KEY, name TEXT NOT NULL, "
            "applied_at BIGINT NOT NULL)", dbname=dbname)
    for f in files:
        pg.psql(f"INSERT INTO schema_version VALUES ({int(f[:4])}, '{f[:-4]}', "
                "extract(epoch FROM now())::bigint)", files=[os.path.join(d, f)], dbname=dbname,
                single_transaction=True)


# ---- the test -----------------------------------------------------------------

def build_store():
    d = workdir()
    store = Store(directory=d, db=os.path.join(d, "lmk.db"))
    answers = {}
    with store:
        for b in pushes():
            status, _, body = store.ingest(b)
            check_eq(status, 200, f"ingest {b['batch']}: {body}")
        for j in JOBS[:3]:
            answers[j] = store.get_ok(f"/api/v1/jobs/{j}")
    return store.db, answers


def check_refused(pg, label, src, want, target):
    """A source migrate must refuse with want in its message, leaving the
    target (an empty database) without a single table."""
    p = migrate(src, target)
    check_eq(p.returncode, 1, f"migrate from {label}: exit code")
    check(re.search(want, p.stderr), f"migrate from {label}: expected /{want}/ in:\n{p.stderr}")
    check_eq(pg_user_tables(target), 0, f"tables in the target after migrate from {label}")


def main():
    try:
        import psycopg2  # noqa: F401
    except ImportError:
        skip("python3-psycopg2 is not installed")
    pg = pgserver.start_or_skip()
    supported = backend_supported(pg)

    db, answers = build_store()
    # raw rows as a store from before packs (schema/0017) left them in samples
    con = sqlite3.connect(db)
    with con:
        con.executemany("INSERT INTO samples (job_id, bucket, node_id, object_id, phase_id, task_id, samples, "
                        "cpu_seconds, cpu_time_ns, cycles, instructions) VALUES (?, ?, 1, 1, 1, 1, ?, ?, ?, ?, ?)",
                        [(1, START - 2 * DAY, 40, 40.0, None, 4000, 8000), (0, START - 2 * DAY, 3, 3.0, 7, None, None)])
    # names found since for unnamed functions (schema/0022)
    con.executemany("INSERT INTO function_names (build_id, file_offset, entry, name) VALUES (?, ?, ?, ?)",
                    [("5d1c", 4096, 0, FUNCTION_NAME), ("5d1c", 4099, 1, "")])
    con.commit()
    con.close()
    before = fingerprint(db)
    src = sqlite_tables(db)
    for t in ("jobs", "batches", "sample_packs", "samples", "job_tasks", "job_notes", "job_markers", "job_ranks",
              "nodes", "retention", "functions", "job_function_packs", "function_names"):
        check(src.get(t) and src[t][1], f"the SQLite store has rows in {t}")
    notes = src["job_notes"]
    check(AWKWARD in [r[notes[0].index("note_value")] for r in notes[1]], "the awkward note is stored")

    target = new_database(pg, "lmk_target")
    if not supported:
        apply_schema(pg, "lmk_target")

    p = migrate(f"sqlite:{db}", target)
    check_eq(p.returncode, 0, "migrate: exit code")
    check(re.search(r"Copied \d+ tables, \d+ rows", p.stdout), f"migrate's summary:\n{p.stdout}")
    check(re.search(r"Verified: .*jobs\.samples", p.stdout), f"migrate's verification:\n{p.stdout}")
    check(re.search(r"jobs: \d+ rows in [\d.]+ s \(\d+ rows/s\)", p.stderr), f"migrate's progress:\n{p.stderr}")
    check_eq(fingerprint(db), before, "the source file and its directory after migrate")
    dst = pg_tables(target, src)
    compare(src, dst, "after migrate")
    log(f"{len(src)} tables, {sum(len(r) for _, r in src.values())} rows equal on both sides")

    # The next row the store writes gets the next id, not a copied one.
    idents = pg_rows(target, "SELECT c.relname, a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                             "WHERE a.attidentity <> '' AND c.relnamespace = 'public'::regnamespace "
                             "AND NOT c.relispartition ORDER BY 1")
    check(("jobs", "id") in idents, f"identity columns: {idents}")
    for t, col in idents:
        ids = [r[src[t][0].index(col)] for r in src[t][1]]
        last = pg_rows(target, f"SELECT pg_sequence_last_value(pg_get_serial_sequence('{t}', '{col}'))")[0][0]
        check_eq(last, max(ids) if ids else None, f"{t}.{col}'s sequence after migrate")
    # ANALYZE ran: the planner knows the tables' sizes.
    analyzed = pg_rows(target, "SELECT count(*) FROM pg_stat_user_tables WHERE last_analyze IS NULL "
                               "AND relname IN ('jobs', 'nodes', 'objects')")[0][0]
    check_eq(analyzed, 0, "tables not analyzed after migrate")

    # A second migrate into the same target: refused, nothing changed.
    p = migrate(f"sqlite:{db}", target)
    check_eq(p.returncode, 1, "second migrate: exit code")
    check("is not empty" in p.stderr and "never overwrites" in p.stderr, f"second migrate's reason:\n{p.stderr}")
    compare(src, pg_tables(target, src), "after the refused second migrate")

    # Sources that are not a store, into an empty database: refused, nothing touched.
    empty = new_database(pg, "lmk_untouched")
    d = workdir()
    check_refused(pg, "a missing file", os.path.join(d, "missing.db"), r"No such file", empty)
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    check_refused(pg, "a FIFO", f"sqlite:{fifo}", r"is a FIFO, not an lmk-store database", empty)
    text = os.path.join(d, "notes.txt")
    with open(text, "w") as f:
        f.write("not a database\n" * 10)
    check_refused(pg, "a text file", text, r"is not an SQLite database", empty)
    other = os.path.join(d, "other.db")
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE jobs (id INTEGER PRIMARY KEY, x TEXT)")
    con.execute("INSERT INTO jobs (x) VALUES ('y')")
    con.commit()
    con.close()
    other_before = fingerprint(other)
    check_refused(pg, "an SQLite file that is not a store", other, r"not an lmk-store one", empty)
    check_eq(fingerprint(other), other_before, "the other SQLite file after migrate")
    old = os.path.join(workdir(), "old.db")
    with open(db, "rb") as f, open(old, "wb") as g:
        g.write(f.read())
    con = sqlite3.connect(old)
    con.execute("DELETE FROM schema_version WHERE version = (SELECT max(version) FROM schema_version)")
    con.commit()
    con.close()
    check_refused(pg, "a store at an older schema", old, r"start this lmk-store on it once", empty)
    check_eq(fingerprint(db), before, "the source file after everything")

    # A target without the schema, when this lmk-store cannot create it.
    if not supported:
        p = migrate(f"sqlite:{db}", empty)
        check_eq(p.returncode, 1, "migrate into a database without the schema: exit code")
        check("has no lmk schema" in p.stderr, f"migrate into a database without the schema:\n{p.stderr}")
        check_eq(pg_user_tables(empty), 0, "tables in the target without the schema")

    # A copy that fails part-way (text PostgreSQL cannot hold, in a table
    # copied after most others) leaves the target migrated and empty; the
    # next attempt with a good source then succeeds.
    bad = os.path.join(workdir(), "bad.db")
    with open(db, "rb") as f, open(bad, "wb") as g:
        g.write(f.read())
    con = sqlite3.connect(bad)
    con.execute("UPDATE tasks SET comm = 'a' || char(0) || 'b' WHERE id = (SELECT max(id) FROM tasks)")
    con.commit()
    con.close()
    retry = new_database(pg, "lmk_retry")
    if not supported:
        apply_schema(pg, "lmk_retry")
    p = migrate(f"sqlite:{bad}", retry)
    check_eq(p.returncode, 1, "migrate of a source with a NUL byte: exit code")
    check(re.search(r"tasks\.comm, row \d+: text with a NUL byte.*nothing was kept|nothing was kept.*NUL byte",
                    p.stderr), f"migrate of a source with a NUL byte:\n{p.stderr}")
    left = {t: rows for t, (_, rows) in pg_tables(retry, src).items() if rows}
    check_eq(sorted(left), ["retention"], "tables holding rows after a failed copy (only the migrations' seeds)")
    p = migrate(f"sqlite:{db}", retry)
    check_eq(p.returncode, 0, "migrate after a failed copy: exit code")
    compare(src, pg_tables(retry, src), "after a failed copy and a second attempt")

    # The store on PostgreSQL answers as it did on SQLite.
    if not supported:
        log("SKIP (part): lmk-store --db postgresql://… is not supported by this build (it answered "
            "\"Unsupported database\"), so GET /api/v1/jobs/<id> on the migrated store was not compared. "
            "Everything else above passed.")
        return
    if os.environ.get("LMK_PG_QUERIES") != "1":
        # Issue 14: the queries' SQL is not yet all in PostgreSQL's dialect
        # (store/db/sql/statements.c); LMK_PG_QUERIES=1 runs this part.
        log("SKIP (part): the store's queries on PostgreSQL are not finished (issue 14), so GET "
            "/api/v1/jobs/<id> on the migrated store was not compared; LMK_PG_QUERIES=1 compares it. "
            "Everything else above passed, including the schema made by lmk-store's own PostgreSQL migrations.")
        return
    with Store(directory=workdir(), db=target) as s:
        for j, want in answers.items():
            check_eq(s.get_ok(f"/api/v1/jobs/{j}"), want, f"GET /api/v1/jobs/{j} on PostgreSQL after migrate")
    log(f"GET /api/v1/jobs/<id> of {len(answers)} jobs: the same on PostgreSQL as on SQLite")


if __name__ == "__main__":
    main()
