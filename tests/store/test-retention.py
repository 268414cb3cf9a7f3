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
summaries stay. A rollup window shorter than the raw one is refused."""
import time

from lmktest import fail, log
from storetest import Store, check_eq, make_batch, raw_rows, row, sql_read, sql_write

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
    sql_write(d.db, [(f"UPDATE {t} SET {c} = {c} - {shift} WHERE {c} < ?", (now - DAY,)) for t, c in ROLLUPS])
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


if __name__ == "__main__":
    main()
