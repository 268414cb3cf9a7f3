#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmk-store keeps only what it can store faithfully (issue 9): sums that
would overflow, ill-formed UTF-8 in any string, numbers no node produces and
control characters in paths and parameters are refused with a 400 naming
the field, leaving the stored totals as they were; job metadata keeps its
first claim and counts later, different claims."""
import json
import urllib.parse

from lmktest import check, fail, log
from storetest import ADMIN_TOKEN, START, Store, check_eq, make_batch, row, sql_total

MAX53 = 1 << 53

# The Unicode Standard's table 3-7 forbids each of these; json-c's own check
# lets the first four through.
ILL_FORMED = {
    "overlong": b"\xc0\xaf",
    "overlong 3": b"\xe0\x80\xaf",
    "surrogate": b"\xed\xa0\x80",
    "above U+10FFFF": b"\xf4\x90\x80\x80",
    "F5 lead": b"\xf5\x80\x80\x80",
    "FF": b"\xff",
    "lone continuation": b"\x80",
    "truncated": b"\xe2\x82",
}

# One path to each kind of string a batch holds, with a base value.
STRING_FIELDS = [
    (("batch", "node"), "batch.node"),
    (("batch", "boot_id"), "batch.boot_id"),
    (("node", "hostname"), "node.hostname"),
    (("node", "cluster"), "node.cluster"),
    (("sampling", "event"), "sampling.event"),
    (("jobs", 0, "job"), "jobs[0].job"),
    (("jobs", 0, "user"), "jobs[0].user"),
    (("jobs", 0, "account"), "jobs[0].account"),
    (("jobs", 0, "partition"), "jobs[0].partition"),
    (("jobs", 0, "name"), "jobs[0].name"),
    (("jobs", 0, "notes", "app"), "jobs[0].notes"),
    (("rows", 0, "job"), "rows[0].job"),
    (("rows", 0, "step"), "rows[0].step"),
    (("rows", 0, "user"), "rows[0].user"),
    (("rows", 0, "comm"), "rows[0].comm"),
    (("rows", 0, "object"), "rows[0].object"),
    (("rows", 0, "phase"), "rows[0].phase"),
    (("markers", 0, "comm"), "markers[0].comm"),
    (("markers", 0, "phase"), "markers[0].phase"),
    (("markers", 0, "state"), "markers[0].state"),
]

MARK = "\u2603MARK\u2603"  # replaced by raw bytes after json.dumps


def base(node="cnu", seq=1):
    return make_batch(node=node, seq=seq, rows=[row("77", "/bin/u", "exe", 5, phase="p")],
                      jobs=[{"job": "77", "user": "u", "account": "a", "partition": "p", "name": "n",
                             "notes": {"app": "x"}}],
                      markers=[{"job": "77", "comm": "u", "phase": "p", "state": "off-rate"}])


def set_path(b, path, value):
    o = b
    for k in path[:-1]:
        o = o[k]
    o[path[-1]] = value


def post_raw(store, body):
    return store.request("POST", "/api/v1/ingest", body=body, token="node-token-6f1c2a9e0b7d4e35",
                         headers={"Content-Type": "application/json"})


def expect_400(store, body, field, what):
    status, _, answer = post_raw(store, body) if isinstance(body, bytes) else store.ingest(body)
    if status != 400 or not isinstance(answer, dict) or answer.get("field") != field:
        fail(f"{what}: expected 400 naming {field}, got {status} {answer}")
    return answer


def totals(store):
    """Every sum the store keeps, table by table (total(): the sums of
    sums may pass int64, each stored one may not)."""
    def t(column):
        return sql_total(store.db, column)

    q = {
        "nodes": f"SELECT {t('samples')}, {t('samples_lost')}, {t('batches')} FROM nodes",
        "jobs": f"SELECT {t('samples')}, {t('cpu_seconds')}, {t('cpu_time_ns')}, {t('cycles')}, {t('instructions')} FROM jobs",
        "samples": f"SELECT {t('samples')}, {t('cpu_seconds')}, {t('cycles')} FROM samples",
        "job_objects": f"SELECT {t('samples')}, {t('cycles')} FROM job_objects",
        "job_phases": f"SELECT {t('samples')}, {t('cycles')} FROM job_phases",
        "job_nodes": f"SELECT {t('samples')} FROM job_nodes",
        "object_hours": f"SELECT {t('samples')}, {t('cpu_seconds')} FROM object_hours",
        "object_days": f"SELECT {t('samples')}, {t('cpu_seconds')} FROM object_days",
        "batches": f"SELECT count(*), {t('samples')} FROM batches",
    }
    out = {k: store.sql(v) for k, v in q.items()}
    out["counts"] = store.counts()
    return out


def test_utf8(store):
    before = totals(store)
    n = 0
    for path, field in STRING_FIELDS:
        for name, bad in ILL_FORMED.items():
            b = base()
            set_path(b, path, MARK)
            body = json.dumps(b, ensure_ascii=False).encode().replace(MARK.encode(), b"a" + bad)
            answer = expect_400(store, body, field, f"{field} with {name}")
            if "UTF-8" not in answer["error"] or "byte 1" not in answer["error"]:
                fail(f"{field} with {name}: error does not say UTF-8 at byte 1: {answer}")
            n += 1
    # identifiers refuse control characters (free text keeps them, below)
    for path, field in STRING_FIELDS:
        if field.endswith(("name", "comm", "object", "phase")) or field == "jobs[0].notes":
            continue
        for ctl in ("\t", "\n", "\x1b", "\x7f"):
            b = base()
            set_path(b, path, "a" + ctl)
            answer = expect_400(store, b, field, f"control character in identifier {field}")
            if "control" not in answer["error"] or "byte 1" not in answer["error"]:
                fail(f"{field}: error does not name the control character at byte 1: {answer}")
    check_eq(totals(store), before, "stored sums after ill-formed strings")
    log(f"  {n} ill-formed strings refused")

    # well-formed text of every length class is stored and served verbatim
    b = base(seq=2)
    text = "\u00e9\u0800\ud7ff\ue000\U00010000\U0010ffff\tend"
    b["jobs"][0]["name"] = text
    b["rows"][0]["phase"] = text
    check_eq(store.ingest(b)[0], 200, "well-formed UTF-8")
    j = store.get_ok("/api/v1/jobs/77")
    check_eq((j["name"], j["phases"][0]["phase"]), (text, text), "served back verbatim")

    # Text that is not I-JSON is refused whole, not stored as something
    # else: an escaped lone surrogate (json-c made it U+FFFD), a name given
    # twice (json-c kept the last), NaN, a raw control character, an
    # integer beyond int64 (json-c saturated it).
    before = totals(store)
    for i, (old, new, what) in enumerate([
            (b'"name": "n"', b'"name": "a\\ud800b"', "escaped lone surrogate"),
            (b'"name": "n"', b'"name": "n", "name": "m"', "a name given twice"),
            (b'"partition": "p"', b'"partition": "p", "first_seen": NaN', "NaN"),
            (b'"name": "n"', b'"name": "a\tb"', "a raw tab in a string"),
            (b'"samples": 5', b'"samples": 9223372036854775808', "an integer beyond int64")]):
        b = base(node="cnesc", seq=1 + i)
        b["jobs"][0]["job"] = b["rows"][0]["job"] = b["markers"][0]["job"] = "78"
        body = json.dumps(b).encode()
        check(old in body, f"{what}: the batch lacks {old!r}")
        status, _, answer = post_raw(store, body.replace(old, new, 1))
        check(status == 400 and isinstance(answer, dict) and not answer.get("field"),
              f"{what}: expected 400 (not JSON, no field), got {status} {answer}")
    check_eq(store.request("GET", "/api/v1/jobs/78", token=ADMIN_TOKEN)[0], 404, "nothing of the refused batches")
    check_eq(totals(store), before, "sums after the refused batches")


def test_sums(store):
    before = totals(store)
    big = make_batch(node="cnbig", seq=1, rows=[])
    big["node"]["cpus"] = 1 << 20
    big["interval"]["end"] = START + 3600
    # one row over the per-row limit of each kind: 2 x CPUs x rate x seconds
    b = make_batch(node="cnbig", seq=1, rows=[row("88", "/bin/x", "exe", 2 * 4 * 1 + 1)])
    b["node"]["cpus"] = 4
    b["interval"]["end"] = START + 1
    expect_400(store, b, "rows[0].samples", "samples over 2 x CPUs x Hz x seconds")
    for counter, per_cpu_s in (("cpu_time_ns", 10 ** 9), ("cycles", 10 ** 10), ("instructions", 10 ** 11)):
        b = make_batch(node="cnbig", seq=1, rows=[row("87", "/bin/x", "exe", 1)])
        b["rows"][0][counter] = 2 * 64 * 60 * per_cpu_s + 1
        expect_400(store, b, f"rows[0].{counter}", f"{counter} over its per-row limit")
        b["rows"][0][counter] = 2 * 64 * 60 * per_cpu_s
        b["batch"]["seq"] = 100 + len(counter)
        b["batch"]["node"] = "cnlimit"
        check_eq(store.ingest(b)[0], 200, f"{counter} at its per-row limit")
    before = totals(store)

    # the batch's own sums: 1,100 rows of 2^53 wrap an int64
    for counter in ("samples", "cpu_time_ns", "cycles", "instructions"):
        b = json.loads(json.dumps(big))
        b["interval"]["end"] = START + 86400
        b["sampling"]["frequency_hz"] = 100000
        b["rows"] = [row("88", f"/bin/o{i}", "exe", 1) for i in range(1100)]
        for r in b["rows"]:
            r[counter] = MAX53
        expect_400(store, b, f"rows[1023].{counter}", f"batch sum of {counter}")
    check_eq(totals(store), before, "stored sums after batches whose own sums overflow")

    # the stored sums: two batches of 600 rows of 2^53 cycles each fit alone,
    # not together; the second is refused whole
    b1 = json.loads(json.dumps(big))
    b1["rows"] = [row("88", "/bin/same", "exe", 1, cycles=MAX53) for _ in range(600)]
    status, _, answer = store.ingest(b1)
    check_eq(status, 200, f"first 600 x 2^53 cycles: {answer}")
    stored = totals(store)
    for node, seq, job, what in (("cnbig", 2, "88", "same job, node, object"),
                                 ("cnbig2", 1, "89", "other node, other job, same object and hour")):
        b2 = json.loads(json.dumps(b1))
        b2["batch"].update(node=node, seq=seq)
        b2["node"]["hostname"] = node
        for r in b2["rows"]:
            r["job"] = job
        status, _, answer = store.ingest(b2)
        if job == "88":
            if status != 400 or "overflow" not in answer.get("error", "") or not answer.get("field", "").startswith("rows"):
                fail(f"{what}: expected 400 for an overflowing stored sum, got {status} {answer}")
            check_eq(totals(store), stored, f"stored sums after the refused batch ({what})")
        else:
            # cycles are not summed site-wide per object, only per job: fine
            check_eq(status, 200, f"{what}: {answer}")
    j = store.get_ok("/api/v1/jobs/88")
    check_eq(j["cycles"], 600 * MAX53, "job 88 cycles kept exactly")


def test_numbers(store):
    before = totals(store)
    for hz in (1e-300, 0.0009, 100001, 1e308):
        b = make_batch(node="cnhz", seq=1, rows=[row("90", "/bin/hz", "exe", 1)], frequency=hz)
        expect_400(store, b, "sampling.frequency_hz", f"frequency {hz}")
    b = make_batch(node="cnhz", seq=1, rows=[row("90", "/bin/hz", "exe", 1)])
    b["interval"]["end"] = START + 3 * 86400
    expect_400(store, b, "interval.end", "interval of three days")
    b = make_batch(node="cnhz", seq=1, rows=[row("90", "/bin/hz", "exe", 1)])
    b["sampling"]["samples_lost"] = 1 << 40
    expect_400(store, b, "sampling.samples_lost", "more samples lost than a node takes")
    check_eq(totals(store), before, "stored sums after numbers no node produces")
    for hz in (0.001, 100000):
        b = make_batch(node="cnhz", seq=int(hz * 1000), rows=[row("90", "/bin/hz", "exe", 1)], frequency=hz)
        check_eq(store.ingest(b)[0], 200, f"frequency {hz} at the bound")
    objs = store.get_ok(f"/api/v1/objects?since={int(START)}&until={int(START) + 60}")
    if not isinstance(objs["total_cpu_seconds"], (int, float)):
        fail(f"total_cpu_seconds is not a number: {objs['total_cpu_seconds']}")


def metric(store, name):
    _, _, text = store.request("GET", "/metrics")
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    fail(f"metric {name} missing")


def test_conflicts(store):
    meta = {"job": "4711", "user": "alice", "account": "p123", "partition": "batch", "name": "lulesh",
            "nodes": 2, "tasks": 96, "notes": {"app": "lulesh"}}
    rows = [row("4711", "/bin/lulesh", "exe", 10, user="alice")]
    # both nodes of the job send the same claim, and resend it: no conflict
    for node in ("cnA", "cnB"):
        for seq in (1, 2):
            check_eq(store.ingest(make_batch(node=node, seq=seq, rows=rows, jobs=[meta]))[0], 200, "claim")
    # a node with less to say (null fields) is no conflict either
    check_eq(store.ingest(make_batch(node="cnB", seq=3, rows=rows, jobs=[{"job": "4711"}]))[0], 200, "")
    # the same node sending ended: true twice is the job's end, not a conflict
    ended = dict(meta, ended=True)
    for seq in (4, 5):
        check_eq(store.ingest(make_batch(node="cnA", seq=seq, rows=rows, jobs=[ended]))[0], 200, "ended")
    j = store.get_ok("/api/v1/jobs/4711")
    check_eq((j["metadata_conflicts"], j["ended"]), (0, True), "no conflicts among the job's own nodes")
    before_metric = metric(store, "lmk_store_job_metadata_conflicts_total")

    # another node claims the job for someone else: samples added, claim refused
    evil = {"job": "4711", "user": "mallory", "account": "evil", "name": "x", "notes": {"app": "y"},
            "ended": True}
    status, _, body = store.ingest(make_batch(node="cnX", seq=1, rows=[row("4711", "/bin/x", "exe", 1)],
                                              jobs=[evil]))
    check_eq(status, 200, f"conflicting claim still stores its samples: {body}")
    j = store.get_ok("/api/v1/jobs/4711")
    check_eq((j["user"], j["account"], j["partition"], j["name"], j["nodes_allocated"], j["tasks"]),
             ("alice", "p123", "batch", "lulesh", 2, 96), "first claim kept")
    check_eq(j["notes"], {"app": "lulesh"}, "first notes kept")
    check_eq(j["metadata_conflicts"], 1, "conflict counted in the job")
    check_eq(j["samples"], 7 * 10 + 1, "samples of every batch")
    check_eq([x["job"] for x in store.get_ok("/api/v1/jobs?user=alice&limit=1000")["jobs"]].count("4711"), 1,
             "still in its user's list")
    check_eq(store.get_ok("/api/v1/jobs?user=mallory")["jobs"], [], "not in the claimer's list")
    check_eq(metric(store, "lmk_store_job_metadata_conflicts_total") - before_metric, 1, "conflict metric")
    listing = store.get_ok("/api/v1/jobs?user=alice")["jobs"]
    check_eq([x["metadata_conflicts"] for x in listing if x["job"] == "4711"], [1], "conflicts in the listing")
    if "kept the first claim" not in store.read_log():
        fail("conflict not logged")


def test_paths_and_params(store):
    before = totals(store)
    store.ingest(make_batch(node="cnp", seq=1, rows=[row("4800", "/bin/p", "exe", 1)]))
    check_eq(store.get("/api/v1/jobs/4800")[0], 200, "plain job id")
    paths = ["/api/v1/jobs/4800%00", "/api/v1/jobs/4800%00x", "/api/v1/jobs/%004800", "/api/v1/jobs/4800%0A",
             "/api/v1/jobs/4800%1F", "/api/v1/jobs/4800%7F", "/api/v1/jobs/4800%C0%AF",
             "/api/v1/jobs/4800%ED%A0%80", "/api/v1/jobs/4800%F4%90%80%80", "/api/v1/jobs/4800%FF",
             "/api/v1/jobs?user=alice%00", "/api/v1/jobs?user=%00", "/api/v1/jobs?cluster=demo%0D%0A",
             "/api/v1/jobs?since=1%00", "/api/v1/jobs?user=%C0%AF", "/api/v1/jobs?us%00er=alice",
             "/api/v1/objects?kind=lib%00", "/api/v1/jobs/4800?cluster=demo%00", "/api/v1/nodes?%01",
             "/metrics?x=%00", "/healthz?%ED%BF%BF=1"]
    for p in paths:
        status, _, body = store.request("GET", p, token=ADMIN_TOKEN)
        if status != 400 or not isinstance(body, dict) or not body.get("error"):
            fail(f"GET {p}: expected 400 with a JSON error, got {status} {body!r}")
    check_eq(store.get("/api/v1/jobs/" + urllib.parse.quote("4800"))[0], 200, "quoted id")


def test_unnamed_cluster(store):
    """A node without a cluster name pushes a job's first batch before it
    read the job's SLURM_CLUSTER_NAME: the unnamed and the named claim are
    one job, in either order; with two named candidates an unnamed claim
    stays apart."""
    def claim(node, seq, job, cluster, samples):
        b = make_batch(node=node, seq=seq, cluster=None, rows=[row(job, "/bin/u", "exe", samples)],
                       jobs=[{"job": job, "cluster": cluster}])
        check_eq(store.ingest(b)[0], 200, f"job {job} on {cluster}")

    claim("cnu1", 1, "4900", None, 3)           # unnamed first
    claim("cnu1", 2, "4900", "alpha", 4)        # then named: adopts the unnamed copy
    j = store.get_ok("/api/v1/jobs/4900")
    check_eq((j["cluster"], j["samples"]), ("alpha", 7), "unnamed, then named: one job")
    claim("cnu1", 3, "4901", "alpha", 5)        # named first
    claim("cnu1", 4, "4901", None, 6)           # then unnamed: joins it
    j = store.get_ok("/api/v1/jobs/4901")
    check_eq((j["cluster"], j["samples"]), ("alpha", 11), "named, then unnamed: one job")
    claim("cnu2", 1, "4902", "alpha", 1)
    claim("cnu3", 1, "4902", "beta", 1)
    claim("cnu2", 2, "4902", None, 1)           # which of the two: unknown, kept apart
    check_eq(store.get("/api/v1/jobs/4902")[0], 409, "an id on several clusters still needs ?cluster=")
    check_eq(store.get_ok("/api/v1/jobs/4902?cluster=alpha")["samples"], 1, "alpha's 4902 untouched")


def main():
    with Store() as store:
        for t in (test_utf8, test_sums, test_numbers, test_conflicts, test_paths_and_params, test_unnamed_cluster):
            log(f"== {t.__name__}")
            t(store)
        check_eq(store.stop(), 0, "exit code after SIGTERM")


if __name__ == "__main__":
    main()
