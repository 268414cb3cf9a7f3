#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmk-store over HTTP: ingest then read back exact counts and shares,
idempotent retries, hostile input (right 4xx, nothing stored), the query
API's parameters and errors, and serving others while a client stalls."""
import gzip
import json
import math
import socket
import threading
import time
import urllib.parse

from lmktest import fail, log
from storetest import (ADMIN_TOKEN, BOUND_TOKEN, NODE_TOKEN, START, Store, check_eq, example,
                       make_batch, rank, raw_rows, row, table_names)


def close(a, b, what, eps=1e-6):
    if a is None or abs(a - b) > eps:
        fail(f"{what}: expected {b}, got {a}")


def wilson(k, n, z=1.959964):
    """The Wilson score interval, written out here independently of the store's."""
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return [round(max(0.0, (centre - half) / (1 + z * z / n)), 6), round(min(1.0, (centre + half) / (1 + z * z / n)), 6)]


def intervals(entries, key):
    return [(e[key], e["share_ci95"], e["share_of_samples"], e["share_reliable"]) for e in entries]


def test_example(store):
    status, _, body = store.ingest(example())
    check_eq(status, 200, f"ingest: {body}")
    check_eq(body["status"], "stored", "first push")
    check_eq(body["rows"], 2, "rows stored")

    j = store.get_ok("/api/v1/jobs/4711")
    check_eq(j["job"], "4711", "job id")
    check_eq((j["user"], j["account"], j["partition"], j["name"], j["cluster"]),
             ("alice", "p123", "batch", "lulesh", "demo"), "metadata")
    check_eq((j["nodes_allocated"], j["tasks"], j["ended"]), (4, 192, False), "allocation")
    check_eq(j["samples"], 2051, "samples")
    close(j["elapsed_seconds"], 58.7, "elapsed")
    close(j["cpu_seconds"], 2051.0, "cpu seconds at 1 Hz")
    check_eq((j["cycles"], j["instructions"], j["ipc"], j["cpu_time_ns"]), (None,) * 4,
             "no counters on this machine")
    check_eq(j["kinds"]["exe"], {"samples": 2051, "share": 1, "share_ci95": [0.998131, 1],
                                 "share_of_samples": 2051, "share_reliable": True,
                                 "cpu_seconds": 2051, "ipc": None}, "exe share")
    check_eq(j["kinds"]["idle"]["samples"], 0, "idle of system work is not the job's")
    check_eq([(o["object"], o["samples"], o["share"]) for o in j["objects"]],
             [("/opt/lulesh/lulesh2.0", 2051, 1)], "objects")
    check_eq(j["objects"][0]["build_id"], "5d1c0f1e9a3b77f0c2d14e8b9a6f0c1d2e3f4a5b", "build id")
    check_eq([(p["phase"], p["samples"]) for p in j["phases"]], [("timestep/solve", 2051)], "phases")
    check_eq(j["notes"], {"app": "lulesh", "size": "128"}, "notes")
    check_eq([(m["phase"], m["comm"], m["state"]) for m in j["markers_off"]],
             [("inner", "lulesh2.0", "off-rate")], "switched-off markers")
    check_eq([(n["node"], n["samples"]) for n in j["nodes"]], [("cn001", 2051)], "nodes")
    check_eq(j["pop"], None, "POP metrics of a job without MPI ranks")


