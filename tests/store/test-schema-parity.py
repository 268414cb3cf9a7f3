#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Both backends' migrations make the same logical tables (issue 14).

Applies schema/sqlite/NNNN-*.sql to a fresh SQLite database and
schema/postgresql/NNNN-*.sql to a private PostgreSQL server, each migration
in a transaction of its own, and compares per table: the columns in order
with a normalised type class (integer, real, text, blob), NOT NULL, default,
whether the database assigns the value (an id); the primary key; unique
constraints; and indexes by name with their columns. A partitioned
PostgreSQL table counts as its parent, and its keys may add its partition
key's columns, which PostgreSQL requires and nothing else.

Data migrations are compared too: the same rows are stored after migration
5 on both, and what migrations 6-17 compute from them (jobs.app, the day,
week and 28-day rollups, job_timeline's grains, objects.last_seen, the
sums per job and task) must be equal, and equal to the values worked out
by hand here.

The comparison is shown to fail where it should: against an altered copy of
the SQLite database (a column dropped, a column's type changed) and against
altered descriptions (each property in turn). Skips (77) without PostgreSQL.
"""
import copy
import functools
import math
import os
import re
import sqlite3
import subprocess
import sys
import tempfile

import lmktest
import pgserver

SCHEMA_ROOT = os.path.join(lmktest.SOURCE_ROOT, "schema")
SCHEMA = os.path.join(SCHEMA_ROOT, "sqlite")
PG_SCHEMA = os.path.join(SCHEMA_ROOT, "postgresql")
# What docs/postgresql.md says grows with time, hence is partitioned by time.
PARTITIONED = {"batches", "samples", "sample_packs", "object_hours", "job_timeline"}
# Migrations after which the data fixture is stored (the schema it fits).
FIXTURE_AFTER = 5

T0 = 1763856000  # 2025-11-23 00:00 UTC: a day starts here, a week and a 28-day period do not
FIXTURE = f"""
INSERT INTO jobs (cluster, job) VALUES ('c', '101');
INSERT INTO jobs (cluster, job) VALUES ('c', '102');
INSERT INTO jobs (cluster, job) VALUES ('c', '103');
INSERT INTO jobs (cluster, job) VALUES ('c', '104');
INSERT INTO jobs (cluster, job) VALUES ('c', '105');
INSERT INTO objects (path, kind, build_id) VALUES ('/usr/bin/hpcc', 'exe', '');
INSERT INTO objects (path, kind, build_id) VALUES ('/x/alpha', 'exe', '');
INSERT INTO objects (path, kind, build_id) VALUES ('/x/Zeta', 'exe', '');
INSERT INTO objects (path, kind, build_id) VALUES ('/opt/weird/', 'exe', '');
INSERT INTO objects (path, kind, build_id) VALUES ('/usr/lib/libblas.so.3', 'lib', 'ab12');
INSERT INTO objects (path, kind, build_id) VALUES ('a.out', 'exe', '');
INSERT INTO objects (path, kind, build_id) VALUES ('/never/sampled', 'exe', '');
INSERT INTO job_notes (job_id, note_key, note_value) VALUES (1, 'app', 'hpcc-note'), (4, 'app', ''), (2, 'other', 'x');
INSERT INTO job_objects (job_id, object_id, samples, cpu_seconds) VALUES
        (1, 1, 100, 1.5), (2, 2, 50, 0.5), (2, 3, 50, 0.5), (3, 4, 70, 0.25), (3, 5, 500, 5.0), (4, 6, 10, 0.125);
INSERT INTO object_hours (bucket, object_id, samples, cpu_seconds) VALUES
        ({T0}, 1, 10, 0.5), ({T0 + 3600}, 1, 20, 0.25), ({T0 + 86400}, 1, 5, 0.125),
        ({T0 + 7 * 86400}, 1, 7, 1.0), ({T0 + 28 * 86400}, 1, 28, 2.0),
        ({T0}, 5, 5000000000000000000, 1.0), ({T0 + 7200}, 5, 5000000000000000000, 1.0),
        ({T0 + 3600}, 2, 3, 0.75);
INSERT INTO tasks (step, user_name, comm) VALUES ('0', 'u', 'solver'), ('0', 'u', 'python3');
INSERT INTO samples (job_id, bucket, node_id, object_id, phase_id, task_id, samples, cpu_seconds) VALUES
        (5, {T0}, 1, 5, 1, 1, 20, 20.0), (5, {T0}, 1, 5, 1, 2, 15, 15.0), (5, {T0 + 3600}, 1, 5, 1, 2, 15, 15.0),
        (5, {T0 + 3600}, 2, 6, 1, 2, 1, 1.0), (2, {T0}, 1, 2, 1, 1, 50, 0.5), (0, {T0}, 1, 1, 1, 1, 99, 99.0);
INSERT INTO job_intervals (job_id, node_id, start, seconds, samples, cpu_seconds) VALUES
        (1, 1, {T0}.0 + 299.75, 60.5, 10, 2.5), (1, 1, {T0}.0 + 300.25, 60.0, 4, 1.0),
        (1, 2, {T0}.0 + 86399.5, 30.0, 2, 0.5), (2, 1, {T0}.0 + 10.0, 60.0, 6, 3.0);
"""
# What migrations 6-17 must make of it, worked out by hand: job 5 had no
# executable, its command with the most samples names it (0013); its sums
# per task, and job 2's, from samples (0017), work outside jobs not.
CAP = 9223372036854775807
EXPECTED_APPS = {1: "hpcc-note", 2: "Zeta", 3: None, 4: "a.out", 5: "python3"}
EXPECTED_JOB_TASKS = [[2, 1, 50], [5, 1, 20], [5, 2, 31]]
EXPECTED_LAST_SEEN = {1: T0 + 28 * 86400, 2: T0 + 3600, 3: None, 4: None, 5: T0 + 7200, 6: None, 7: None}


def log(*a):
    lmktest.log(*a)


def migrations(directory):
    out = []
    for name in sorted(os.listdir(directory)):
        m = re.fullmatch(r"(\d{4})-([a-z0-9-]+)\.sql", name)
        if m:
            out.append((int(m.group(1)), name[:-4], os.path.join(directory, name)))
    return out


def check_files(sqlite_m, pg_m):
    names = ([n for _, n, _ in sqlite_m], [n for _, n, _ in pg_m])
    lmktest.check(names[0] == names[1],
                  f"the backends' migrations differ: SQLite {names[0]}, PostgreSQL {names[1]} "
                  "(every schema/sqlite/NNNN-name.sql needs its schema/postgresql/NNNN-name.sql)")
    # The store wraps each migration in its own transaction (with the
    # schema_version row, under an advisory lock on PostgreSQL): a file must
    # not end it, nor hold what cannot run inside one.
    bad = re.compile(r"^\s*(BEGIN|COMMIT|END|ROLLBACK|START\s+TRANSACTION|VACUUM)\b|\bCONCURRENTLY\b",
                     re.IGNORECASE | re.MULTILINE)
    for _, name, path in sqlite_m + pg_m:
        with open(path) as f:
            text = re.sub(r"--[^\n]*", "", f.read())
        # A DO block's BEGIN opens a PL/pgSQL block, not a transaction.
        text = re.sub(r"\$(\w*)\$.*?\$\1\$", "", text, flags=re.DOTALL)
        m = bad.search(text)
        lmktest.check(not m, f"{path}: '{m and m.group(0).strip()}' cannot be inside the migration's transaction")
    embed = os.path.join(SCHEMA_ROOT, "embed-migrations.py")
    with tempfile.TemporaryDirectory() as d:
        for ms in (sqlite_m, pg_m):
            p = subprocess.run([sys.executable, embed, os.path.join(d, "m.c")] + [m[2] for m in ms],
                               capture_output=True, text=True)
            lmktest.check(p.returncode == 0, f"embed-migrations.py refuses {os.path.dirname(ms[0][2])}: {p.stderr}")


# ---- SQLite ----------------------------------------------------------------

def sqlite_migrate(ms):
    db = sqlite3.connect(":memory:", isolation_level=None)
    for version, name, path in ms:
        with open(path) as f:
            db.executescript("BEGIN;\n" + f.read() + "\nCOMMIT;")
        if version == FIXTURE_AFTER:
            db.executescript("BEGIN;\n" + FIXTURE + "\nCOMMIT;")
    return db


def sqlite_class(decl):
    """SQLite's type affinity rules (https://sqlite.org/datatype3.html, 3.1)."""
    d = decl.upper()
    if "INT" in d:
        return "integer"
    if any(k in d for k in ("CHAR", "CLOB", "TEXT")):
        return "text"
    if "BLOB" in d or not d:
        return "blob"
    if any(k in d for k in ("REAL", "FLOA", "DOUB")):
        return "real"
    return "numeric"


def describe_sqlite(db):
    tables = {}
    for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                           "ORDER BY name"):
        cols = db.execute(f'PRAGMA table_info("{t}")').fetchall()
        pk = tuple(c[1] for c in sorted((c for c in cols if c[5]), key=lambda c: c[5]))
        without_rowid = db.execute("SELECT sql FROM sqlite_master WHERE name = ?", (t,)).fetchone()[0]
        rowid_alias = (len(pk) == 1 and not re.search(r"WITHOUT\s+ROWID", without_rowid, re.I) and
                       next(c for c in cols if c[1] == pk[0])[2].upper() == "INTEGER")
        desc = {"columns": [], "pk": pk, "unique": set(), "indexes": {}}
        for cid, name, decl, notnull, default, pkpos in cols:
            desc["columns"].append((name, {
                "type": sqlite_class(decl),
                # Key columns cannot hold NULL (PostgreSQL enforces it; a
                # rowid alias or WITHOUT ROWID key in SQLite too).
                "not null": bool(notnull or pkpos),
                "default": normalise_default(default),
                "assigned": rowid_alias and name == pk[0],
            }))
        for _, iname, unique, origin, partial in db.execute(f'PRAGMA index_list("{t}")'):
            icols = tuple(r[2] for r in db.execute(f'PRAGMA index_info("{iname}")'))
            if origin == "pk":
                continue
            if origin == "u":
                desc["unique"].add(icols)
            else:
                desc["indexes"][iname] = {"unique": bool(unique), "columns": icols, "partial": bool(partial)}
        tables[t] = desc
    return tables, {}


