#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Site-wide time per object (GET /api/v1/objects) over short and long
ranges: below a week the store adds up whole hours, from a week on whole
days (UTC), and says which and from when; both give the sums of the
batches in the range they name, objects of one path added over their build
ids, the kind asked for, the largest first, shares of every kind's samples.
A store of schema 6 gets its days from the hours it holds."""
import glob
import os
import sqlite3
import time

from lmktest import SOURCE_ROOT, fail, log
from storetest import Store, check_eq, make_batch, workdir

DAY = 86400
# midnight UTC eleven days ago: the batches fill ten days from there
D0 = (int(time.time()) // DAY - 11) * DAY


def obj_row(obj, kind, samples, build_id=None, job=None):
    return {"job": job, "step": "0" if job else None, "user": "alice", "comm": "app", "object": obj,
            "kind": kind, "build_id": build_id, "phase": "", "samples": samples,
            "cpu_time_ns": None, "cycles": None, "instructions": None}


def batches():
    """(start, rows): every day at 01:00, 13:00 and 23:00, changing amounts."""
    out = []
    for d in range(10):
        for h in (1, 13, 23):
            n = 10 * d + h
            out.append((D0 + d * DAY + h * 3600,
                        [obj_row("/usr/bin/solver", "exe", 100 + n, job="7"),
                         obj_row("/usr/lib/libm.so.6", "lib", 50 + n, build_id="aa" * 20),
                         obj_row("/usr/lib/libm.so.6", "lib", 5 + d, build_id="bb" * 20),
                         obj_row("/usr/lib/libz.so.1", "lib", 3 * n),
                         obj_row("[kernel]", "kernel", 7),
                         obj_row("[idle]", "idle", 400 - n)]))
    return out


def expected(since, until, grain, kind=None):
    """The sums of the batches whose grain (hour or day) starts in [since', until)."""
    g = 3600 if grain == "hour" else DAY
    since = since - since % g
    sums, total = {}, 0
    for start, rows in batches():
        if not (since <= start - start % g < until):
            continue
        for r in rows:
            total += r["samples"]
            if kind and r["kind"] != kind:
                continue
            sums[r["object"]] = sums.get(r["object"], 0) + r["samples"]
    objs = sorted(sums.items(), key=lambda x: (-x[1], x[0]))
    return since, total, objs


def check(store, since, until, grain, kind=None, limit=None):
    q = f"/api/v1/objects?since={since}&until={until}" + (f"&kind={kind}" if kind else "") + \
        (f"&limit={limit}" if limit else "")
    body = store.get_ok(q)
    want_since, total, objs = expected(since, until, grain, kind)
    check_eq((body["grain"], body["since"], body["until"]), (grain, want_since, until), f"{q}: range")
    check_eq(body["total_samples"], total, f"{q}: total")
    check_eq([(o["object"], o["samples"]) for o in body["objects"]], objs[:limit] if limit else objs, q)
    for o in body["objects"]:
        check_eq(o["cpu_seconds"], o["samples"], f"{q}: {o['object']}'s CPU seconds at 1 Hz")
        if abs(o["share"] - o["samples"] / total) > 5e-7:
            fail(f"{q}: {o['object']}'s share {o['share']}, expected {o['samples'] / total}")
    return body


def test_ranges(store):
    # a week or more: whole days, since rounded down to midnight
    check(store, D0, D0 + 10 * DAY, "day")
    check(store, D0 + 2 * DAY + 7200, D0 + 9 * DAY + 7800, "day")
    check(store, D0 + DAY, D0 + 8 * DAY, "day", kind="lib")
    check(store, D0 + 12 * 3600, D0 + 7 * DAY + 12 * 3600, "day", limit=2)
    # shorter: whole hours
    check(store, D0 + 2 * DAY + 7200, D0 + 7 * DAY, "hour")
    check(store, D0 + 3 * DAY + 1800, D0 + 3 * DAY + 13 * 3600 + 1, "hour", kind="exe")
    check(store, D0 + 4 * DAY, D0 + 5 * DAY, "hour", limit=1)
    # the two grains agree on a range both read whole
    day = store.get_ok(f"/api/v1/objects?since={D0}&until={D0 + 7 * DAY}")
    hours = [store.get_ok(f"/api/v1/objects?since={D0 + k * DAY}&until={D0 + (k + 1) * DAY}") for k in range(7)]
    check_eq(day["total_samples"], sum(h["total_samples"] for h in hours), "a week of days and its days of hours")


def test_many_objects():
    """More objects than one naming query holds (store/db/sql/objects.c names
    them 256 to a query): each still under its own path."""
    n = 600
    rows = [obj_row(f"/opt/lib{i:03d}.so", "lib", 1000 + i) for i in range(n)]
    with Store() as store:
        check_eq(store.ingest(make_batch(node="cn002", seq=0, start=D0 + 3600, rows=rows))[0], 200,
                 "ingest of 600 objects")
        body = store.get_ok(f"/api/v1/objects?since={D0}&until={D0 + DAY}&kind=lib&limit=1000")
        check_eq([(o["object"], o["samples"]) for o in body["objects"]],
                 [(f"/opt/lib{i:03d}.so", 1000 + i) for i in reversed(range(n))], "600 objects, named")


def test_migration():
    """A store of schema 6 gets object_days from its object_hours."""
    d = workdir()
    db = os.path.join(d, "old.db")
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "applied_at INTEGER NOT NULL)")
    for path in sorted(glob.glob(os.path.join(SOURCE_ROOT, "schema", "sqlite", "000[1-6]-*.sql"))):
        name = os.path.basename(path)[:-4]
        with open(path) as f:
            con.executescript(f.read())
        con.execute("INSERT INTO schema_version VALUES (?, ?, 0)", (int(name[:4]), name))
    con.executescript(f"""
        INSERT INTO objects VALUES (1, '/usr/bin/solver', 'exe', ''), (2, '[idle]', 'idle', '');
        INSERT INTO object_hours VALUES ({D0 + 3600}, 1, 10, 10), ({D0 + 7200}, 1, 20, 20),
            ({D0 + DAY}, 1, 40, 40), ({D0 + 3600}, 2, 5, 5), ({D0 + 2 * DAY}, 2, 9223372036854775807, 1),
            ({D0 + 2 * DAY + 3600}, 2, 9223372036854775807, 1);
    """)
    con.commit()
    con.close()
    with Store(directory=d, db=db) as store:
        check_eq(store.sql("SELECT day, object_id, samples, cpu_seconds FROM object_days ORDER BY 1, 2"),
                 [(D0, 1, 30, 30.0), (D0, 2, 5, 5.0), (D0 + DAY, 1, 40, 40.0),
                  (D0 + 2 * DAY, 2, 9223372036854775807, 2.0)], "object_days after the migration")
        body = store.get_ok(f"/api/v1/objects?since={D0}&until={D0 + 8 * DAY}&kind=exe")
        check_eq((body["grain"], [(o["object"], o["samples"]) for o in body["objects"]]),
                 ("day", [("/usr/bin/solver", 70)]), "objects from the migrated days")


def main():
    with Store() as store:
        for seq, (start, rows) in enumerate(batches()):
            b = make_batch(node="cn001", seq=seq, start=start, rows=rows,
                           jobs=[{"job": "7", "user": "alice"}])
            check_eq(store.ingest(b)[0], 200, f"ingest batch {seq}")
        log("== test_ranges")
        test_ranges(store)
    log("== test_many_objects")
    test_many_objects()
    log("== test_migration")
    test_migration()
    log("PASS")


if __name__ == "__main__":
    main()