def test_pop(store):
    """POP metrics of a 4-rank job on two nodes at 10 Hz, two phases, rank 0's
    figures from two batches. Per rank (samples, in communication):
      solve: r0 800/100 (500/60 + 300/40), r1 800/300, r2 800/400, r3 800/200
      ""   : r0 200/50, r1 200/150, r2 200/100, r3 200/0
    so useful seconds are 70, 50, 40, 60 (solve) and 15, 5, 10, 20 (""):
      solve: LB 55/70, CE 70/80, PE 55/80
      ""   : LB 12.5/20, CE 20/20
      job  : useful 85, 55, 50, 80 of 100 s each: LB 67.5/85, CE 85/100."""
    hz = 10
    jobs = [{"job": "950", "user": "carol", "nodes": 2, "tasks": 4}]
    a1 = make_batch(node="cn401", seq=1, frequency=hz, jobs=jobs,
                    rows=[row("950", "/apps/mpi-app", "exe", 1400, phase="solve"),
                          row("950", "/usr/lib/x86_64-linux-gnu/libmpi.so.40", "lib", 600)],
                    ranks=[rank("950", 0, 500, 60, "solve", first=START + 1),
                           rank("950", 1, 800, 300, "solve"),
                           rank("950", 0, 200, 50), rank("950", 1, 200, 150)])
    a2 = make_batch(node="cn401", seq=2, start=START + 60, frequency=hz,
                    rows=[row("950", "/apps/mpi-app", "exe", 300, phase="solve")],
                    ranks=[rank("950", 0, 300, 40, "solve", first=START + 61, last=START + 110)])
    b1 = make_batch(node="cn402", seq=1, frequency=hz, jobs=jobs,
                    rows=[row("950", "/apps/mpi-app", "exe", 2000)],
                    ranks=[rank("950", 2, 800, 400, "solve"), rank("950", 3, 800, 200, "solve"),
                           rank("950", 2, 200, 100), rank("950", 3, 200, 0, first=START + 2)])
    for b in (a1, a2, b1, a2):
        status, _, body = store.ingest(b)
        check_eq(status, 200, f"ingest: {body}")
    check_eq(store.sql("SELECT count(*), sum(r.samples), sum(r.comm_samples) FROM job_ranks r "
                       "JOIN jobs j ON j.id = r.job_id WHERE j.job = '950'"), [(8, 4000, 1300)],
             "rank rows stored once, the retried batch not again")

    pop = store.get_ok("/api/v1/jobs/950")["pop"]
    log(f"pop: {json.dumps(pop)}")
    check_eq((pop["ranks"], pop["samples"], pop["comm_samples"], pop["truncated"]), (4, 4000, 1300, False),
             "what the job's metrics rest on")
    check_eq((pop["load_balance"], pop["communication_efficiency"], pop["parallel_efficiency"]),
             (0.7941, 0.85, 0.675), "job LB, CE, PE")
    check_eq((pop["useful_seconds"], pop["communication_seconds"], pop["mean_useful_seconds"],
              pop["max_useful_seconds"], pop["elapsed_seconds"], pop["wall_seconds"]),
             (270, 130, 67.5, 85, 100, 109), "job seconds")
    check_eq([(p["phase"], p["ranks"], p["load_balance"], p["communication_efficiency"],
               p["parallel_efficiency"], p["elapsed_seconds"], p["samples"]) for p in pop["phases"]],
             [("", 4, 0.625, 1, 0.625, 20, 800), ("solve", 4, 0.7857, 0.875, 0.6875, 80, 3200)], "phases")
    check_eq([(r["rank"], r["samples"], r["comm_samples"], r["useful_seconds"], r["communication_seconds"])
              for r in pop["per_rank"]],
             [(0, 1000, 150, 85, 15), (1, 1000, 450, 55, 45), (2, 1000, 500, 50, 50), (3, 1000, 200, 80, 20)],
             "per rank")
    check_eq(pop["per_rank_truncated"], False, "per-rank list complete")

    # a rank that only waited: no useful work anywhere gives no metrics, not a division by zero
    status, _, body = store.ingest(make_batch(node="cn403", seq=1, rows=[row("951", "/lib/libmpi.so.40", "lib", 5)],
                                              ranks=[rank("951", 0, 5, 5)]))
    check_eq(status, 200, f"ingest: {body}")
    pop = store.get_ok("/api/v1/jobs/951")["pop"]
    check_eq((pop["ranks"], pop["load_balance"], pop["communication_efficiency"], pop["parallel_efficiency"]),
             (1, None, None, None), "metrics of a job without useful samples")