def normalise_default(d):
    if d is None:
        return None
    d = re.sub(r"::[a-z ]+$", "", str(d).strip())
    while d.startswith("(") and d.endswith(")"):
        d = d[1:-1]
    return d


# ---- PostgreSQL ------------------------------------------------------------

def pg_migrate(psql, ms):
    with tempfile.NamedTemporaryFile("w", suffix=".sql", delete=False) as script:
        for version, name, path in ms:
            script.write(f"BEGIN;\n\\i '{path}'\nCOMMIT;\n")
            if version == FIXTURE_AFTER:
                script.write("BEGIN;\n" + FIXTURE + "\nCOMMIT;\n")
    try:
        psql(files=[script.name])
    finally:
        os.unlink(script.name)


PG_CLASSES = {"smallint": "integer", "integer": "integer", "bigint": "integer",
              "real": "real", "double precision": "real",
              "text": "text", "character varying": "text", "character": "text", "bytea": "blob",
              "numeric": "numeric"}


def describe_pg(psql):
    public = "c.relnamespace = 'public'::regnamespace"
    tables = {}
    for (t,) in psql(f"SELECT c.relname FROM pg_class c WHERE {public} AND c.relkind IN ('r', 'p') "
                        "AND NOT c.relispartition ORDER BY 1"):
        tables[t] = {"columns": [], "pk": (), "unique": set(), "indexes": {}}
    for t, name, typ, notnull, default, identity in psql(
            "SELECT c.relname, a.attname, format_type(a.atttypid, NULL), a.attnotnull, "
            "pg_get_expr(d.adbin, d.adrelid), a.attidentity <> '' OR coalesce(pg_get_expr(d.adbin, d.adrelid) "
            "LIKE 'nextval(%', false) "
            "FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped "
            f"LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum WHERE {public} "
            "AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.relname, a.attnum"):
        assigned = identity == "t"
        tables[t]["columns"].append((name, {
            "type": PG_CLASSES.get(typ, typ),
            "not null": notnull == "t",
            "default": None if assigned else normalise_default(default),
            "assigned": assigned,
        }))
    # Keys and indexes: a partitioned table's are partitioned indexes on
    # the parent itself; its partitions' copies are not looked at.
    for t, iname, primary, unique, constraint, partial, cols in psql(
            "SELECT c.relname, i.relname, x.indisprimary, x.indisunique, "
            "EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = x.indexrelid AND k.contype = 'u'), "
            "x.indpred IS NOT NULL, "
            "array_to_string(ARRAY(SELECT coalesce(a.attname, '(expr)') FROM unnest(x.indkey::int2[]) "
            "WITH ORDINALITY k(n, o) LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.n "
            "ORDER BY k.o), ',') "
            "FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid "
            f"WHERE {public} AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1, 2"):
        icols = tuple(cols.split(","))
        if primary == "t":
            tables[t]["pk"] = icols
        elif constraint == "t":
            tables[t]["unique"].add(icols)
        else:
            tables[t]["indexes"][iname] = {"unique": unique == "t", "columns": icols, "partial": partial == "t"}
    # The partition key columns of each top-level table, sub-partitions' included.
    partition_keys = {}
    for root, col in psql(
            "SELECT pg_partition_root(p.partrelid)::regclass::text, a.attname FROM pg_partitioned_table p, "
            "unnest(p.partattrs::int2[]) k(n) JOIN pg_attribute a ON a.attnum = k.n "
            "WHERE a.attrelid = p.partrelid ORDER BY 1, 2"):
        partition_keys.setdefault(root, set()).add(col)
    return tables, partition_keys


