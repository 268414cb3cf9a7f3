#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Scaling across runs (GET /api/v1/scaling, docs/scaling.md) on batches of
exactly known figures: the fitted forms, the table per core count, the
prediction and its interval, a run off the curve, the groups, and bad
input. No lmkd: the batches are written here, at 100 Hz so that every
time below is a whole number of samples.

  app "heat", size 64, 5 runs at p = 1, 2, 4, 8, 16: the busiest rank (0)
  computes 100/p + 2 s and communicates 0.5 + 0.3 log2 p s; the other
  ranks compute 90% of that. Expected: a = 100, b = 2, communication
  c4 + c3 log2 p with c4 = 0.5, c3 = 0.3, elapsed at p = 32 = 7.125 s.
  app "heat", size 128: p = 1, 2, 4, 8 with 64/p s and 0.2 s, and a second
  run at p = 4 that took twice its computation: off the curve.
"""
import json
import math
import os
import subprocess

from browser import Browser, browser_available
from lmktest import build_path, log
from storetest import ADMIN_TOKEN, START, Store, check_eq, make_batch, rank, row
import lmktest

HZ = 100


def job_batch(seq, job, p, comp, comm, size, app="heat", partition="batch", ended=True):
    """One job of p ranks on one node: rank 0 the busiest."""
    ranks = []
    total = 0
    for k in range(p):
        useful = round(comp * HZ * (1 if k == 0 else 0.9))
        c = round(comm * HZ)
        ranks.append(rank(job, k, useful + c, c, first=START + 1, last=START + 50))
        total += useful + c
    jobs = [{"job": job, "user": "alice", "account": "p1", "partition": partition, "nodes": 1, "tasks": p,
             "notes": {"app": app, "size": size}, "ended": ended}]
    return make_batch(node="cn%03d" % (seq % 7), seq=seq, frequency=HZ, jobs=jobs,
                      rows=[row(job, "/opt/heat/bin/heat", "exe", total)], ranks=ranks)


def near(got, want, eps, what):
    lmktest.check(got is not None and abs(got - want) <= eps, f"{what}: expected {want} ± {eps}, got {got}")


def main():
    with Store() as store:
        seq = 1
        for p in (1, 2, 4, 8, 16):
            b = job_batch(seq, f"64{p:02d}", p, 100 / p + 2, 0.5 + 0.3 * math.log2(p), "64")
            check_eq(store.ingest(b)[0], 200, f"ingest p={p}")
            seq += 1
        for job, p, comp in (("1281", 1, 64), ("1282", 2, 32), ("1284", 4, 16), ("1288", 8, 8), ("1289", 4, 32)):
            check_eq(store.ingest(job_batch(seq, job, p, comp, 0.2, "128"))[0], 200, f"ingest {job}")
            seq += 1
        # neither an MPI job lmk saw ranks of, nor one still running, is a run
        b = make_batch(node="cn009", seq=1, frequency=HZ, rows=[row("700", "/opt/heat/bin/heat", "exe", 500)],
                       jobs=[{"job": "700", "tasks": 4, "notes": {"app": "heat", "size": "64"}, "ended": True}])
        check_eq(store.ingest(b)[0], 200, "ingest a job without ranks")
        check_eq(store.ingest(job_batch(seq, "701", 4, 1, 1, "64", ended=False))[0], 200, "ingest a running job")

        o = store.get_ok("/api/v1/scaling?app=heat&predict=32")
        log(f"scaling: {o}")
        check_eq((o["app"], o["runs"], o["runs_without_ranks"], o["truncated"]), ("heat", 10, 1, False),
                 "runs considered")
        check_eq([(g["size"], g["run_count"]) for g in o["groups"]], [("128", 5), ("64", 5)],
                 "groups, the one with most runs first (ties by key)")
        g = o["groups"][1]
        check_eq((g["executable"], g["cluster"], g["node_type"], g["node_type_source"]),
                 ("/opt/heat/bin/heat", "demo", "batch/64cpu", "partition/cpus_per_node"),
                 "the group's key: nodes that told no type, the stand-in")
        cc = g["core_counts"]
        check_eq([c["p"] for c in cc], [1, 2, 4, 8, 16], "core counts")
        for c in cc:
            p = c["p"]
            near(c["computation_seconds"], 100 / p + 2, 0.006, f"computation at p={p}")
            near(c["communication_seconds"], 0.5 + 0.3 * math.log2(p), 0.006, f"communication at p={p}")
            near(c["elapsed_seconds"], 100 / p + 2.5 + 0.3 * math.log2(p), 0.006, f"elapsed at p={p}")
            near(c["mean_useful_seconds"], (100 / p + 2) * (1 + 0.9 * (p - 1)) / p, 0.01, f"mean useful at p={p}")
            e1 = 102.5
            near(c["speedup"], e1 / c["elapsed_seconds"], 0.002, f"speedup at p={p}")
            near(c["efficiency"], e1 / c["elapsed_seconds"] / p, 0.002, f"efficiency at p={p}")
            check_eq(c["runs"], 1, f"runs at p={p}")
        fit = g["fit"]
        near(fit["computation"]["a"], 100, 1e-3, "a")
        near(fit["computation"]["b"], 2, 1e-3, "b")
        check_eq(fit["communication"]["form"], "c4 + c3*log2(p)", "communication form")
        near(fit["communication"]["c4"], 0.5, 1e-3, "c4")
        near(fit["communication"]["c3"], 0.3, 1e-3, "c3")
        near(fit["leave_one_out_error"], 0, 1e-3, "leave-one-out error")
        check_eq([x["p"] for x in fit["leave_one_out"]], [1, 2, 4, 8, 16], "left out core counts")
        pr = g["prediction"]
        check_eq(pr["p"], 32, "predicted core count")
        near(pr["elapsed_seconds"], 100 / 32 + 2 + 0.5 + 1.5, 0.002, "predicted elapsed")
        near(pr["computation_seconds"], 100 / 32 + 2, 0.002, "predicted computation")
        lmktest.check(pr["low_seconds"] <= pr["elapsed_seconds"] <= pr["high_seconds"] and
                      pr["high_seconds"] - pr["low_seconds"] < 0.05, f"interval on exact runs: {pr}")
        check_eq([r["off_curve"] for r in g["runs"]], [False] * 5, "no run off the exact curve")
        check_eq([r["samples"] for r in g["runs"]][0], 10250, "samples of the run at p=1")

        g = o["groups"][0]
        check_eq([(r["job"], r["off_curve"]) for r in g["runs"]],
                 [("1281", False), ("1282", False), ("1284", False), ("1289", True), ("1288", False)],
                 "the run that took twice its computation is off the curve")
        check_eq([(c["p"], c["runs"]) for c in g["core_counts"]], [(1, 1), (2, 1), (4, 2), (8, 1)],
                 "two runs at p=4")

        # filters: size, a range before the runs, another application
        o = store.get_ok("/api/v1/scaling?app=heat&size=128")
        check_eq([g["size"] for g in o["groups"]], ["128"], "size=128")
        check_eq(o["groups"][0]["prediction"], None, "no prediction unless asked")
        o = store.get_ok(f"/api/v1/scaling?app=heat&until={int(START) - 86400}")
        check_eq((o["runs"], o["groups"]), (0, []), "nothing before the runs")
        o = store.get_ok("/api/v1/scaling?app=nosuchapp")
        check_eq((o["runs"], o["groups"]), (0, []), "an application without runs")

        # bad input: 400 with a message naming the parameter
        for q, field, words in (("", "app", "app is missing"), ("?size=64", "app", "app is missing"),
                                ("?app=heat&predict=0", "predict", "from 1"),
                                ("?app=heat&predict=x", "predict", "integer"),
                                ("?app=heat&predict=99999999999", "predict", "integer"),
                                ("?app=heat&since=yesterday", "since", "since"),
                                ("?app=heat&limit=3", None, "limit")):
            status, _, body = store.get("/api/v1/scaling" + q)
            check_eq(status, 400, f"GET /api/v1/scaling{q}: {body}")
            lmktest.check(words in body["error"] and (field is None or body.get("field") == field),
                          f"GET /api/v1/scaling{q}: error {body}")
        status, _, _ = store.get("/api/v1/scaling?app=heat", token=None)
        check_eq(status, 401, "without a token")

        # the command line and the page show the JSON's numbers
        o = store.get_ok("/api/v1/scaling?app=heat&size=64&predict=32")
        cli = subprocess.run([build_path("cli", "lmk"), "--store", store.url(), "--token-file", store.token_file,
                              "scaling", "heat", "--size", "64", "--predict", "32"], capture_output=True, text=True)
        log("lmk scaling:\n" + cli.stdout + cli.stderr)
        check_eq(cli.returncode, 0, f"lmk scaling: {cli.stderr}")
        check_numbers_shown(o, cli.stdout, "lmk scaling")
        cli = subprocess.run([build_path("cli", "lmk"), "--store", store.url(), "--token-file", store.token_file,
                              "scaling", "heat", "--size", "64", "--predict", "32", "--json"],
                             capture_output=True, text=True)
        got = json.loads(cli.stdout)
        # the default range ends now: the two requests may fall in different seconds
        if abs(got.get("since", 0) - o["since"]) > 60:
            lmktest.fail(f"lmk scaling --json: since {got.get('since')}, the API's {o['since']}")
        check_eq({**got, "since": o["since"]}, o, "lmk scaling --json is the API's answer")
        cli = subprocess.run([build_path("cli", "lmk"), "--store", store.url(), "--token-file", store.token_file,
                              "scaling"], capture_output=True, text=True)
        lmktest.check(cli.returncode != 0 and "APP" in cli.stderr, f"lmk scaling without APP: {cli.stderr}")

        status, _, page = store.request("GET", "/site/scaling?app=heat&size=64&predict=32",
                                        token=ADMIN_TOKEN)
        check_eq(status, 200, "GET /site/scaling")
        page = page.decode() if isinstance(page, bytes) else str(page)
        lmktest.check("<script" not in page and "<svg" in page, "the page: an SVG chart and no script")
        check_numbers_shown(o, page, "/site/scaling")
        status, _, page = store.request("GET", "/site/scaling",
                                        token=ADMIN_TOKEN)
        check_eq(status, 400, "GET /site/scaling without app")
        in_browser(store, o)
        node_types(store)
    log("PASS")


TYPE_A = {"cpu_model": "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", "sockets": 2, "cores": 40, "threads": 80,
          "memory_bytes": 201226612736, "gpus": [], "gpus_other": 0, "kernel": "6.1.0-18-amd64"}
TYPE_B = dict(TYPE_A, cpu_model="AMD EPYC 7763 64-Core Processor", cores=128, threads=256)
NAME_A = "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz, 2 x 20 cores, 80 threads, 192 GiB"
NAME_B = "AMD EPYC 7763 64-Core Processor, 2 x 64 cores, 256 threads, 192 GiB"


def wave_batch(node, ntype, job, p, comp, ranks=None):
    """Ranks of a run of "wave" (all p, or those listed) on a node of a
    type (None: its lmkd tells none); rank 0 the busiest."""
    b = job_batch(1, job, p, comp, 0.2, "8", app="wave")
    b["batch"]["node"] = b["node"]["hostname"] = node
    if ranks is not None:
        b["ranks"] = [r for r in b["ranks"] if r["rank"] in ranks]
        b["rows"][0]["samples"] = sum(r["samples"] for r in b["ranks"])
    if ntype:
        b["node"]["type"] = ntype
    return b


def node_types(store):
    """Runs on different node types are never one group: "wave" runs 60/p s
    on type A and 30/p s on type B; each group fits its own, a run on both
    types is left out, and a run whose nodes told no type stays apart."""
    batches = [wave_batch(f"cnwa{p}", TYPE_A, f"91{p}", p, 60 / p + 1) for p in (1, 2, 4)]
    batches += [wave_batch(f"cnwb{p}", TYPE_B, f"92{p}", p, 30 / p + 1) for p in (1, 2, 4)]
    batches += [wave_batch("cnwa9", TYPE_A, "930", 4, 15, ranks=(0, 1)),
                wave_batch("cnwb9", TYPE_B, "930", 4, 15, ranks=(2, 3)),
                wave_batch("cnwx", None, "940", 8, 60 / 8 + 1)]
    for b in batches:
        check_eq(store.ingest(b)[0], 200, f"ingest {b['batch']['node']}")
    o = store.get_ok("/api/v1/scaling?app=wave")
    check_eq((o["runs"], o["runs_mixed_node_types"], o["runs_without_ranks"]), (7, 1, 0),
             "runs, and the one on two node types left out")
    check_eq([(g["node_type"], g["node_type_source"], [r["job"] for r in g["runs"]]) for g in o["groups"]],
             [(NAME_B, "node_type", ["921", "922", "924"]), (NAME_A, "node_type", ["911", "912", "914"]),
              ("batch/64cpu", "partition/cpus_per_node", ["940"])],
             "a group per node type, the stand-in apart")
    for g, a in zip(o["groups"], (30, 60)):
        near(g["fit"]["computation"]["a"], a, 1e-3, f"a of the runs on {g['node_type']}")
        near(g["fit"]["computation"]["b"], 1, 1e-3, f"b of the runs on {g['node_type']}")
    cli = subprocess.run([build_path("cli", "lmk"), "--store", store.url(), "--token-file", store.token_file,
                          "scaling", "wave"], capture_output=True, text=True)
    log("lmk scaling wave:\n" + cli.stdout + cli.stderr)
    lmktest.check(cli.returncode == 0 and f"node type {NAME_A}, 3 runs" in cli.stdout and
                  "(1 more on nodes of several types left out)" in cli.stdout and
                  "batch/64cpu (partition/CPUs per node: its nodes told no type)" in cli.stdout,
                  "lmk scaling names the node types")


def in_browser(store, o):
    """The page in a real headless Chromium: no console error, no CSP
    violation, the table's cells the JSON's numbers; a screenshot to
    BUILD/web-screenshots/scaling.png. Skipped (said in the log) without
    Chromium: the rest of the test stands without it."""
    ok, why = browser_available()
    if not ok:
        log(f"no browser check of /site/scaling: {why}")
        return
    shots = build_path("web-screenshots")
    os.makedirs(shots, exist_ok=True)
    status, _, body = store.request("POST", "/api/v1/sessions",
                                    body={"next": "site/scaling?app=heat&size=64&predict=32"}, token=ADMIN_TOKEN)
    check_eq(status, 200, f"POST /api/v1/sessions: {body}")
    with Browser(screenshot_dir=shots) as b:
        page = b.open(store.url("/") + body["login"])
        page.assert_clean()
        rows = page.evaluate("""Array.from(document.querySelectorAll('table.scaling tbody tr')).map(
            tr => Array.from(tr.querySelectorAll('td')).map(td => td.innerText.trim()))""")
        want = [[str(c["p"]), str(c["runs"])] + ["%.3f" % c[k] for k in
                ("elapsed_seconds", "computation_seconds", "communication_seconds", "speedup", "efficiency",
                 "wall_seconds")] + [str(c["samples"])] for c in o["groups"][0]["core_counts"]]
        check_eq(rows, want, "the page's table in Chromium")
        lmktest.check(page.query("svg.scaling polyline") and page.query("svg.scaling circle"),
                      "the chart has its curves and runs")
        page.screenshot("scaling")


def check_numbers_shown(o, text, what):
    """Every figure of the table, the fit and the prediction, as the JSON
    has it (three decimals), appears in text."""
    g = o["groups"][0]
    want = []
    for c in g["core_counts"]:
        want += ["%.3f" % c[k] for k in ("elapsed_seconds", "computation_seconds", "communication_seconds",
                                         "speedup", "efficiency")]
    pr = g["prediction"]
    want += ["%.3f" % pr[k] for k in ("elapsed_seconds", "low_seconds", "high_seconds")]
    want += ["%.3f" % g["fit"]["computation"][k] for k in ("a", "b")]
    missing = [w for w in want if w not in text]
    lmktest.check(not missing, f"{what} does not show {missing}")


if __name__ == "__main__":
    main()