def test_shares_and_ipc(store):
    """A job on two nodes with three kinds of objects, two phases and counters."""
    rows = [
        row("900", "/apps/solver", "exe", 300, phase="solve", cycles=3000, instructions=6000),
        row("900", "/usr/lib/libopenblas.so.0", "lib", 150, phase="solve", cycles=1500, instructions=4500),
        row("900", "/usr/lib/libopenblas.so.0", "lib", 50, phase="setup", cycles=500, instructions=500),
        row("900", "[kernel]", "kernel", 100, phase="", cycles=1000, instructions=500),
        row(None, "[idle]", "idle", 400, user="root", comm="swapper"),
    ]
    jobs = [{"job": "900", "user": "bob", "name": "solver", "nodes": 2}]
    for node in ("cn101", "cn102"):
        status, _, body = store.ingest(make_batch(node=node, seq=1, rows=rows, jobs=jobs))
        check_eq(status, 200, f"ingest {node}: {body}")

    j = store.get_ok("/api/v1/jobs/900")
    check_eq(j["samples"], 1200, "samples over both nodes")
    check_eq(j["nodes_seen"], 2, "nodes seen")
    check_eq([(n["node"], n["samples"], n["share"]) for n in j["nodes"]],
             [("cn101", 600, 0.5), ("cn102", 600, 0.5)], "per node")
    check_eq({k: (v["samples"], v["share"]) for k, v in j["kinds"].items() if v["samples"]},
             {"exe": (600, 0.5), "lib": (400, 0.333333), "kernel": (200, 0.166667)}, "kinds")
    check_eq([(o["object"], o["kind"], o["samples"]) for o in j["objects"]],
             [("/apps/solver", "exe", 600), ("/usr/lib/libopenblas.so.0", "lib", 400),
              ("[kernel]", "kernel", 200)], "objects, largest first")
    close(j["objects"][1]["ipc"], 10000 / 4000, "IPC of openblas")
    check_eq((j["cycles"], j["instructions"]), (12000, 23000), "counter sums")
    close(j["ipc"], 23000 / 12000, "job IPC", eps=1e-3)
    check_eq([(p["phase"], p["samples"], p["share"]) for p in j["phases"]],
             [("solve", 900, 0.75), ("", 200, 0.166667), ("setup", 100, 0.083333)], "phases")
    close(j["phases"][0]["ipc"], 21000 / 9000, "solve IPC", eps=1e-3)

    # Every share with its 95% Wilson interval and the samples it rests on
    # (bounds computed separately, in Python, from the same k and n).
    check_eq(intervals(j["nodes"], "node"),
             [("cn101", [0.471756, 0.528244], 1200, True), ("cn102", [0.471756, 0.528244], 1200, True)],
             "intervals per node")
    check_eq({k: (v["share_ci95"], v["share_of_samples"]) for k, v in j["kinds"].items()},
             {"exe": ([0.471756, 0.528244], 1200), "lib": ([0.307231, 0.3605], 1200),
              "kernel": ([0.146651, 0.188809], 1200), "idle": ([0, 0.003191], 1200),
              "anon": ([0, 0.003191], 1200), "unknown": ([0, 0.003191], 1200)}, "intervals per kind")
    check_eq(intervals(j["objects"], "object"),
             [("/apps/solver", [0.471756, 0.528244], 1200, True),
              ("/usr/lib/libopenblas.so.0", [0.307231, 0.3605], 1200, True),
              ("[kernel]", [0.146651, 0.188809], 1200, True)], "intervals per object")
    check_eq(intervals(j["phases"], "phase"),
             [("solve", [0.724729, 0.773676], 1200, True), ("", [0.146651, 0.188809], 1200, True),
              ("setup", [0.068994, 0.100332], 1200, True)], "intervals per phase")

    listing = store.get_ok("/api/v1/jobs?user=bob")
    check_eq([x["job"] for x in listing["jobs"]], ["900"], "jobs of bob")
    check_eq(listing["jobs"][0]["samples"], 1200, "listed samples")

    libs = store.get_ok(f"/api/v1/objects?kind=lib&since={int(START) - 3600}&until={int(START) + 3600}")
    check_eq([(o["object"], o["samples"]) for o in libs["objects"]],
             [("/usr/lib/libopenblas.so.0", 400)], "site-wide libraries")
    total = libs["total_samples"]
    check_eq(total, 4361, "site-wide samples: the example's 2,361 and this job's 2,000")
    check_eq(intervals(libs["objects"], "object"),
             [("/usr/lib/libopenblas.so.0", wilson(400, total), total, True)], "site-wide interval")
    check_eq(wilson(400, total), [0.083511, 0.100652], "the test's own Wilson interval")

    # A job of 12 samples: its shares are there, flagged as resting on too few.
    rows = [row("901", "/apps/tiny", "exe", 7), row("901", "/usr/lib/libm.so.6", "lib", 5)]
    status, _, body = store.ingest(make_batch(node="cn103", seq=1, rows=rows, jobs=[{"job": "901"}]))
    check_eq(status, 200, f"ingest tiny job: {body}")
    j = store.get_ok("/api/v1/jobs/901")
    check_eq(intervals(j["objects"], "object"),
             [("/apps/tiny", [0.319511, 0.80674], 12, False), ("/usr/lib/libm.so.6", [0.19326, 0.680489], 12, False)],
             "a job of too few samples")
    check_eq((j["kinds"]["lib"]["share_reliable"], j["nodes"][0]["share_reliable"]), (False, False),
             "too few samples, per kind and node")

    # A job with no samples at all: shares of 0 that say nothing is known.
    status, _, body = store.ingest(make_batch(node="cn103", seq=2, rows=[row("902", "/apps/none", "exe", 0)],
                                              jobs=[{"job": "902"}]))
    check_eq(status, 200, f"ingest empty job: {body}")
    j = store.get_ok("/api/v1/jobs/902")
    check_eq({k: (v["share"], v["share_ci95"], v["share_of_samples"], v["share_reliable"])
              for k, v in j["kinds"].items() if k in ("exe", "lib")},
             {"exe": (0, [0, 1], 0, False), "lib": (0, [0, 1], 0, False)}, "a job of no samples")