def pg_check_partitions(psql, partition_keys):
    lmktest.check(set(partition_keys) == PARTITIONED,
                  f"partitioned tables are {sorted(partition_keys)}, docs/postgresql.md says {sorted(PARTITIONED)}")
    # Ingest must never fail for want of a range: every partitioned table,
    # sub-partitions included, has a default partition.
    rows = psql("SELECT p.partrelid::regclass::text, p.partdefid <> 0 FROM pg_partitioned_table p ORDER BY 1")
    for t, has_default in rows:
        lmktest.check(has_default == "t", f"PostgreSQL: partitioned table {t} has no default partition")
    return len(rows)


# ---- the comparison ----------------------------------------------------------

def without_partition_key(key, sqlite_key, pkey):
    """A PostgreSQL key of a partitioned table minus the partition key
    columns that PostgreSQL made it add (those not in SQLite's key)."""
    return tuple(c for c in key if not (c in pkey and c not in sqlite_key))


def compare(lite, pg, partition_keys):
    """Differences between two descriptions, as sentences; [] when equal."""
    diffs = []
    for t in sorted(set(lite) | set(pg)):
        if t not in pg:
            diffs.append(f"table {t}: only in SQLite")
            continue
        if t not in lite:
            diffs.append(f"table {t}: only in PostgreSQL")
            continue
        a, b = lite[t], pg[t]
        pkey = partition_keys.get(t, set())
        acols, bcols = dict(a["columns"]), dict(b["columns"])
        for c in [c for c, _ in a["columns"]] + [c for c, _ in b["columns"] if c not in acols]:
            if c not in bcols:
                diffs.append(f"{t}.{c}: only in SQLite")
            elif c not in acols:
                diffs.append(f"{t}.{c}: only in PostgreSQL")
            else:
                for prop in acols[c]:
                    if acols[c][prop] != bcols[c][prop]:
                        diffs.append(f"{t}.{c}: {prop} is {acols[c][prop]!r} in SQLite, {bcols[c][prop]!r} in PostgreSQL")
        common = [c for c, _ in a["columns"] if c in bcols]
        if common != [c for c, _ in b["columns"] if c in acols]:
            diffs.append(f"{t}: columns in another order ({common} in SQLite)")
        if without_partition_key(b["pk"], a["pk"], pkey) != a["pk"]:
            diffs.append(f"{t}: primary key {a['pk']} in SQLite, {b['pk']} in PostgreSQL")
        bunique = {without_partition_key(u, next((x for x in a["unique"] if set(x) <= set(u)), ()), pkey)
                   for u in b["unique"]}
        if a["unique"] != bunique:
            diffs.append(f"{t}: unique constraints {sorted(a['unique'])} in SQLite, {sorted(b['unique'])} in PostgreSQL")
        for i in sorted(set(a["indexes"]) | set(b["indexes"])):
            ai, bi = a["indexes"].get(i), b["indexes"].get(i)
            if ai != bi:
                diffs.append(f"{t}: index {i} is {ai} in SQLite, {bi} in PostgreSQL")
    return diffs


