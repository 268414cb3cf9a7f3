#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""PostgreSQL's time partitions (docs/postgresql.md, "Time-partitioned
tables"), on a private server: the store makes the daily partitions of
batches, sample_packs and the per-batch time line from yesterday to a week
ahead, and object_hours' current and next 28-day period, and none of
samples, which is written no more (schema/0017); rows that sat in a
default partition move into the partition made for their range; with
--keep-raw-days the raw partitions wholly before the horizon are dropped,
samples' too, and nothing else (a partition an admin made under another
name stays); with --keep-rollup-days object_hours' 28-day partitions
wholly before the rollup horizon are dropped likewise, those the store
made and no others (not an admin's, nor one under a name like the store's
that does not start a period); /metrics shows the counts. Two stores
starting on one database at once make each partition once. Skips (77)
without PostgreSQL."""
import os
import threading
import time

os.environ["LMK_TEST_BACKEND"] = "postgresql"

from lmktest import check, fail, log  # noqa: E402
from storetest import Store, check_eq, new_database, pg_server  # noqa: E402

DAY = 86400
PERIOD = 28 * DAY
DAILY = ("batches", "sample_packs", "job_timeline_raw")
# an empty pack (sample-pack.h): the version, 1 Hz
PACK = "decode('01000000000000f03f', 'hex')"


def day_name(table, start):
    return f"{table}_p{time.strftime('%Y%m%d', time.gmtime(start))}"


def partitions(pg, dbname, parent):
    """{name: (from, to)} of parent's partitions but the default one."""
    rows = pg.psql("SELECT c.relname, pg_get_expr(c.relpartbound, c.oid) FROM pg_inherits i "
                   f"JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = '{parent}'::regclass",
                   dbname=dbname)
    out = {}
    for name, bound in rows:
        if bound == "DEFAULT":
            continue
        # FOR VALUES FROM ('1795564800') TO ('1795651200')
        lo, hi = [int(float(x.strip("'() "))) for x in bound.split("FROM", 1)[1].split("TO")]
        out[name] = (lo, hi)
    return out


def metrics(store):
    status, _, text = store.request("GET", "/metrics")
    check_eq(status, 200, "/metrics")
    out = {}
    for line in text.splitlines():
        if line.startswith("lmk_store_partition"):
            key, value = line.rsplit(" ", 1)
            out[key] = float(value)
    return out