def test_duplicates(store):
    b = make_batch(node="cn200", seq=5, rows=[row("777", "/bin/dup", "exe", 42)], jobs=[{"job": "777"}])
    results = [store.ingest(b) for _ in range(3)]
    check_eq([(s, body["status"], body["duplicate"]) for s, _, body in results],
             [(200, "stored", False), (200, "duplicate", True), (200, "duplicate", True)], "three pushes")
    # gzip of the same batch is the same batch
    status, _, body = store.ingest(b, gzipped=True)
    check_eq((status, body["duplicate"]), (200, True), "gzip retry")

    j = store.get_ok("/api/v1/jobs/777")
    check_eq(j["samples"], 42, "samples after retries")
    node_id = store.sql("SELECT id FROM nodes WHERE name = 'cn200'")[0][0]
    check_eq(store.sql("SELECT count(*), sum(samples) FROM batches WHERE node_id = ?", (node_id,)),
             [(1, 42)], "batches rows in the database")
    job_id = store.sql("SELECT id FROM jobs WHERE job = '777'")[0][0]
    check_eq([(r[2], r[6]) for r in raw_rows(store.db, "p.job_id = ?", (job_id,))], [(node_id, 42)],
             "raw rows in the database: the batch's one row, once")
    check_eq(store.sql("SELECT batches FROM nodes WHERE name = 'cn200'"), [(1,)], "node's batch count")

    # A new boot of the same node restarts seq: a different batch.
    b2 = make_batch(node="cn200", seq=5, boot_id="boot-b", rows=[row("777", "/bin/dup", "exe", 8)])
    status, _, body = store.ingest(b2)
    check_eq((status, body["duplicate"]), (200, False), "same seq, new boot id")
    check_eq(store.get_ok("/api/v1/jobs/777")["samples"], 50, "samples after new boot")