def count(desc):
    return len(desc), sum(len(d["columns"]) for d in desc.values()), \
        sum(len(d["indexes"]) + len(d["unique"]) + bool(d["pk"]) for d in desc.values())


# ---- the negative checks -------------------------------------------------------

def altered_descriptions(lite, pg):
    """(what was changed, SQLite description, PostgreSQL description) for
    each property the comparison must notice, changed on one side."""
    def alter(side, f):
        a, b = copy.deepcopy(lite), copy.deepcopy(pg)
        f(a if side == "sqlite" else b)
        return a, b

    def col(d, t, c):
        return dict(d[t]["columns"])[c]

    def drop_col(d, t, c):
        d[t]["columns"] = [x for x in d[t]["columns"] if x[0] != c]

    cases = [
        ("sqlite", "samples.cycles missing", lambda d: drop_col(d, "samples", "cycles")),
        ("postgresql", "jobs.app missing", lambda d: drop_col(d, "jobs", "app")),
        ("postgresql", "batches.seq typed real", lambda d: col(d, "batches", "seq").update(type="real")),
        ("sqlite", "object_hours.cpu_seconds typed integer",
         lambda d: col(d, "object_hours", "cpu_seconds").update(type="integer")),
        ("postgresql", "nodes.boot_id nullable", lambda d: col(d, "nodes", "boot_id").update({"not null": False})),
        ("postgresql", "jobs.ended without its default", lambda d: col(d, "jobs", "ended").update(default=None)),
        ("postgresql", "objects.id not assigned", lambda d: col(d, "objects", "id").update(assigned=False)),
        ("sqlite", "job_ranks key without phase_id",
         lambda d: d["job_ranks"].update(pk=("job_id", "step", "rank"))),
        ("postgresql", "samples key without bucket",
         lambda d: d["samples"].update(pk=("job_id", "node_id", "object_id", "phase_id", "task_id"))),
        ("postgresql", "batches key with received_at",
         lambda d: d["batches"].update(pk=d["batches"]["pk"] + ("received_at",))),
        ("postgresql", "tasks unique without comm", lambda d: d["tasks"].update(unique={("step", "user_name")})),
        ("sqlite", "index jobs_by_app missing", lambda d: d["jobs"]["indexes"].pop("jobs_by_app")),
        ("postgresql", "index jobs_by_user on other columns",
         lambda d: d["jobs"]["indexes"]["jobs_by_user"].update(columns=("user_name",))),
        ("postgresql", "table job_markers missing", lambda d: d.pop("job_markers")),
    ]
    for side, what, f in cases:
        yield (f"{what} ({side})",) + alter(side, f)


