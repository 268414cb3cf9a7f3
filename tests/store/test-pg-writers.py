#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Several writers of one store on one PostgreSQL database (lmk-store
--writers, issue 14).

Twelve nodes push at once to a store with four writers. Every batch touches
jobs that run on several nodes (two of them named only by rows, claimed by
no batch) and objects that every node has, each in an order of its own
(shuffled per node and batch); it has markers outside jobs
and in them; now and then it brings an object no batch had before, some of
them brought by all nodes at about the same time. Writers that changed
those rows in their batches' orders would deadlock; lmk-store's writers
lock nodes and jobs first, in the order of their keys, and the site's
shared rows last (statements.h), so that:

- every batch is answered 200 and stored once, and no group of batches is
  run again for a conflict (the store logs each such retry);
- the sums per job (API and SQL), per object site-wide (GET
  /api/v1/objects), per marker and the batches' count and samples add up
  to what was pushed;
- the store holds one connection per writer and per reader thread.

Skips (77) where PostgreSQL cannot start."""
import concurrent.futures
import os
import random

from lmktest import check, fail, log

os.environ["LMK_TEST_BACKEND"] = "postgresql"  # whatever the caller said: this one is about PostgreSQL
from storetest import START, Store, check_eq, make_batch, new_database, row, sql_read  # noqa: E402

NODES = 12
BATCHES = 20
WRITERS = 4
THREADS = 8
JOBS = [f"77{j:02d}" for j in range(6)]
UNCLAIMED = ["7798", "7799"]  # jobs that rows name on every node, and no batch claims
LIBS = [("/usr/bin/solver", "exe")] + [(f"/usr/lib/x86_64-linux-gnu/lib{n}.so", "lib")
                                       for n in ("c", "m", "mpi", "openblas", "gomp", "fftw3", "hdf5")]
PHASES = ["", "init", "solve", "io"]


def node_name(i):
    return f"cnw{i:02d}"


def batch(i, seq):
    """Node i's batch seq: its three jobs (each also on other nodes) and the
    shared objects, in an order of this batch's own."""
    rnd = random.Random(i * 1000 + seq)
    jobs = [JOBS[(i + k) % len(JOBS)] for k in range(3)]
    rnd.shuffle(jobs)
    objects = list(LIBS)
    if seq % 5 == 0:
        objects.append((f"/opt/shared/release-{seq}/libnew.so", "lib"))  # every node, at about once
    if seq % 7 == i % 7:
        objects.append((f"/opt/{node_name(i)}/lib{seq}.so", "lib"))  # this node's alone
    rows = []
    for job in jobs + UNCLAIMED + [None]:
        objs = list(objects)
        rnd.shuffle(objs)
        for k, (path, kind) in enumerate(objs):
            rows.append(row(job, path, kind, samples=1 + (i + seq + k) % 9, phase=PHASES[(k + seq) % len(PHASES)],
                            user=f"u{job}" if job else "root", comm="solver" if job else "kworker"))
    rnd.shuffle(rows)
    markers = [{"job": None, "comm": "kworker", "phase": "idle", "state": "off-rate"},
               {"job": jobs[0], "comm": "solver", "phase": "solve", "state": "off-rate"}]
    rnd.shuffle(markers)
    claims = [{"job": j, "user": f"u{j}", "account": "proj", "partition": "batch", "name": "solver", "nodes": 4,
               "notes": {"app": "solver"}} for j in jobs]
    return make_batch(node=node_name(i), seq=seq, boot_id="boot-w", start=START + 60 * seq, rows=rows,
                      jobs=claims, markers=markers)


def push_node(store, i):
    answers = []
    for seq in range(1, BATCHES + 1):
        status, _, body = store.ingest(batch(i, seq))
        answers.append((seq, status, body.get("duplicate") if isinstance(body, dict) else body))
    return answers


def main():
    db = new_database()
    batches = [batch(i, seq) for i in range(NODES) for seq in range(1, BATCHES + 1)]
    store = Store(db=db, extra=["--writers", str(WRITERS), "--threads", str(THREADS)])
    store.start()
    try:
        conns = sql_read(db, "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                             "AND pid <> pg_backend_pid()")[0][0]
        check_eq(conns, WRITERS + THREADS, "the store's connections: one per writer and one per reader thread")

        with concurrent.futures.ThreadPoolExecutor(NODES) as ex:
            answers = list(ex.map(lambda i: push_node(store, i), range(NODES)))
        bad = [(node_name(i), a) for i, got in enumerate(answers) for a in got if a[1:] != (200, False)]
        if bad:
            fail(f"{len(bad)} pushes not answered 200 stored, e.g. {bad[:5]}\n{store.read_log()[-3000:]}")
        retried = [line for line in store.read_log().splitlines() if "conflicted with another writer" in line]
        check(not retried, f"groups run again for a conflict between writers ({len(retried)}): {retried[:3]}")

        total = sum(r["samples"] for b in batches for r in b["rows"])
        check_eq(sql_read(db, "SELECT count(*), sum(samples) FROM batches")[0], (len(batches), total),
                 "count and samples of the batches (psql): each stored once")
        for job in JOBS + UNCLAIMED:
            want = sum(r["samples"] for b in batches for r in b["rows"] if r["job"] == job)
            check_eq(store.get_ok(f"/api/v1/jobs/{job}")["samples"], want, f"job {job}'s samples (API)")
            check_eq(sql_read(db, "SELECT sum(o.samples) FROM job_objects o JOIN jobs j ON j.id = o.job_id "
                                  "WHERE j.job = ?", (job,))[0][0], want, f"job {job}'s samples per object (psql)")
        want_objects = {}
        for b in batches:
            for r in b["rows"]:
                want_objects[r["object"]] = want_objects.get(r["object"], 0) + r["samples"]
        body = store.get_ok(f"/api/v1/objects?since={int(START)}&until={int(START) + 86400}")
        check_eq(body["total_samples"], total, "site-wide samples of all objects (API)")
        check_eq(sorted((o["object"], o["samples"]) for o in body["objects"]), sorted(want_objects.items()),
                 "site-wide samples per object (API)")
        check_eq(sql_read(db, "SELECT count(*) FROM objects")[0][0], len(want_objects),
                 "objects stored, each once (psql)")
        outside = sql_read(db, "SELECT batches FROM job_markers WHERE job_id = 0 AND comm = 'kworker'")
        check_eq(outside, [(len(batches),)], "the marker outside jobs, counted once per batch (psql)")
        log(f"{len(batches)} batches of {NODES} nodes through {WRITERS} writers at once: each stored once, "
            f"{total} samples, {len(want_objects)} objects, no group run again")
    finally:
        check_eq(store.stop(), 0, "exit code of the store")


if __name__ == "__main__":
    main()