def hostile_cases():
    """(name, body bytes or batch, extra headers, token, status, field)"""
    good = make_batch(node="cn300", seq=1, rows=[row("300", "/bin/x", "exe", 1)], jobs=[{"job": "300"}])

    def mutate(fn):
        b = json.loads(json.dumps(good))
        fn(b)
        return b

    bomb = gzip.compress(b" " * (64 << 20))
    return [
        ("malformed JSON", b'{"format": "lmk-batch", "version": 1,', {}, NODE_TOKEN, 400, None),
        ("not an object", b"[1, 2, 3]", {}, NODE_TOKEN, 400, None),
        ("trailing garbage", json.dumps(good).encode() + b"garbage", {}, NODE_TOKEN, 400, None),
        ("samples as string", mutate(lambda b: b["rows"][0].update(samples="1")), {}, NODE_TOKEN, 400,
         "rows[0].samples"),
        ("samples as float", mutate(lambda b: b["rows"][0].update(samples=1.5)), {}, NODE_TOKEN, 400,
         "rows[0].samples"),
        ("negative samples", mutate(lambda b: b["rows"][0].update(samples=-5)), {}, NODE_TOKEN, 400,
         "rows[0].samples"),
        ("negative seq", mutate(lambda b: b["batch"].update(seq=-1)), {}, NODE_TOKEN, 400, "batch.seq"),
        ("missing seq", mutate(lambda b: b["batch"].pop("seq")), {}, NODE_TOKEN, 400, "batch.seq"),
        ("missing rows", mutate(lambda b: b.pop("rows")), {}, NODE_TOKEN, 400, "rows"),
        ("missing object", mutate(lambda b: b["rows"][0].pop("object")), {}, NODE_TOKEN, 400,
         "rows[0].object"),
        ("unknown kind", mutate(lambda b: b["rows"][0].update(kind="dll")), {}, NODE_TOKEN, 400,
         "rows[0].kind"),
        ("unknown version", mutate(lambda b: b.update(version=4)), {}, NODE_TOKEN, 400, "version"),
        ("version as string", mutate(lambda b: b.update(version="1")), {}, NODE_TOKEN, 400, "version"),
        ("NUL in string", mutate(lambda b: b["rows"][0].update(phase="a\u0000b")), {}, NODE_TOKEN, 400,
         "rows[0].phase"),
        ("oversized comm", mutate(lambda b: b["rows"][0].update(comm="x" * 16)), {}, NODE_TOKEN, 400,
         "rows[0].comm"),
        ("oversized path", mutate(lambda b: b["rows"][0].update(object="/" + "p" * 5000)), {}, NODE_TOKEN,
         400, "rows[0].object"),
        ("bad row after good ones", mutate(lambda b: b["rows"].extend(
            [row("300", "/bin/y", "exe", 1), {"object": 5, "kind": "exe", "samples": 1}])), {}, NODE_TOKEN,
         400, "rows[2].object"),
        ("interval backwards", mutate(lambda b: b["interval"].update(end=START - 1)), {}, NODE_TOKEN, 400,
         "interval.end"),
        ("ranks not an array", mutate(lambda b: b.update(ranks={})), {}, NODE_TOKEN, 400, "ranks"),
        ("rank without job", mutate(lambda b: b.update(ranks=[{**rank("300", 0, 1, 0), "job": None}])), {},
         NODE_TOKEN, 400, "ranks[0].job"),
        ("negative rank", mutate(lambda b: b.update(ranks=[rank("300", -1, 1, 0)])), {}, NODE_TOKEN, 400,
         "ranks[0].rank"),
        ("rank past int", mutate(lambda b: b.update(ranks=[rank("300", 2 ** 31 - 1, 1, 0)])), {}, NODE_TOKEN,
         400, "ranks[0].rank"),
        ("rank as string", mutate(lambda b: b.update(ranks=[rank("300", "0", 1, 0)])), {}, NODE_TOKEN, 400,
         "ranks[0].rank"),
        ("more comm than samples", mutate(lambda b: b.update(ranks=[rank("300", 0, 1, 2)])), {}, NODE_TOKEN,
         400, "ranks[0].comm_samples"),
        ("rank samples past the node's rate", mutate(lambda b: b.update(ranks=[rank("300", 0, 10 ** 6, 0)])),
         {}, NODE_TOKEN, 400, "ranks[0].samples"),
        ("ranks beyond the rows", mutate(lambda b: b.update(ranks=[rank("300", 0, 1, 0), rank("300", 1, 1, 0)])),
         {}, NODE_TOKEN, 400, "ranks"),
        ("rank last before first", mutate(lambda b: b.update(ranks=[rank("300", 0, 1, 0, first=START + 5,
                                                                          last=START + 4)])),
         {}, NODE_TOKEN, 400, "ranks[0].last"),
        ("rank time in ms", mutate(lambda b: b.update(ranks=[rank("300", 0, 1, 0, first=START * 1000)])),
         {}, NODE_TOKEN, 400, "ranks[0].first"),
        ("bad UTF-8 in rank phase", json.dumps(mutate(lambda b: b.update(ranks=[rank("300", 0, 1, 0, phase="@@")])))
         .encode().replace(b"@@", b"\xc0\xaf"), {}, NODE_TOKEN, 400, "ranks[0].phase"),
        ("bad gzip", b"\x1f\x8b\x08\x00garbage", {"Content-Encoding": "gzip"}, NODE_TOKEN, 400, None),
        ("gzip bomb", bomb, {"Content-Encoding": "gzip"}, NODE_TOKEN, 413, None),
        ("oversized body", b" " * (2 << 20), {}, NODE_TOKEN, 413, None),
        ("wrong content type", good, {"Content-Type": "text/plain"}, NODE_TOKEN, 415, None),
        ("unknown encoding", good, {"Content-Encoding": "br"}, NODE_TOKEN, 415, None),
        ("no token", good, {}, None, 401, None),
        ("wrong token", good, {}, "not-a-token-0123456789", 401, None),
        ("admin token", good, {}, ADMIN_TOKEN, 403, None),
        ("token of another node", good, {}, BOUND_TOKEN, 403, "batch.node"),
    ]