def altered_sqlite_copy(db):
    """A copy of the SQLite database with nodes.installed dropped and
    object_days.cpu_seconds made INTEGER, changed with SQL."""
    alt = sqlite3.connect(":memory:", isolation_level=None)
    db.backup(alt)
    alt.executescript("""
        ALTER TABLE nodes DROP COLUMN installed;
        CREATE TABLE object_days_new (day INTEGER NOT NULL, object_id INTEGER NOT NULL,
                samples INTEGER NOT NULL, cpu_seconds INTEGER NOT NULL,
                PRIMARY KEY (day, object_id)) WITHOUT ROWID;
        DROP TABLE object_days;
        ALTER TABLE object_days_new RENAME TO object_days;
    """)
    return alt


# ---- the data migrations -----------------------------------------------------

DATA_QUERIES = {
    "jobs": "SELECT id, job, app FROM jobs ORDER BY id",
    "objects": "SELECT id, path, last_seen FROM objects ORDER BY id",
    "object_days": "SELECT day, object_id, samples, cpu_seconds FROM object_days ORDER BY day, object_id",
    "object_weeks": "SELECT week, object_id, samples, cpu_seconds FROM object_weeks ORDER BY week, object_id",
    "object_periods": "SELECT period, object_id, samples, cpu_seconds FROM object_periods ORDER BY period, object_id",
    "job_timeline": "SELECT job_id, grain, node_id, t, seconds, samples, cpu_seconds FROM job_timeline "
                    "ORDER BY job_id, grain, node_id, t",
    "job_tasks": "SELECT job_id, task_id, samples FROM job_tasks ORDER BY job_id, task_id",
}


def value(v):
    if v is None:
        return None
    s = str(v)
    for conv in (int, float):
        try:
            return conv(s)
        except ValueError:
            pass
    return s


def same(a, b):
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-12)
    return a == b


