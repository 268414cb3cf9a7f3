#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The site's function sums are folded from the batches' pending rows
(schema/0027, store/db/sql/site-sums-fold.c) without losing or doubling
any: batches of 4 jobs on 10 nodes each, 8 rounds (320 batches, past the
writer's fold after 256), two of the jobs on the next day; then
GET /api/v1/functions must equal the sum, worked out here, of the jobs' own
answers (GET /api/v1/jobs/{id}/functions), which must equal what was sent.

Then what a store killed with SIGKILL right after storing batches left
pending is folded when it starts again (before any question), counted once,
and so is what it left copied to PostgreSQL (lmk-store migrate);
a store that goes quiet folds within seconds by itself; a clean stop folds
what is left; a damaged row is set aside and said; a store at schema 26
migrates with its sums. With
LMK_TEST_BACKEND=postgresql (the -pg test) all of it on PostgreSQL, and
two stores on one database fold each other's batches, once."""
import concurrent.futures
import re
import signal
import subprocess
import time
import urllib.parse
from collections import defaultdict

from lmktest import check, fail, log
from storetest import (START, Store, check_eq, function, is_postgresql, make_batch, row, sql_read, sql_write,
                       store_binary)

HZ = 10
DAY = 86400
SOLVER, MD = "/apps/chem/solver", "/apps/md/mdrun"
BLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"
BUILD = {SOLVER: "a1", MD: "b2", BLAS: "c3"}
# job: user, account, its executable, its start
JOBS = {
    "8101": ("lmkalice", "chem", SOLVER, START),
    "8102": ("lmkbob", "phys", SOLVER, START),
    "8103": ("lmkalice", "chem", MD, START + DAY),
    "8104": ("lmkcarol", "chem", MD, START + DAY),
}
NODES = 10
SINCE = int(START) - DAY


def frow(job, obj, kind, samples, cycles=None):
    r = row(job, obj, kind, samples, user=JOBS[job][0], comm="app", cycles=cycles, instructions=cycles)
    r["build_id"] = BUILD.get(obj)
    return r


def batch(job, node, seq):
    """A batch of job on its node-th node, round seq: its executable's two
    functions, dgemm, kernel time without functions."""
    user, account, exe, start = JOBS[job]
    t = start + 60 * seq
    meta = {"job": job, "user": user, "account": account, "partition": "batch", "cluster": "demo",
            "first_seen": start, "last_seen": t + 60}
    hot, dgemm = 80 + node, 50 + seq
    return make_batch(node=f"cn{job}-{node:02d}", seq=seq, start=t, frequency=HZ, jobs=[meta],
                      rows=[frow(job, exe, "exe", hot + 20), frow(job, BLAS, "lib", dgemm, cycles=1000 * dgemm),
                            frow(job, "[kernel]", "kernel", 10)],
                      functions=[function(job, exe, hot, name="compute", build_id=BUILD[exe]),
                                 function(job, exe, 20, name="helper", build_id=BUILD[exe]),
                                 function(job, BLAS, dgemm, name="dgemm_kernel_HASWELL", build_id=BUILD[BLAS],
                                          cycles=1000 * dgemm, instructions=1000 * dgemm)])


def push(s, batches):
    for b in batches:
        st, _, body = s.ingest(b)
        check_eq(st, 200, f"ingest: {body}")


def pending(s):
    return s.sql("SELECT count(*) FROM function_sums_pending WHERE id > 0")[0][0]


def independent(s, sent):
    """The site's ranking worked out from the jobs' own answers, checked
    against what was sent: (object, function) → (samples, jobs, users), and
    all the jobs' samples."""
    want, total = defaultdict(lambda: [0, set(), set()]), 0
    for job, (user, _, _, _) in JOBS.items():
        j = s.get_ok(f"/api/v1/jobs/{job}")
        total += j["samples"]
        for f in s.get_ok(f"/api/v1/jobs/{job}/functions?limit=100000")["functions"]:
            w = want[(f["object"], f["function"])]
            w[0] += f["samples"]
            w[1].add(job)
            w[2].add(user)
    got_sent = defaultdict(int)
    for b in sent:
        for f in b["functions"]:
            got_sent[(f["object"], f["function"])] += f["samples"]
    check_eq(dict(got_sent), {k: v[0] for k, v in want.items()}, "the jobs' answers: what was sent")
    check_eq(total, sum(r["samples"] for b in sent for r in b["rows"]), "the jobs' samples: what was sent")
    return {k: (v[0], len(v[1]), len(v[2])) for k, v in want.items()}, total


def check_ranking(s, sent, what):
    want, total = independent(s, sent)
    o = s.get_ok(f"/api/v1/functions?since={SINCE}&limit=1000")
    got = {(e["object"], e["function"]): (e["samples"], e["jobs"], e["users"]) for e in o["functions"]}
    check_eq(got, want, f"{what}: the site's ranking, the sum of the jobs'")
    check_eq(o["total_samples"], total, f"{what}: the jobs' samples")
    check_eq(pending(s), 0, f"{what}: nothing pending after the ranking")
    # the rollups themselves: every function sample once a day, once a week
    fsum = sum(v[0] for v in want.values())
    check_eq([s.sql(f"SELECT sum(samples) FROM function_{t}")[0][0] for t in ("days", "weeks", "key_days")],
             [fsum, fsum, fsum], f"{what}: function_days, _weeks, _key_days")
    check_eq(s.sql("SELECT count(DISTINCT day) FROM function_days")[0][0], 2, f"{what}: two days")
    check_eq(s.sql("SELECT sum(samples) FROM function_total_days")[0][0], total, f"{what}: function_total_days")


def wait_folded(s, timeout, what):
    end = time.monotonic() + timeout
    while pending(s) > 0:
        if time.monotonic() > end:
            fail(f"{what}: {pending(s)} batches still pending after {timeout} s:\n{s.read_log()}")
        time.sleep(0.1)


def main():
    sent = [batch(job, node, seq) for seq in range(1, 9) for job in JOBS for node in range(NODES)]
    s = Store()
    s.start()
    push(s, sent)
    log(f"{len(sent)} batches stored, {pending(s)} of them pending")
    check(pending(s) < len(sent), "the writer folded after a few hundred batches")
    check_ranking(s, sent, "many nodes of the same jobs")

    # Killed right after storing: the batches' sums wait in their rows.
    more = [batch(job, node, seq) for seq in (9, 10) for job in ("8101", "8103") for node in range(NODES)]
    push(s, more)
    s.stop(signal.SIGKILL)
    left = pending(s)
    log(f"{left} batches pending after SIGKILL")
    if left == 0:
        fail("the store folded before it was killed (its pushes took 2 s or more): nothing left to test")
    sent += more
    if not is_postgresql(s.db):
        copied_to_postgresql(s.db, sent, left)
    s.start()
    check_eq(pending(s), 0, "after the restart, before any question: folded at start")
    check(re.search(rf"Added {left} batches' sums to the site's function rankings", s.read_log()),
          f"the start says what it folded:\n{s.read_log()}")
    check_ranking(s, sent, "after SIGKILL and a restart")

    # Quiet: the store folds by itself within seconds.
    quiet = [batch("8102", node, 11) for node in range(3)]
    push(s, quiet)
    sent += quiet
    check(pending(s) > 0, "pending right after the pushes")
    wait_folded(s, 10, "a quiet store")

    # A clean stop folds what is left.
    last = [batch("8104", node, 12) for node in range(3)]
    push(s, last)
    sent += last
    check_eq(s.stop(), 0, "exit code")
    check_eq(pending(s), 0, "after a clean stop")
    # A row that does not decode (a damaged database): said, set aside
    # with its id negated, the others folded.
    sql_write(s.db, [("INSERT INTO function_sums_pending (body) VALUES (?)", (b"\x01garbage",))])
    s.start()
    check_ranking(s, sent, "after a clean stop and a start, with a damaged row")
    check(re.search(r"function_sums_pending row \d+\) do not decode", s.read_log()),
          f"the damaged row is named in the log:\n{s.read_log()}")
    check_eq(s.sql("SELECT count(*) FROM function_sums_pending WHERE id < 0")[0][0], 1, "the damaged row, kept aside")
    check_eq(s.stop(), 0, "exit code")

    # The store as schema 26 left it: migrated to 27, its sums kept.
    sql_write(s.db, [("DROP TABLE function_sums_pending", ()),
                     ("DELETE FROM schema_version WHERE version = 27", ())])
    s.start()
    check("from schema version 26 to 27" in s.read_log(), f"migrated from 26:\n{s.read_log()}")
    check_ranking(s, sent, "after migrating from schema 26")
    push(s, [batch("8101", 0, 13)])
    sent.append(batch("8101", 0, 13))
    check_eq(s.stop(), 0, "exit code")
    if is_postgresql(s.db):
        two_stores(s.db, sent)
    log("PASS")


def copied_to_postgresql(db, sent, left):
    """The killed store's SQLite database, its batches' sums still pending,
    copied to PostgreSQL (lmk-store migrate): the rows travel, and a store
    started there folds them."""
    import pgserver
    try:
        pg = pgserver.Server().start()
    except pgserver.Unavailable as e:
        log(f"not copied to PostgreSQL, which cannot run here: {e}")
        return
    pg.psql("CREATE DATABASE lmk_copy TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'", dbname="postgres")
    uri = f"postgresql://{pgserver.USER}@{urllib.parse.quote(pg.host, safe='')}:{pg.port}/lmk_copy"
    p = subprocess.run([store_binary(), "migrate", "--from", f"sqlite:{db}", "--to", uri], capture_output=True,
                       text=True, timeout=120)
    check_eq(p.returncode, 0, f"lmk-store migrate:\n{p.stderr}")
    check_eq(sql_read(uri, "SELECT count(*) FROM function_sums_pending")[0][0], left, "the pending rows copied")
    t = Store(db=uri)
    t.start()
    check_eq(pending(t), 0, "copied to PostgreSQL: folded at start")
    check_ranking(t, sent, "copied to PostgreSQL with batches pending")
    check_eq(t.stop(), 0, "exit code")


def ranking(s):
    o = s.get_ok(f"/api/v1/functions?since={SINCE}&limit=1000")
    return {(e["object"], e["function"]): (e["samples"], e["jobs"], e["users"]) for e in o["functions"]}


def two_stores(db, sent):
    """Two stores on one PostgreSQL database: batches pushed through both
    at once, then both asked at once (their folds take turns under the
    site lock, neither folds a row the other did); then one is killed
    with rows pending, which the other's next answer folds."""
    a, b = Store(db=db), Store(db=db)
    a.start()
    b.start()
    both = [batch(job, node, seq) for seq in (14, 15) for job in JOBS for node in range(NODES)]
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda half: push(*half), ((a, both[0::2]), (b, both[1::2]))))
    sent += both
    want, _ = independent(b, sent)
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        got = list(pool.map(ranking, (a, b)))
    check_eq(got, [want, want], "two stores asked at once: each the sum of the jobs'")
    last = [batch("8102", node, 16) for node in range(NODES)]
    push(a, last)
    sent += last
    a.stop(signal.SIGKILL)
    check(pending(b) > 0, "rows the killed store left")
    check_ranking(b, sent, "another store's rows, left by SIGKILL")
    check_eq(b.stop(), 0, "exit code")


if __name__ == "__main__":
    main()