def test_hostile(store):
    before = store.counts()
    for name, body, headers, token, want, field in hostile_cases():
        if not isinstance(body, bytes):
            body = json.dumps(body).encode()
        h = {"Content-Type": "application/json"}
        h.update(headers)
        status, hdrs, answer = store.request("POST", "/api/v1/ingest", body=body, token=token, headers=h)
        if status != want:
            fail(f"{name}: expected {want}, got {status}: {answer}")
        if not isinstance(answer, dict) or not answer.get("error"):
            fail(f"{name}: answer has no JSON error: {answer!r}")
        if field is not None and answer.get("field") != field:
            fail(f"{name}: expected the error to name {field}, got {answer}")
        if status == 401 and "bearer" not in hdrs.get("www-authenticate", "").lower():
            fail(f"{name}: 401 without WWW-Authenticate: Bearer")
        log(f"  {name}: {status} {answer['error']}")
    check_eq(store.counts(), before, "rows in the database after hostile pushes")
    check_eq(store.get("/api/v1/jobs/300")[0], 404, "job of rejected batches")

    # A chunked upload over the limit: no Content-Length to refuse early.
    sock = socket.create_connection(("127.0.0.1", store.port), timeout=30)
    sock.sendall((f"POST /api/v1/ingest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {NODE_TOKEN}\r\n"
                  "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n").encode())
    chunk = b" " * 65536
    try:
        for _ in range(40):  # 2.5 MiB
            sock.sendall(b"%x\r\n" % len(chunk) + chunk + b"\r\n")
        sock.sendall(b"0\r\n\r\n")
    except OSError:
        pass  # the store may close the connection once it has answered
    answer = sock.recv(4096).decode(errors="replace")
    sock.close()
    if not answer.startswith("HTTP/1.1 413"):
        fail(f"chunked oversized body: expected 413, got {answer[:200]!r}")
    check_eq(store.counts(), before, "rows after the chunked upload")

    # Node tokens cannot read.
    status, _, _ = store.get("/api/v1/jobs", token=NODE_TOKEN)
    check_eq(status, 403, "query with a node token")
    status, hdrs, _ = store.get("/api/v1/jobs", token=None)
    check_eq(status, 401, "query without a token")


def test_sql_metacharacters(store):
    evil_job = "1'; DROP TABLE jobs; --"
    evil_obj = "/tmp/x'); DELETE FROM sample_packs; --"
    evil_phase = 'outer"/inner\\; SELECT * FROM batches'
    rows = [row(evil_job, evil_obj, "lib", 7, phase=evil_phase, user="o'brien", comm="a'b\"c")]
    jobs = [{"job": evil_job, "user": "o'brien", "name": "Robert'); DROP TABLE jobs;--",
             "notes": {"k'ey": "va\"lue; --"}}]
    status, _, body = store.ingest(make_batch(node="cn'400", seq=1, rows=rows, jobs=jobs))
    check_eq(status, 200, f"ingest with SQL in names: {body}")

    j = store.get_ok("/api/v1/jobs/" + urllib.parse.quote(evil_job, safe=""))
    check_eq(j["job"], evil_job, "job id verbatim")
    check_eq(j["name"], "Robert'); DROP TABLE jobs;--", "job name verbatim")
    check_eq(j["user"], "o'brien", "user verbatim")
    check_eq(j["objects"][0]["object"], evil_obj, "object verbatim")
    check_eq(j["phases"][0]["phase"], evil_phase, "phase verbatim")
    check_eq(j["notes"], {"k'ey": "va\"lue; --"}, "notes verbatim")
    check_eq(j["nodes"][0]["node"], "cn'400", "node verbatim")
    tables = table_names(store.db)
    for t in ("jobs", "sample_packs", "batches", "objects", "job_objects"):
        if t not in tables:
            fail(f"table {t} is gone: {sorted(tables)}")
    if store.sql("SELECT count(*) FROM sample_packs")[0][0] == 0:
        fail("the raw rows were deleted")


