#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Retention (docs/lmk-store.md): with --keep-raw-days the store deletes
the raw detail older than that, in steps of at most a few thousand rows:
the receipts of batches received before the horizon, the raw rows (packed
per batch and job) and per-batch time line of jobs last seen before it, and
the raw rows of work outside jobs; also the raw rows a store from before
packs (schema/0017) left in samples, which the test writes there itself,
more than one step's worth. Everything the queries answer from stays: the same job
summaries (their time line then from 5-minute sums), the same site-wide
objects and application mix. /metrics counts what went; the raw rows
younger than the horizon are all still there.

The store first runs without retention (--keep-raw-days 0) and takes the
batches; the test then ages the receipts of the old batches in the
database (the store's own clock cannot be set) and restarts the store with
--keep-raw-days 1.

Then the site-wide rollups' own window: the old rollup rows are aged by
two 28-day periods, and the store restarted with --keep-rollup-days 1
deletes every rollup row (time per object by hour, day, week and period,
the application mix by day) from before the start of the period that
holds the one-day horizon, in steps, and keeps every younger one; per-job
summaries stay. A rollup window shorter than the raw one is refused.

Last, the jobs' own window: with --keep-job-days 1 the jobs last seen
before the horizon go with every row that hangs off them (every table with
a job_id column, found in the schema), in steps, one of them holding more
rows than a step deletes; the younger jobs keep every row and answer as
before, and the site-wide rollups are not touched. A job window shorter
than the raw one, or set while raw rows are kept for good, is refused."""
import re
import time

from lmktest import fail, log
from storetest import Store, check_eq, function, is_postgresql, make_batch, rank, raw_rows, row, sql_read, sql_write

DAY = 86400
HOUR = 3600


def metric(s, name):
    status, _, text = s.request("GET", "/metrics")
    check_eq(status, 200, "/metrics")
    values = {}
    for line in text.splitlines():
        if line.startswith(name):
            key, value = line.rsplit(" ", 1)
            values[key] = float(value)
    return values


def job(jid, start, end):
    return {"job": jid, "user": "alice", "account": "p1", "partition": "cpu", "first_seen": start,
            "last_seen": end}


def answers(s, jobs):
    """What the queries say: job summaries (without what changes with the
    time line's grain), site-wide objects, the application mix."""
    out = {}
    for j in jobs:
        sm = s.get_ok(f"/api/v1/jobs/{j}")
        tl = sm.get("timeline") or {}
        out[j] = (sm["samples"], sm["cpu_seconds"], sorted((o["object"], o["samples"]) for o in sm["objects"]),
                  tl.get("step_seconds"), [n["busy_cores"] for n in tl.get("nodes", [])])
    out["objects"] = [(o["object"], o["samples"]) for o in s.get_ok("/api/v1/objects?since=4d")["objects"]]
    out["apps"] = [(g["name"], g["samples"]) for g in s.get_ok("/api/v1/apps?since=4d")["groups"]]
    return out


def main():
    now = int(time.time())
    old = (now - 2 * DAY) // HOUR * HOUR       # well before a one-day horizon
    recent = (now - 2 * HOUR) // HOUR * HOUR   # well after it
    pushes = []
    seq = 0
    # an old job over 20 hours, 500 rows an hour: 10,000 raw rows in 20 packs
    for h in range(20):
        seq += 1
        pushes.append(make_batch(seq=seq, start=old + h * HOUR, jobs=[job("3001", old, old + 20 * HOUR)],
                                 rows=[row("3001", f"/opt/app/lib/libpart{k}.so", "lib", 1 + k % 7)
                                       for k in range(500)] + [row(None, "[idle]", "idle", 30)]))
    # an old job of three minutes: its time line was its batches
    for k in range(3):
        seq += 1
        pushes.append(make_batch(seq=seq, start=old + 2 * HOUR + k * 60,
                                 jobs=[job("3003", old + 2 * HOUR, old + 2 * HOUR + 180)],
                                 rows=[row("3003", "/opt/app/bin/short", "exe", 60)]))
    old_seqs = list(range(1, seq + 1))
    for k in range(3):
        seq += 1
        pushes.append(make_batch(seq=seq, start=recent + k * 60, jobs=[job("3002", recent, recent + 180)],
                                 rows=[row("3002", "/opt/app/bin/solver", "exe", 50),
                                       row(None, "[idle]", "idle", 10)]))

    d = None
    with Store(extra=["--keep-raw-days", "0"]) as s:
        d = s
        for b in pushes:
            check_eq(s.ingest(b)[0], 200, f"batch {b['batch']['seq']}")
        before = answers(s, ["3001", "3002", "3003"])
        check_eq(before["3003"][3], 60.0, "a short job's time line: its batches")
        check_eq(metric(s, "lmk_store_retention_keep_raw_seconds"),
                 {"lmk_store_retention_keep_raw_seconds": 0.0}, "no retention")
        time.sleep(1.5)
        check_eq(s.sql("SELECT count(*) FROM batches")[0][0], len(pushes), "nothing deleted without retention")
        ids = dict(s.sql("SELECT job, id FROM jobs"))
        counts = {
            "old_packs": s.sql("SELECT count(*) FROM sample_packs WHERE job_id = ?", (ids["3001"],))[0][0],
            "old_timeline": s.sql("SELECT count(*) FROM job_timeline WHERE job_id = ? AND grain = 0",
                                  (ids["3001"],))[0][0],
            "old_idle": s.sql("SELECT count(*) FROM sample_packs WHERE job_id = 0 AND bucket < ?",
                              (now - DAY,))[0][0],
            "recent_rows": len(raw_rows(s.db, "p.job_id <> ? AND p.bucket >= ?", (ids["3001"], now - DAY))),
            "recent_timeline": s.sql("SELECT count(*) FROM job_timeline WHERE job_id = ?", (ids["3002"],))[0][0],
            "old_short": s.sql("SELECT count(*) FROM sample_packs WHERE job_id = ?", (ids["3003"],))[0][0],
            "old_short_timeline": s.sql("SELECT count(*) FROM job_timeline WHERE job_id = ? AND grain = 0",
                                        (ids["3003"],))[0][0],
        }
        log(f"before: {counts}")
        check_eq((counts["old_packs"], counts["old_idle"], counts["old_short"], counts["recent_rows"]),
                 (20, 20, 3, 6), "packs: one per batch and job (and of work outside jobs), the recent rows")
        check_eq(len(raw_rows(s.db, "p.job_id = ?", (ids["3001"],))), 10000, "the old job's raw rows")

    # what a day and more would have done to the old receipts
    sql_write(d.db, [(f"UPDATE batches SET received_at = received_at - {3 * DAY} WHERE seq <= ?", (old_seqs[-1],))])
    # what a store from before schema/0017 left in samples: 10,000 old rows
    # of the old job and 1,000 of work outside jobs, then one recent row
    legacy = [(ids["3001"], old + (k % 20) * HOUR, k) for k in range(10000)] + \
             [(0, old + (k % 10) * HOUR, k) for k in range(1000)]
    sql_write(d.db, [("INSERT INTO samples (job_id, bucket, node_id, object_id, phase_id, task_id, samples, "
                      "cpu_seconds) VALUES (?, ?, 1, 1, 1, ?, 1, 1.0)", r) for r in legacy] +
              [("INSERT INTO samples (job_id, bucket, node_id, object_id, phase_id, task_id, samples, "
                "cpu_seconds) VALUES (?, ?, 1, 1, 1, 1, 1, 1.0)", (ids["3002"], recent))])

    with Store(directory=d.dir, db=d.db, extra=["--keep-raw-days", "1", "--retention-interval", "1"]) as s:
        end = time.monotonic() + 30
        while True:
            m = metric(s, "lmk_store_retention_")
            if m.get("lmk_store_retention_last_run_seconds", 0) > 0 and \
                    not s.sql("SELECT 1 FROM samples WHERE job_id = ? LIMIT 1", (ids["3001"],)) and \
                    not s.sql("SELECT 1 FROM sample_packs WHERE job_id = ? LIMIT 1", (ids["3001"],)):
                break
            if time.monotonic() > end:
                fail(f"retention did not delete the old rows within 30 s: {m}\n{s.read_log()}")
            time.sleep(0.2)
        check_eq(m["lmk_store_retention_keep_raw_seconds"], float(DAY), "the horizon's age")
        if not now - DAY - 5 <= m["lmk_store_retention_horizon_seconds"] <= time.time() - DAY + 1:
            fail(f"horizon {m['lmk_store_retention_horizon_seconds']}, expected about {now - DAY}")
        check_eq((m['lmk_store_retention_deleted_rows_total{table="batches"}'],
                  m['lmk_store_retention_deleted_rows_total{table="sample_packs"}'],
                  m['lmk_store_retention_deleted_rows_total{table="samples"}'],
                  m['lmk_store_retention_deleted_rows_total{table="job_timeline"}']),
                 (float(len(old_seqs)), float(counts["old_packs"] + counts["old_idle"] + counts["old_short"]),
                  float(len(legacy)), float(counts["old_timeline"] + counts["old_short_timeline"])),
                 "rows deleted, as /metrics counts them")
        said = [line for line in s.read_log().splitlines() if "Retention: deleted" in line]
        passes = [line for line in s.read_log().splitlines() if "Retention: pass done in" in line]
        log(said, passes)
        # a step deletes a few thousand rows at most: the 11,000 old ones in samples took more than one
        if not said or not any(int(x.split(" steps")[0].rsplit(" ", 1)[1]) >= 2 for x in passes):
            fail(f"the log should say what retention deleted, in more than one step: {said} {passes}")

        # the raw rows older than the horizon are gone, the younger ones all there
        check_eq(s.sql("SELECT seq FROM batches ORDER BY seq"), [(q,) for q in range(old_seqs[-1] + 1, seq + 1)],
                 "the receipts of the recent batches only")
        check_eq(s.sql("SELECT count(*) FROM sample_packs WHERE bucket < ?", (now - DAY,))[0][0], 0,
                 "no raw rows before the horizon")
        check_eq(s.sql("SELECT count(*) FROM samples WHERE bucket < ?", (now - DAY,))[0][0], 0,
                 "no rows from before packs older than the horizon")
        check_eq(len(raw_rows(s.db, "p.job_id <> ? AND p.bucket >= ?", (ids["3001"], now - DAY))),
                 counts["recent_rows"], "the recent raw rows")
        check_eq(s.sql("SELECT job_id, bucket FROM samples"), [(ids["3002"], recent)],
                 "the recent row from before packs")
        check_eq(s.sql("SELECT count(*) FROM job_timeline WHERE job_id = ? AND grain = 0", (ids["3001"],))[0][0], 0,
                 "the old job's per-batch time line")
        if not s.sql("SELECT count(*) FROM job_timeline WHERE job_id = ? AND grain = 300", (ids["3001"],))[0][0]:
            fail("the old job's 5-minute time line went too")
        check_eq(s.sql("SELECT count(*) FROM job_timeline WHERE job_id = ?", (ids["3002"],))[0][0],
                 counts["recent_timeline"], "the recent job's time line")

        # and every answer is what it was
        after = answers(s, ["3001", "3002", "3003"])
        for k in before:
            if k == "3003":
                continue
            check_eq(after[k], before[k], f"the answer for {k} after retention")
        # the short old job: the same sums, its time line now one 5-minute step of its 180 s
        check_eq(after["3003"][:3], before["3003"][:3], "the short old job's summary")
        check_eq((after["3003"][3], after["3003"][4]), (300.0, [[1.0]]),
                 "the short old job's time line from the 5-minute sums (60 samples a minute at 1 Hz: one core)")

    test_rollup_window(d, ids, now, after)
    test_job_window(d, now, old, seq)
    log("PASS")


ROLLUPS = [("object_hours", "bucket"), ("object_days", "day"), ("object_weeks", "week"),
           ("object_periods", "period"), ("app_days", "day"), ("app_dim_days", "day")]
PERIOD = 28 * DAY


def rollup_counts(db, cut):
    return {t: tuple(sql_read(db, f"SELECT count(*) FROM {t} WHERE {c} {op} ?", (cut,))[0][0] for op in ("<", ">="))
            for t, c in ROLLUPS}


def test_rollup_window(d, ids, now, after):
    # refused: rollups of time whose raw rows are still kept
    bad = Store(directory=d.dir, db=d.db, extra=["--keep-raw-days", "30", "--keep-rollup-days", "7"]).launch()
    check_eq(bad.proc.wait(timeout=20), 1, "exit status of --keep-rollup-days 7 with --keep-raw-days 30")
    if "must be at least as long" not in bad.read_log():
        fail(f"the refusal should say why:\n{bad.read_log()}")

    # two periods further back: a shift that keeps every grain aligned
    shift = 2 * PERIOD
    old = (now - DAY) - (now - DAY) % DAY
    sql_write(d.db, [(f"UPDATE {t} SET {c} = {c} - {shift} WHERE {c} < ?", (old,)) for t, c in ROLLUPS])
    h = now - DAY
    cut = h - h % PERIOD        # the horizon the store will use (until the period turns)
    counts = rollup_counts(d.db, cut)   # before the store starts: its first pass runs at once
    log(f"rollup rows before / after the horizon {cut}: {counts}")
    if counts["object_hours"][0] < 20 or counts["object_hours"][1] == 0:
        fail(f"the test needs old and young rollup rows: {counts}")
    with Store(directory=d.dir, db=d.db, extra=["--keep-raw-days", "1", "--keep-rollup-days", "1",
                                                "--retention-interval", "1"]) as s:
        end = time.monotonic() + 30
        while True:
            m = metric(s, "lmk_store_retention_")
            if m.get("lmk_store_retention_deleted_rollup_rows_total", 0) >= sum(c[0] for c in counts.values()):
                break
            if time.monotonic() > end:
                fail(f"retention did not delete the old rollups within 30 s: {m}\n{s.read_log()}")
            time.sleep(0.2)
        check_eq(m["lmk_store_retention_keep_rollup_seconds"], float(DAY), "the rollup window")
        check_eq(m["lmk_store_retention_rollup_horizon_seconds"], float(cut), "the rollups' horizon")
        check_eq(m["lmk_store_retention_deleted_rollup_rows_total"], float(sum(c[0] for c in counts.values())),
                 "rollup rows deleted, as /metrics counts them")
        check_eq(rollup_counts(d.db, cut), {t: (0, c[1]) for t, c in counts.items()},
                 "rollup rows before the horizon gone, all younger ones kept")
        # what is left answers alone: nothing older than the recent job
        check_eq(s.get_ok("/api/v1/objects?since=90d")["objects"], s.get_ok("/api/v1/objects?since=4d")["objects"],
                 "site-wide objects over 90 days: only what the window kept")
        check_eq(s.get_ok("/api/v1/apps?since=90d")["groups"], s.get_ok("/api/v1/apps?since=4d")["groups"],
                 "the application mix over 90 days: only what the window kept")
        # per-job summaries stay
        for j in ("3001", "3002", "3003"):
            sm = s.get_ok(f"/api/v1/jobs/{j}")
            check_eq((sm["samples"], sm["cpu_seconds"], sorted((o["object"], o["samples"]) for o in sm["objects"])),
                     after[j][:3], f"job {j}'s summary after the rollup window")
        said = [line for line in s.read_log().splitlines() if "rollup rows from before" in line]
        if not said:
            fail(f"the log should say how many rollup rows went:\n{s.read_log()}")
        log(said[-1])



def job_tables(db):
    """The tables with a job_id column: all that hangs off a job (on
    PostgreSQL not their partitions, whose rows the table holds)."""
    if is_postgresql(db):
        q = ("SELECT c.relname FROM pg_class c JOIN pg_attribute a ON a.attrelid = c.oid "
             "WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p') "
             "AND NOT c.relispartition AND a.attname = 'job_id' AND NOT a.attisdropped")
    else:
        q = ("SELECT m.name FROM sqlite_master m, pragma_table_info(m.name) p "
             "WHERE m.type = 'table' AND p.name = 'job_id'")
    return sorted(r[0] for r in sql_read(db, q))


def job_rows(db, tables, job_id):
    return {t: sql_read(db, f"SELECT count(*) FROM {t} WHERE job_id = ?", (job_id,))[0][0] for t in tables}


def site_rollups(db):
    """Every row of the site-wide rollups, as they are."""
    return {t: sql_read(db, f"SELECT * FROM {t} ORDER BY 1, 2, 3, 4") for t, _ in ROLLUPS}


def test_job_window(d, now, old, seq):
    for raw, jobs in (("30", "7"), ("0", "400")):
        bad = Store(directory=d.dir, db=d.db, extra=["--keep-raw-days", raw, "--keep-job-days", jobs]).launch()
        check_eq(bad.proc.wait(timeout=20), 1, f"exit status of --keep-job-days {jobs} with --keep-raw-days {raw}")
        if "--keep-job-days" not in bad.read_log() or "must be at least as long" not in bad.read_log():
            fail(f"the refusal should say why:\n{bad.read_log()}")

    # An old job with something in every table of a job's summary, and
    # more rows of it than a retention step deletes; then a young one.
    big = "3004"
    counters = [{"role": "cycles", "event": "cpu-cycles", "source": "perf", "available": True},
                {"role": "l1m", "event": "L1-dcache-load-misses", "source": "perf", "available": True}]
    pushes = []
    for k in range(2):
        seq += 1
        rows = [row(big, f"/opt/big/lib/libbig{k}-{i}.so", "lib", 1 + i % 5, phase="solve") for i in range(3000)]
        rows[0].update(cpu_time_ns=10 ** 9, events={"l1m": 1000},
                       burst={"samples": 2, "window_ns": 2 * 10 ** 6, "per_second": {"l1m": 1e7}})
        b = make_batch(seq=seq, start=old + (5 + k) * HOUR, rows=rows,
                       jobs=[dict(job(big, old + 5 * HOUR, old + 7 * HOUR), notes={"app": "big"})],
                       markers=[{"job": big, "comm": "app", "phase": "io", "state": "off-rate"}],
                       ranks=[rank(big, 0, 10, 2, first=old + (5 + k) * HOUR + 1, last=old + (5 + k) * HOUR + 59)],
                       functions=[function(big, f"/opt/big/lib/libbig{k}-{i}.so", 1, name=f"kernel{i}", phase="solve")
                                  for i in range(50)])
        b["counters"] = counters
        pushes.append(b)
    young = "3005"
    seq += 1
    pushes.append(make_batch(seq=seq, start=now - HOUR, jobs=[job(young, now - HOUR, now - HOUR + 60)],
                             rows=[row(young, "/opt/app/bin/young", "exe", 40)]))

    with Store(directory=d.dir, db=d.db, extra=["--keep-raw-days", "1", "--retention-interval", "1"]) as s:
        for b in pushes:
            check_eq(s.ingest(b)[0], 200, f"batch {b['batch']['seq']}")
        ids = dict(s.sql("SELECT job, id FROM jobs"))
        # The raw window has walked past the big job's time already (it
        # came late): its raw rows go with the job.
        raw = s.sql("SELECT count(*) FROM job_timeline WHERE job_id = ? AND grain = 0", (ids[big],))[0][0]
        tables = job_tables(d.db)
        before = {j: job_rows(d.db, tables, ids[j]) for j in ids}
        # samples is written no more (schema/0017): the raw rows are in sample_packs
        empty = sorted(t for t, n in before[big].items() if n == 0 and t != "samples")
        if empty:
            fail(f"job {big} should have rows in every table of a job's summary, not in {empty}: {before[big]}")
        if before[big]["job_objects"] <= 5000:
            fail(f"job {big} should have more rows than a step deletes: {before[big]}")
        rollups = site_rollups(d.db)
        site = (s.get_ok("/api/v1/objects?since=90d")["objects"], s.get_ok("/api/v1/apps?since=90d")["groups"])
        young_answers = {j: s.get_ok(f"/api/v1/jobs/{j}") for j in ("3002", young)}
    gone = ["3001", "3003", big]
    log(f"before the job window: jobs {sorted(ids)}, job {big}'s rows {before[big]}")

    with Store(directory=d.dir, db=d.db, extra=["--keep-raw-days", "1", "--keep-job-days", "1",
                                                "--retention-interval", "1"]) as s:
        end = time.monotonic() + 30
        while True:
            m = metric(s, "lmk_store_retention_")
            if m.get("lmk_store_retention_deleted_jobs_total", 0) >= len(gone) and \
                    not any(any(job_rows(d.db, tables, ids[j]).values()) for j in gone):
                break
            if time.monotonic() > end:
                fail(f"retention did not delete the old jobs within 30 s: {m}\n{s.read_log()}")
            time.sleep(0.2)
        check_eq(m["lmk_store_retention_keep_job_seconds"], float(DAY), "the job window")
        if not now - DAY - 5 <= m["lmk_store_retention_job_horizon_seconds"] <= time.time() - DAY + 1:
            fail(f"job horizon {m['lmk_store_retention_job_horizon_seconds']}, expected about {now - DAY}")
        check_eq(m["lmk_store_retention_deleted_jobs_total"], float(len(gone)), "jobs deleted, as /metrics counts")
        check_eq(sql_read(d.db, "SELECT count(*) FROM retention WHERE name = 'expire_job_left'"), [(0,)],
                 "no job left half-deleted")

        # the old jobs are gone from every table and every answer
        check_eq(sorted(r[0] for r in s.sql("SELECT job FROM jobs")), ["3002", young], "the jobs kept")
        for j in gone:
            status, _, _ = s.get(f"/api/v1/jobs/{j}")
            check_eq(status, 404, f"GET /api/v1/jobs/{j} after the job window")
        check_eq(sorted(x["job"] for x in s.get_ok("/api/v1/jobs?since=30d")["jobs"]), ["3002", young],
                 "the job list")
        # the young ones keep every row and answer as before
        for j in ("3002", young):
            check_eq(job_rows(d.db, tables, ids[j]), before[j], f"job {j}'s rows")
            check_eq(s.get_ok(f"/api/v1/jobs/{j}"), young_answers[j], f"job {j}'s summary")
        # the site-wide rollups keep the old jobs' time
        check_eq(site_rollups(d.db), rollups, "the site-wide rollups")
        check_eq((s.get_ok("/api/v1/objects?since=90d")["objects"], s.get_ok("/api/v1/apps?since=90d")["groups"]),
                 site,
                 "site-wide objects and the application mix")

        said = [line for line in s.read_log().splitlines() if re.search(r"Retention: deleted \d+ jobs", line)]
        log(said)
        # the log counts the raw rows apart
        raw_tables = ("samples", "sample_packs")
        want_rows = sum(sum(v for t, v in before[j].items() if t not in raw_tables) for j in gone) - raw
        raw += sum(before[big][t] for t in raw_tables)
        want = rf"Retention: deleted {len(gone)} jobs last seen before \d+ and {want_rows} rows of their " \
            rf"summaries \(and {raw} raw rows the raw window had left\), in (\d+) steps\."
        found = re.search(want, said[0]) if said else None
        if not found or int(found.group(1)) < 2:
            fail(f"the log should say that {len(gone)} jobs and {want_rows} rows went, in more than one step: "
                 f"{said}")
        steps = [int(found.group(1))]
        log(f"{len(gone)} old jobs deleted with their {want_rows} rows, in {steps[0]} steps; "
            "the young ones and the site-wide rollups as they were")


if __name__ == "__main__":
    main()