def wait_metric(store, key, want, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        m = metrics(store)
        if m.get(key, -1) >= want:
            return m
        time.sleep(0.1)
    fail(f"/metrics: {key} did not reach {want} within {timeout} s: {metrics(store)}\n{store.read_log()}")


def dbname_of(db):
    return db.rsplit("/", 1)[1]


def check_made(pg, dbname, now):
    today = now // DAY * DAY
    for table in DAILY:
        have = partitions(pg, dbname, table)
        want = {day_name(table, today + k * DAY): (today + k * DAY, today + (k + 1) * DAY) for k in range(-1, 8)}
        check_eq({k: v for k, v in have.items() if k in want}, want, f"{table}'s daily partitions")
    period = now // PERIOD * PERIOD
    have = partitions(pg, dbname, "object_hours")
    want = {day_name("object_hours", p): (p, p + PERIOD) for p in (period, period + PERIOD)}
    check_eq(have, want, "object_hours' partitions")
    check_eq({k: v for k, v in partitions(pg, dbname, "samples").items() if k.startswith("samples_p")}, {},
             "samples' partitions (none made ahead)")


def test_made_moved_dropped():
    pg = pg_server()
    db = new_database()
    name = dbname_of(db)
    now = int(time.time())
    today = now // DAY * DAY

    with Store(db=db, extra=["--keep-raw-days", "30"]) as s:
        m = wait_metric(s, 'lmk_store_partitions{table="sample_packs"}', 9)
        check_made(pg, name, now)
        check_eq(m["lmk_store_partitions_created_total"], 3 * 9 + 2, "partitions made")
        check_eq(m["lmk_store_partition_failures_total"], 0, "partition failures")
    log("a new store made 9 daily partitions of each raw table and 2 periods of object_hours")

    # While the store is down: a day's partition lost with its rows in the
    # default partition; an old day's partition of each raw table; an
    # admin's own partition of old rows under another name.
    ahead = today + 5 * DAY
    old = today - 40 * DAY
    gone = day_name("sample_packs", ahead)
    pg.psql(f"DROP TABLE {gone}", dbname=name)
    pg.psql("INSERT INTO sample_packs (job_id, bucket, node_id, boot_id, seq, n_rows, samples, packed) "
            f"VALUES (1, {ahead}, 1, 'b', 1, 0, 5, {PACK}), (1, {ahead + 3600}, 1, 'b', 2, 0, 6, {PACK}), "
            f"(2, {ahead + 7200}, 1, 'b', 3, 0, 7, {PACK})", dbname=name)
    # an old day of each raw table; samples' as an older store made them
    for table, key in (("sample_packs", "bucket"), ("samples", "bucket"), ("batches", "interval_start"),
                       ("job_timeline_raw", "t")):
        pg.psql(f"CREATE TABLE {day_name(table, old)} PARTITION OF {table} FOR VALUES FROM ({old}) TO "
                f"({old + DAY})", dbname=name)
    pg.psql("INSERT INTO sample_packs (job_id, bucket, node_id, boot_id, seq, n_rows, samples, packed) "
            f"VALUES (3, {old}, 1, 'b', 4, 0, 1, {PACK}), (3, {old + 3600}, 1, 'b', 5, 0, 1, {PACK})", dbname=name)
    pg.psql("INSERT INTO samples (job_id, bucket, node_id, object_id, phase_id, task_id, samples, cpu_seconds) "
            f"VALUES (3, {old}, 1, 1, 1, 1, 1, 1.0), (3, {old + 3600}, 1, 1, 1, 1, 1, 1.0)", dbname=name)
    pg.psql("INSERT INTO batches (node_id, boot_id, seq, received_at, interval_start, interval_end, event, "
            f"frequency_hz, samples_lost, n_rows, samples) VALUES (1, 'b', 1, {old}, {old}, {old + 60}, "
            "'cpu-clock', 1, 0, 1, 1)", dbname=name)
    archive = today - 60 * DAY
    pg.psql(f"CREATE TABLE samples_archive PARTITION OF samples FOR VALUES FROM ({archive}) TO "
            f"({archive + DAY})", dbname=name)
    pg.psql("INSERT INTO samples (job_id, bucket, node_id, object_id, phase_id, task_id, samples, cpu_seconds) "
            f"VALUES (4, {archive}, 1, 1, 1, 1, 1, 1.0)", dbname=name)
    check_eq(pg.psql("SELECT count(*) FROM sample_packs_default", dbname=name), [["3"]],
             "rows in sample_packs_default")

    with Store(db=db, extra=["--keep-raw-days", "30"]) as s:
        m = wait_metric(s, "lmk_store_partitions_dropped_total", 4)
        check_eq(m["lmk_store_partitions_dropped_total"], 4, "partitions dropped (one old day of each raw table)")
        check_eq(m["lmk_store_partitions_created_total"], 1, "partitions made (the lost one)")
        check_eq(m['lmk_store_partition_default_rows{table="sample_packs"}'], 0, "rows left in sample_packs_default")
        check_eq(m["lmk_store_partition_failures_total"], 0, "partition failures")
        check("moved 3 rows of sample_packs from sample_packs_default into " + gone in s.read_log(),
              f"the store did not say it moved the rows:\n{s.read_log()}")
        status, _, body = s.request("GET", "/healthz")
        check_eq(status, 200, f"/healthz after the partition changes: {body}")
    check_made(pg, name, now)
    check_eq(pg.psql(f"SELECT job_id, bucket, samples FROM {gone} ORDER BY bucket", dbname=name),
             [["1", str(ahead), "5"], ["1", str(ahead + 3600), "6"], ["2", str(ahead + 7200), "7"]],
             f"the rows moved into {gone}")
    for table in DAILY + ("samples",):
        check(day_name(table, old) not in partitions(pg, name, table), f"{day_name(table, old)} was not dropped")
    check_eq(pg.psql(f"SELECT count(*) FROM samples WHERE bucket < {today - 30 * DAY}", dbname=name), [["1"]],
             "old sample rows left (only the admin's samples_archive)")
    check("samples_archive" in partitions(pg, name, "samples"), "the admin's samples_archive was dropped")
    log("the lost day's partition was made again with its 3 rows moved out of the default partition; "
        "the 4 old days' partitions were dropped, the admin's own partition stayed")


def test_rollup_partitions_dropped():
    pg = pg_server()
    db = new_database()
    name = dbname_of(db)
    now = int(time.time())
    days = 30
    h = now - days * DAY
    cut = h - h % PERIOD  # the rollup horizon (docs/lmk-store.md), before the current period

    with Store(db=db, extra=["--keep-raw-days", "30"]) as s:
        wait_metric(s, 'lmk_store_partitions{table="object_hours"}', 2)

    # While the store is down, older periods' partitions as the store would
    # have made them (two wholly before the horizon, the horizon's own),
    # one under a name like the store's that starts no period, and an
    # admin's; a row in each, and one in each period's day.
    ours = {day_name("object_hours", p): p for p in (cut - 2 * PERIOD, cut - PERIOD, cut)}
    odd_start = cut - 3 * PERIOD + DAY
    others = {day_name("object_hours", odd_start): (odd_start, cut - 2 * PERIOD),
              "object_hours_archive": (cut - 5 * PERIOD, cut - 4 * PERIOD)}
    bounds = {n: (p, p + PERIOD) for n, p in ours.items()}
    bounds.update(others)
    for n, (lo, hi) in bounds.items():
        pg.psql(f"CREATE TABLE {n} PARTITION OF object_hours FOR VALUES FROM ({lo}) TO ({hi})", dbname=name)
        pg.psql(f"INSERT INTO object_hours (bucket, object_id, samples, cpu_seconds) VALUES ({lo}, 1, 1, 1.0), "
                f"({hi - 3600}, 2, 2, 2.0)", dbname=name)
    kept_rows = pg.psql(f"SELECT bucket, object_id, samples FROM object_hours WHERE bucket >= {cut} "
                        "ORDER BY 1, 2", dbname=name)

    with Store(db=db, extra=["--keep-raw-days", "30", "--keep-rollup-days", str(days),
                             "--retention-interval", "1"]) as s:
        m = wait_metric(s, "lmk_store_partitions_dropped_total", 2)
        end = time.monotonic() + 30
        while pg.psql(f"SELECT count(*) FROM object_hours WHERE bucket < {cut}", dbname=name) != [["0"]]:
            if time.monotonic() > end:
                fail(f"the rollup rows before {cut} were not deleted within 30 s:\n{s.read_log()}")
            time.sleep(0.2)
        m = metrics(s)
        check_eq(m["lmk_store_partitions_dropped_total"], 2, "partitions dropped (object_hours' two old periods)")
        check_eq(m["lmk_store_partition_failures_total"], 0, "partition failures")
        check_eq(m['lmk_store_partitions{table="object_hours"}'], 2 + 1 + len(others),
                 "object_hours' partitions: the current and next period, the horizon's and the two not ours")
        said = [line for line in s.read_log().splitlines() if "older than the rollup window" in line]
        check_eq(sorted(line.split("dropped ", 1)[1].split(" ", 1)[0] for line in said),
                 sorted(n for n, p in ours.items() if p < cut), "what the log says was dropped")
    have = partitions(pg, name, "object_hours")
    for n, p in ours.items():
        check((n in have) == (p >= cut), f"{n} [{p}, {p + PERIOD}) {'dropped' if p >= cut else 'kept'}: {have}")
    for n in others:
        check(n in have, f"{n}, not the store's, was dropped: {have}")
    check_eq(pg.psql(f"SELECT bucket, object_id, samples FROM object_hours WHERE bucket >= {cut} ORDER BY 1, 2",
                     dbname=name), kept_rows, "the rollup rows from the horizon on")
    log(f"object_hours' partitions wholly before the rollup horizon {cut} dropped ({len(said)}), the horizon's "
        "period and the partitions not the store's kept")


def test_two_stores_at_once():
    pg = pg_server()
    db = new_database()
    name = dbname_of(db)
    stores = [Store(db=db), Store(db=db)]
    errors = []

    def start(st):
        try:
            st.start()
        except SystemExit as e:  # fail() in a thread
            errors.append(e)

    threads = [threading.Thread(target=start, args=(st,)) for st in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        if errors:
            fail(f"a store did not start: {errors}")
        made = 0
        for st in stores:
            m = wait_metric(st, 'lmk_store_partitions{table="sample_packs"}', 9)
            check_eq(m["lmk_store_partition_failures_total"], 0, "partition failures")
            made += m["lmk_store_partitions_created_total"]
        check_eq(made, 3 * 9 + 2, "partitions made by the two stores together")
        check_made(pg, name, int(time.time()))
    finally:
        for st in stores:
            st.stop()
    log(f"two stores started at once on one database made the {int(made)} partitions once between them")


def main():
    test_made_moved_dropped()
    test_rollup_partitions_dropped()
    test_two_stores_at_once()
    log("PASS")


if __name__ == "__main__":
    main()