def test_query_errors(store):
    cases = [
        ("GET", "/api/v1/nothing", 404, None),
        ("GET", "/api/v1/jobs/does-not-exist", 404, None),
        ("DELETE", "/api/v1/jobs", 405, "GET, HEAD"),
        ("GET", "/api/v1/ingest", 405, "POST"),
        ("POST", "/api/v1/jobs/4711", 405, "GET, HEAD"),
        ("GET", "/api/v1/jobs?limit=0", 400, None),
        ("GET", "/api/v1/jobs?limit=100000", 400, None),
        ("GET", "/api/v1/jobs?offset=-1", 400, None),
        ("GET", "/api/v1/jobs?since=yesterday", 400, None),
        ("GET", "/api/v1/jobs?sort=user", 400, None),
        ("GET", "/api/v1/objects?kind=dll", 400, None),
        ("GET", "/api/v1/objects?until=7q", 400, None),
        ("GET", "/api/v1/jobs/4711/extra", 404, None),
    ]
    for method, path, want, allow in cases:
        status, hdrs, body = store.request(method, path, token=ADMIN_TOKEN)
        if status != want or not isinstance(body, dict) or "error" not in body:
            fail(f"{method} {path}: expected {want} with a JSON error, got {status} {body!r}")
        if allow and hdrs.get("allow") != allow:
            fail(f"{method} {path}: expected Allow: {allow}, got {hdrs.get('allow')}")
    status, hdrs, body = store.request("HEAD", "/api/v1/jobs", token=ADMIN_TOKEN)
    check_eq((status, body), (200, ""), "HEAD without a body")


def test_lists(store):
    listing = store.get_ok("/api/v1/jobs?limit=2")
    check_eq(len(listing["jobs"]), 2, "limit")
    check_eq(listing["more"], True, "more after the limit")
    rest = store.get_ok("/api/v1/jobs?limit=1000&offset=2")
    everything = store.get_ok("/api/v1/jobs?limit=1000")
    check_eq([j["job"] for j in listing["jobs"] + rest["jobs"]], [j["job"] for j in everything["jobs"]],
             "pages add up")
    check_eq(everything["more"], False, "no more")
    # All test batches are from late 2026: seen within the last ten years,
    # none of them before ten years ago.
    check_eq(len(store.get_ok("/api/v1/jobs?since=3650d&limit=1000")["jobs"]), len(everything["jobs"]),
             "since ten years ago")
    check_eq(store.get_ok("/api/v1/jobs?until=520w")["jobs"], [], "until ten years ago")
    check_eq(store.get_ok(f"/api/v1/jobs?since={int(START) + 86400}")["jobs"], [], "since tomorrow")

    nodes = {n["node"]: n for n in store.get_ok("/api/v1/nodes")["nodes"]}
    for name in ("cn001", "cn101", "cn102", "cn200"):
        if name not in nodes:
            fail(f"node {name} missing from /api/v1/nodes: {sorted(nodes)}")
    check_eq((nodes["cn001"]["cpus"], nodes["cn001"]["batches"], nodes["cn001"]["last_seq"]), (48, 1, 17),
             "cn001")
    check_eq(nodes["cn200"]["boot_id"], "boot-b", "latest boot id")

    objs = store.get_ok(f"/api/v1/objects?since={int(START)}&until={int(START) + 60}")
    total = sum(o["samples"] for o in objs["objects"])
    check_eq(total, objs["total_samples"], "objects add up to the total")
    idle = [o for o in objs["objects"] if o["kind"] == "idle"]
    check_eq(sum(o["samples"] for o in idle), 310 + 2 * 400, "idle time site-wide")