def compare_data(db, psql):
    results = {}
    for name, q in DATA_QUERIES.items():
        a = [[value(v) for v in r] for r in db.execute(q)]
        b = [[value(v) for v in r] for r in psql(q)]
        equal = len(a) == len(b) and all(len(x) == len(y) and all(map(same, x, y)) for x, y in zip(a, b))
        lmktest.check(equal, f"{name} after the data migrations: SQLite {a}, PostgreSQL {b}")
        results[name] = a
    apps = {r[0]: r[2] for r in results["jobs"]}
    lmktest.check(apps == EXPECTED_APPS, f"jobs.app {apps}, expected {EXPECTED_APPS}")
    last = {r[0]: r[2] for r in results["objects"]}
    lmktest.check(last == EXPECTED_LAST_SEEN, f"objects.last_seen {last}, expected {EXPECTED_LAST_SEEN}")
    capped = [r for r in results["object_days"] if r[1] == 5]
    lmktest.check(capped == [[T0, 5, CAP, 2.0]], f"object 5's day should be capped at {CAP}: {capped}")
    # 299.75 s into the day lies in the first 300-second bucket: truncated, not rounded.
    g300 = [r for r in results["job_timeline"] if r[0] == 1 and r[1] == 300 and r[2] == 1]
    lmktest.check([r[3] for r in g300] == [T0, T0 + 300], f"job 1's 300-second grain on node 1: {g300}")
    lmktest.check(sum(r[1] == 0 for r in results["job_timeline"]) == 4, "every interval should be a grain-0 row")
    lmktest.check(results["job_tasks"] == EXPECTED_JOB_TASKS,
                  f"job_tasks {results['job_tasks']}, expected {EXPECTED_JOB_TASKS}")
    return sum(len(v) for v in results.values())


def parity_database(pg):
    """A database whose default collation is not byte order, as a site's
    may well be, so that a migration that orders text must say COLLATE "C"
    to agree with SQLite; the server's own database if it has no ICU."""
    try:
        pg.psql("CREATE DATABASE parity TEMPLATE template0 ENCODING 'UTF8' "
                "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'")
        return "parity"
    except RuntimeError as e:
        log(f"migrating in a database of byte-order collation, no ICU here: {e}")
        return pgserver.DATABASE


def main():
    sqlite_m, pg_m = migrations(SCHEMA), migrations(PG_SCHEMA)
    lmktest.check(sqlite_m, f"no migrations in {SCHEMA}")
    check_files(sqlite_m, pg_m)

    db = sqlite_migrate(sqlite_m)
    lite, _ = describe_sqlite(db)

    pg = pgserver.start_or_skip()
    log(f"PostgreSQL ready in {pg.start_seconds:.2f}s at {pg.uri}")
    psql = functools.partial(pg.psql, dbname=parity_database(pg))
    pg_migrate(psql, pg_m)
    pgd, partition_keys = describe_pg(psql)
    n_partitioned = pg_check_partitions(psql, partition_keys)

    diffs = compare(lite, pgd, partition_keys)
    lmktest.check(not diffs, "the backends' schemas differ:\n  " + "\n  ".join(diffs))
    tables, columns, keys = count(lite)
    log(f"same {tables} tables, {columns} columns, {keys} keys and indexes on both; "
        f"{n_partitioned} partitioned tables in PostgreSQL, each with a default partition")

    # Text compares by its bytes, as in SQLite (schema/postgresql/0016).
    loose = psql("SELECT c.relname || '.' || a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                 "WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p') AND a.attnum > 0 "
                 "AND NOT a.attisdropped AND a.atttypid = 'text'::regtype "
                 "AND a.attcollation <> 'pg_catalog.\"C\"'::regcollation ORDER BY 1")
    lmktest.check(not loose, f"PostgreSQL text columns not in byte order (COLLATE \"C\"): {[r[0] for r in loose]}")

    rows = compare_data(db, psql)
    log(f"the data migrations made the same {rows} rows on both")

    # The comparison fails where it should.
    for what, a, b in altered_descriptions(lite, pgd):
        d = compare(a, b, partition_keys)
        lmktest.check(d, f"the comparison did not notice: {what}")
    alt, _ = describe_sqlite(altered_sqlite_copy(db))
    d = compare(alt, pgd, partition_keys)
    lmktest.check(len(d) == 2 and any("nodes.installed: only in PostgreSQL" in x for x in d) and
                  any("object_days.cpu_seconds: type is 'integer' in SQLite" in x for x in d),
                  f"an altered SQLite database should differ in exactly nodes.installed and "
                  f"object_days.cpu_seconds, the comparison said: {d}")
    log(f"and it notices each of {len(list(altered_descriptions(lite, pgd)))} altered descriptions "
        "and an altered SQLite database")
    pg.stop()


if __name__ == "__main__":
    main()
