#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Two runs compared (issue 32) through the real lmk-store: batches of two
jobs of known sums, then GET /api/v1/compare (JSON and CSV) and `lmk
compare` (text, --json, --csv), every figure worked out here from what
was sent: each side's share (Wilson) and CPU time, the difference and
ratio with their intervals (MOVER, written out here apart from the
store's), the verdict in words; an object and a function only one run
has; a side whose list of functions was cut (7101, 7102); errors (a job missing, unknown, on two clusters).
Who may compare whose jobs is test-visibility's; two real Slurm jobs are
tests/e2e/test-compare.py's.

Job 7001 runs phases "solve" 400 samples, "io" 200 and 200 outside
markers at 10 Hz; job 7002 the same with "io" 400 (twice as long), 50
of its "solve" samples in a library 7001 did not use."""
import csv
import io
import json
import math
import subprocess

from lmktest import build_path, check, log
from storetest import START, Store, check_eq, function, make_batch, row

HZ = 10
APP, BLAS = "/opt/app/bin/app", "/usr/lib/libopenblas.so.0"
IDS = {APP: "aa11", BLAS: "bb22"}
Z = 1.959964


def wilson(k, n):
    if n == 0:
        return 0.0, 0.0, 1.0
    p = k / n
    centre, half = p + Z * Z / (2 * n), Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n))
    low, high = (centre - half) / (1 + Z * Z / n), (centre + half) / (1 + Z * Z / n)
    return p, 0.0 if k == 0 else max(0.0, min(low, p)), 1.0 if k == n else min(1.0, max(high, p))


def cpu_interval(k, n):
    """A side's CPU time and its interval: its share's, in its run's CPU time."""
    p, lo, hi = wilson(k, n)
    total, v = n / HZ, k / HZ
    return v, max(v - (p - lo) * total, 0), v + (hi - p) * total


def difference(a, b):
    d = b[0] - a[0]
    return d, d - math.hypot(b[0] - b[1], a[2] - a[0]), d + math.hypot(b[2] - b[0], a[0] - a[1])


def job(jid, user="alice", cluster="demo"):
    return {"job": jid, "user": user, "account": "p1", "partition": "batch", "cluster": cluster,
            "first_seen": START, "last_seen": START + 80 if jid == "7001" else START + 100, "ended": True}


# the executable's samples per phase; 7002 spends 50 more in "solve" in the library
PHASES = {"7001": {"solve": 400, "io": 200, "": 200}, "7002": {"solve": 350, "io": 400, "": 200}}


def brow(jid, obj, kind, samples, phase=""):
    r = row(jid, obj, kind, samples, phase=phase)
    r["build_id"] = IDS[obj]
    return r


def bfunction(jid, obj, samples, **kw):
    return function(jid, obj, samples, build_id=IDS[obj], **kw)


def batches():
    out = []
    for seq, jid in enumerate(PHASES, 1):
        rows = [brow(jid, APP, "exe", n, phase=p) for p, n in PHASES[jid].items()]
        funcs = [bfunction(jid, APP, 300, name="solve_kernel", phase="solve"),
                 bfunction(jid, APP, PHASES[jid]["io"] - 20, name="write_chunk", phase="io"),
                 bfunction(jid, APP, 20, offset=0x4000, phase="io")]
        if jid == "7002":
            rows.append(brow(jid, BLAS, "lib", 50, phase="solve"))
            funcs.append(bfunction(jid, BLAS, 50, name="dgemm_kernel_HASWELL", phase="solve"))
        out.append(make_batch(node=f"cn{seq}", seq=1, rows=rows, jobs=[job(jid)], frequency=HZ, functions=funcs))
    # 7003 on two clusters: ambiguous without one named
    for n, cluster in enumerate(("c1", "c2")):
        out.append(make_batch(node=f"cx{n}", seq=1, cluster=cluster, rows=[row("7003", APP, "exe", 10)],
                              jobs=[job("7003", cluster=cluster)], frequency=HZ))
    return out


# 7102's list of functions is cut at the summary's 1,000: 1,050 functions
# of 2 samples each, and "tail_fn", which 7101 ran for 40 samples, with 1
WIDE = 1050


def truncated_batches():
    out = []
    for seq, jid in enumerate(("7101", "7102"), 10):
        if jid == "7101":
            funcs = [bfunction(jid, APP, 60, name="kernel_0000"), bfunction(jid, APP, 40, name="tail_fn")]
        else:
            funcs = [bfunction(jid, APP, max(2, 5 - i), name=f"kernel_{i:04d}") for i in range(WIDE)]
            funcs.append(bfunction(jid, APP, 1, name="tail_fn"))
        samples = sum(f["samples"] for f in funcs)
        out.append(make_batch(node=f"cn{seq}", seq=1, rows=[brow(jid, APP, "exe", samples)], jobs=[job(jid)],
                              frequency=HZ, functions=funcs))
    return out


def check_truncated(store):
    """A function one run's list left out is not a function it did not run:
    that side is null, and so is the difference, never a difference from 0."""
    for b in truncated_batches():
        status, _, body = store.ingest(b)
        check_eq(status, 200, f"ingest: {body}")
    cmp = store.get_ok("/api/v1/compare?a=7101&b=7102")
    check_eq((cmp["a"]["functions_truncated"], cmp["b"]["functions_truncated"]), (False, True),
             "functions_truncated of a run of 2 functions and of one of 1,051")
    tail = find(cmp["rows"], "function", "tail_fn", APP)
    check(tail["a"] is not None and tail["a"]["samples"] == 40 and tail["b"] is None and tail["difference"] is None,
          f"a function the truncated run's list left out: {tail}")
    first = find(cmp["rows"], "function", "kernel_0000", APP)
    check(first["a"]["samples"] == 60 and first["b"]["samples"] == 5 and first["difference"] is not None,
          f"a function both lists hold: {first}")
    # the whole list of 7101 is known: what it did not run, it ran 0 times
    only_b = find(cmp["rows"], "function", "kernel_0001", APP)
    check(only_b["a"] is not None and only_b["a"]["samples"] == 0 and only_b["b"]["samples"] == 4 and
          only_b["difference"] is not None, f"a function only the truncated run ran: {only_b}")
    shown = [r for r in cmp["rows"] if r["dimension"] == "function"]
    log(f"truncated side: {len(shown)} function rows; tail_fn {tail['a']['samples']} against null")


def find(rows, dimension, name, obj=None):
    got = [r for r in rows if r["dimension"] == dimension and r["name"] == name and r["object"] == obj]
    check(len(got) == 1, f"{dimension} {name!r} ({obj}): {len(got)} rows in {[(r['dimension'], r['name']) for r in rows]}")
    return got[0]


def close(x, y, what, tol=1e-6):
    check(x is not None and abs(x - y) <= tol * max(1, abs(y)), f"{what}: {x}, worked out here {y}")


def check_row(r, ka, na, kb, nb, what):
    """A row against the two runs' samples of the item (ka of na, kb of nb)."""
    for side, k, n in (("a", ka, na), ("b", kb, nb)):
        s = r[side]
        p, lo, hi = wilson(k, n)
        v, clo, chi = cpu_interval(k, n)
        check_eq(s["samples"], k, f"{what}: {side} samples")
        close(s["share"], p, f"{what}: {side} share")
        close(s["share_ci95"][0], lo, f"{what}: {side} share low", 1e-5)
        close(s["cpu_seconds"], v, f"{what}: {side} cpu_seconds")
        close(s["cpu_seconds_ci95"][0], clo, f"{what}: {side} cpu low", 1e-3)
        close(s["cpu_seconds_ci95"][1], chi, f"{what}: {side} cpu high", 1e-3)
    a, b = cpu_interval(ka, na), cpu_interval(kb, nb)
    d, lo, hi = difference(a, b)
    diff = r["difference"]
    close(diff["cpu_seconds"], d, f"{what}: difference")
    close(diff["cpu_seconds_ci95"][0], lo, f"{what}: difference low", 1e-3)
    close(diff["cpu_seconds_ci95"][1], hi, f"{what}: difference high", 1e-3)
    beyond = lo > 0 or hi < 0
    check_eq(diff["beyond_uncertainty"], beyond, f"{what}: beyond_uncertainty")
    check_eq(diff["verdict"], "not distinguishable" if not beyond else "more in b" if d > 0 else "less in b",
             f"{what}: verdict")
    if ka > 0:
        close(diff["ratio"], b[0] / a[0], f"{what}: ratio", 1e-4)
    else:
        check_eq(diff["ratio"], None, f"{what}: ratio of something new")
    return diff


def lmk(store, *args, expect=0):
    p = subprocess.run([build_path("cli", "lmk"), "--store", store.url(), "--token-file", store.token_file, *args],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == expect, f"lmk {' '.join(args)}: {p.returncode}\n{p.stdout}{p.stderr}")
    return p


def main():
    with Store() as store:
        for b in batches():
            status, _, body = store.ingest(b)
            check_eq(status, 200, f"ingest: {body}")
        cmp = store.get_ok("/api/v1/compare?a=7001&b=7002")
        rows = cmp["rows"]
        log(json.dumps(cmp["difference"]), [(r["dimension"], r["name"]) for r in rows])
        check_eq((cmp["a"]["job"], cmp["b"]["job"]), ("7001", "7002"), "the two runs")
        check_eq((cmp["a"]["samples"], cmp["b"]["samples"]), (800, 1000), "the runs' samples")
        check_eq((cmp["a"]["elapsed_seconds"], cmp["b"]["elapsed_seconds"]), (80, 100), "elapsed")
        check_eq(cmp["difference"]["elapsed_seconds"], 20, "elapsed difference")
        close(cmp["difference"]["elapsed_ratio"], 1.25, "elapsed ratio")
        close(cmp["difference"]["cpu_seconds"], 20, "CPU time difference")
        for k in ("ipc", "pop", "findings", "busy_cores", "cpus_allocated", "functions_truncated"):
            check(k in cmp["a"] and k in cmp["b"], f"{k} missing from a run: {cmp['a'].keys()}")

        io_row = check_row(find(rows, "phase", "io"), 200, 800, 400, 1000, "phase io")
        check(io_row["beyond_uncertainty"] and io_row["ratio_ci95"][0] < 2 < io_row["ratio_ci95"][1],
              f"io twice as long: {io_row}")
        solve = check_row(find(rows, "phase", "solve"), 400, 800, 400, 1000, "phase solve")
        check(not solve["beyond_uncertainty"] and solve["share_beyond_uncertainty"],
              f"solve: the same time, a smaller share of B: {solve}")
        check_row(find(rows, "phase", ""), 200, 800, 200, 1000, "outside markers")
        check_row(find(rows, "object", APP), 800, 800, 950, 1000, "the executable")
        blas = check_row(find(rows, "object", BLAS), 0, 800, 50, 1000, "a library only B used")
        check(blas["beyond_uncertainty"], "a library of 50 samples only B used is a difference")
        check_row(find(rows, "kind", "exe"), 800, 800, 950, 1000, "kind exe")
        check_row(find(rows, "function", "solve_kernel", APP), 300, 800, 300, 1000, "function solve_kernel")
        check_row(find(rows, "function", "write_chunk", APP), 180, 800, 380, 1000, "function write_chunk")
        check_row(find(rows, "function", "app+0x4000", APP), 20, 800, 20, 1000, "an unnamed function")
        check_row(find(rows, "function", "dgemm_kernel_HASWELL", BLAS), 0, 800, 50, 1000, "a function only B ran")
        dims = [r["dimension"] for r in rows]
        check(dims == sorted(dims, key=["kind", "object", "phase", "function"].index), f"rows by dimension: {dims}")
        phases = [r["name"] for r in rows if r["dimension"] == "phase"]
        check_eq(phases, ["io", "solve", ""], "phases, the most CPU time (of either run) first")

        # the other way round: every difference turns its sign
        back = store.get_ok("/api/v1/compare?b=7001&a=7002")
        io_back = find(back["rows"], "phase", "io")["difference"]
        close(io_back["cpu_seconds"], -io_row["cpu_seconds"], "io, B and A swapped")
        check_eq(io_back["verdict"], "less in b", "io, B and A swapped")

        # CSV: a row per item, the JSON's numbers
        status, hdrs, text = store.get("/api/v1/compare?a=7001&b=7002&format=csv")
        check_eq(status, 200, f"CSV: {text[:200]}")
        check("text/csv" in hdrs.get("content-type", ""), f"CSV content type {hdrs}")
        table = list(csv.DictReader(io.StringIO(text)))
        check_eq(len(table), len(rows), "CSV rows")
        io_csv = next(t for t in table if t["dimension"] == "phase" and t["name"] == "io")
        check_eq((io_csv["a_samples"], io_csv["b_samples"], io_csv["difference_verdict"],
                  io_csv["difference_beyond_uncertainty"]),
                 ("200", "400", "more in b", "true"), "the CSV's io row")
        close(float(io_csv["difference_ratio"]), io_row["ratio"], "the CSV's io ratio")
        close(float(io_csv["difference_cpu_seconds_ci95_low"]), io_row["cpu_seconds_ci95"][0], "the CSV's interval")
        fn = next(t for t in table if t["dimension"] == "function" and t["name"] == "write_chunk")
        check_eq(fn["object"], APP, "the CSV names a function's object")

        # the command: text, --json as the API, --csv as the API's
        out = lmk(store, "compare", "7001", "7002").stdout
        log(out)
        for want in ("Job 7001", "vs job 7002", "Phases", "Functions", "io", "more in b", "not distinguishable",
                     "dgemm_kernel_HASWELL"):
            check(want in out, f"lmk compare does not say {want!r}:\n{out}")
        check_eq(json.loads(lmk(store, "--json", "compare", "7001", "7002").stdout), cmp, "lmk --json compare")
        check_eq(list(csv.DictReader(io.StringIO(lmk(store, "--csv", "compare", "7001", "7002").stdout))), table,
                 "lmk --csv compare")
        p = lmk(store, "compare", "7001", expect=1)
        check("two job ids" in p.stderr, f"lmk compare with one job: {p.stderr}")

        # errors, each naming the side it is about
        for path, status_want, field in (
                ("/api/v1/compare?a=7001", 400, "b"),
                ("/api/v1/compare?a=7001&b=7002&c=1", 400, None),
                ("/api/v1/compare?a=7001&b=9999", 404, "b"),
                ("/api/v1/compare?a=9999&b=7001", 404, "a"),
                ("/api/v1/compare?a=7001&b=7003", 409, "b"),
                ("/api/v1/compare?a=7001&b=7003&cluster_a=demo&cluster_b=c3", 404, "b")):
            status, _, body = store.get(path)
            check(status == status_want and (field is None or body.get("field") == field),
                  f"{path}: {status} {body}, not {status_want} about {field}")
        # an ambiguous id is answered as the job routes answer it (one
        # helper), naming the parameters that settle it
        for path, field, hint in (("/api/v1/compare?a=7001&b=7003", "b", "?cluster= or ?cluster_b="),
                                  ("/api/v1/jobs/7003", "cluster", "?cluster="),
                                  ("/api/v1/jobs/7003/functions", "cluster", "?cluster=")):
            status, _, body = store.get(path)
            check_eq((status, body.get("field"), body.get("error")),
                     (409, field, f"job 7003 exists on several clusters, name one with {hint}"), path)
        both = store.get_ok("/api/v1/compare?a=7003&b=7003&cluster_a=c1&cluster_b=c2")
        check_eq((both["a"]["cluster"], both["b"]["cluster"]), ("c1", "c2"), "a job on two clusters, each named")
        check(all(not r["difference"]["beyond_uncertainty"] for r in both["rows"]), "the same samples: no difference")
        check_truncated(store)
    log("PASS")


if __name__ == "__main__":
    main()