def test_concurrent_clients(store):
    """Stalled clients (half-sent headers, half-sent bodies, idle sockets) do
    not keep the store from serving others."""
    stalled = []
    for i in range(20):
        s = socket.create_connection(("127.0.0.1", store.port), timeout=30)
        if i % 3 == 0:
            s.sendall(b"POST /api/v1/ingest HTTP/1.1\r\nHost: x\r\n")  # headers never end
        elif i % 3 == 1:
            s.sendall((f"POST /api/v1/ingest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {NODE_TOKEN}\r\n"
                       "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n{\"format\"").encode())
        stalled.append(s)

    # A trickling client in the background, one byte every 100 ms.
    stop = threading.Event()

    def trickle():
        s = socket.create_connection(("127.0.0.1", store.port), timeout=30)
        req = b"GET /api/v1/jobs HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000
        for c in req:
            if stop.is_set():
                break
            s.send(bytes([c]))
            time.sleep(0.1)
        s.close()

    t = threading.Thread(target=trickle)
    t.start()
    try:
        for seq in range(20):
            t0 = time.monotonic()
            status, _, body = store.ingest(make_batch(node="cn500", seq=seq, rows=[row("500", "/bin/c", "exe", 1)]))
            check_eq(status, 200, f"ingest {seq} while others stall: {body}")
            status, _, _ = store.get("/api/v1/jobs/500")
            check_eq(status, 200, "query while others stall")
            dt = time.monotonic() - t0
            if dt > 2.0:
                fail(f"ingest and query took {dt:.1f}s while other clients stalled")
    finally:
        stop.set()
        t.join()
        for s in stalled:
            s.close()
    check_eq(store.get_ok("/api/v1/jobs/500")["samples"], 20, "all 20 concurrent batches stored")


def test_metrics(store):
    status, hdrs, text = store.request("GET", "/metrics")
    check_eq(status, 200, "metrics")
    if not hdrs["content-type"].startswith("text/plain"):
        fail(f"metrics content type {hdrs['content-type']}")
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            values[k] = float(v)
    stored = store.sql("SELECT count(*) FROM batches")[0][0]
    check_eq(values['lmk_store_batches_total{result="stored"}'], stored, "stored batches metric")
    check_eq(values['lmk_store_batches_total{result="duplicate"}'], 3, "duplicate batches metric")
    # every hostile push and the chunked one
    check_eq(values['lmk_store_batches_total{result="rejected"}'], len(hostile_cases()) + 1,
             "rejected batches metric")
    check_eq(values["lmk_store_rows_stored_total"], store.sql("SELECT sum(n_rows) FROM batches")[0][0],
             "rows metric")
    for code in ("200", "400", "401", "403", "404", "405", "413", "415"):
        if values.get(f'lmk_store_http_requests_total{{code="{code}"}}', 0) < 1:
            fail(f"no requests counted with code {code}")
    if values["lmk_store_db_size_bytes"] <= 0:
        fail("db size metric missing")
    check_eq(values["lmk_store_ingest_duration_seconds_count"], stored + 3, "ingest latency count")

    status, _, body = store.request("GET", "/healthz")
    check_eq((status, body["status"]), (200, "ok"), "healthz")


def test_byte_order(store):
    """Names that tie sort by their bytes, as SQLite sorts them, whatever the
    PostgreSQL server's default collation: "Zeta" before "alpha", "_" after
    both capitals and digits."""
    names = ["/x/alpha", "/x/Zeta", "/x/beta", "/x/_under", "/x/\u00c4pfel", "/x/10", "/x/9", "/x/a b"]
    nodes = ["cnorder-b", "cnorder-Z", "cnorder-a", "cnorder-_"]
    for seq, node in enumerate(nodes):
        b = make_batch(node=node, seq=seq + 1, rows=[row("7101", n, "exe", 5) for n in names])
        check_eq(store.ingest(b)[0], 200, f"ingest from {node}")
    by_bytes = lambda v: sorted(v, key=lambda s: s.encode())
    j = store.get_ok("/api/v1/jobs/7101")
    check_eq([o["object"] for o in j["objects"]], by_bytes(names), "objects with equal samples")
    check_eq([n["node"] for n in j["nodes"]], by_bytes(nodes), "the job's nodes")


def main():
    with Store(extra=["--max-body", "1M"]) as store:
        for t in (test_example, test_shares_and_ipc, test_duplicates, test_hostile, test_sql_metacharacters,
                  test_query_errors, test_lists, test_byte_order, test_concurrent_clients, test_metrics,
                  test_pop):  # after test_metrics: it retries a batch, which that counts
            log(f"== {t.__name__}")
            t(store)
        code = store.stop()
        check_eq(code, 0, "exit code after SIGTERM")


if __name__ == "__main__":
    main()
