#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""contrib/grafana/lmk.json against what lmk and lmkd really serve: every
metric a Prometheus query of the dashboard names is in a real lmk-store's
/metrics (lmk_store_*), or, with --lmkd, in a real lmkd's --metrics-listen
endpoint (lmkd_*; needs root and BPF); every query of the store's API
(Infinity data source) answers 200 with CSV whose header has the columns
the panel reads. A metric renamed in the code, or a column, fails here
rather than on a site's empty panel."""
import csv
import io
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

from lmktest import SOURCE_ROOT, build_path, check, fail, log, require_bpf, tmpdir, wait_ready
from storetest import ADMIN_TOKEN, NODE_TOKEN, Store, check_eq, example, make_batch, row

DASHBOARD = os.path.join(SOURCE_ROOT, "contrib", "grafana", "lmk.json")
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool",
            "offset", "inf", "nan"}


def metric_names(expr):
    """The metrics a PromQL expression reads: what is left once strings,
    label matchers, ranges, grouping clauses, functions, keywords and
    numbers are out."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    names = set()
    for m in re.finditer(r"[a-zA-Z_:][a-zA-Z0-9_:]*", e):
        rest = e[m.end():].lstrip()
        if rest.startswith("(") or m.group(0).lower() in KEYWORDS:
            continue
        if m.start() > 0 and (e[m.start() - 1].isdigit() or e[m.start() - 1] == "."):
            continue  # 1e9, 0.95
        names.add(m.group(0))
    return names


def served(text):
    """Sample names and metric families of a Prometheus text answer."""
    out = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            out.add(line.split()[2])
        elif line and not line.startswith("#"):
            out.add(re.match(r"[a-zA-Z_:][a-zA-Z0-9_:]*", line).group(0))
    return out


def queries(dash):
    for p in dash["panels"]:
        for t in p.get("targets", []):
            yield p, t


def lmkd_metrics():
    """What a real lmkd serves at --metrics-listen."""
    require_bpf()
    d = tmpdir("lmk-grafana-")
    ready, errlog = os.path.join(d, "ready"), os.path.join(d, "lmkd.log")
    cmd = [build_path("daemon", "lmkd"), "-F", "10", "-o", os.path.join(d, "report.json"), "--metrics-listen", "0",
           "--events", "none", "--notify-socket", "none", "--ready-file", ready]
    log("+", " ".join(cmd))
    with open(errlog, "w") as err:
        proc = subprocess.Popen(cmd, stderr=err)
    try:
        wait_ready(ready, proc=proc)
        for _ in range(50):
            m = re.search(r"Serving metrics on http://(127\.0\.0\.1:\d+)/metrics", open(errlog).read())
            if m:
                break
            time.sleep(0.1)
        check(m is not None, f"lmkd did not say where it serves metrics:\n{open(errlog).read()}")
        for _ in range(50):
            try:
                with urllib.request.urlopen(f"http://{m.group(1)}/metrics", timeout=5) as r:
                    return served(r.read().decode())
            except urllib.error.HTTPError as e:  # 503 until its first tick
                check(e.code == 503, f"lmkd's /metrics: {e}")
                time.sleep(0.2)
        fail("lmkd's /metrics never answered 200")
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def main():
    with open(DASHBOARD) as f:
        dash = json.load(f)
    if "--lmkd" in sys.argv:
        have = lmkd_metrics()
        names = {n for _, t in queries(dash) if "expr" in t for n in metric_names(t["expr"]) if n.startswith("lmkd_")}
        check(names, "the dashboard reads no lmkd metric")
        missing = sorted(names - have)
        check(not missing, f"the dashboard reads lmkd metrics lmkd does not serve: {missing} (it serves {sorted(have)})")
        log(f"{len(names)} lmkd metrics of the dashboard, all served: {sorted(names)}")
        return

    with Store() as store:
        # data for every panel: jobs, a library family, a node with a backlog
        check_eq(store.ingest(example())[0], 200, "ingest the example")
        b = make_batch(node="cn002", seq=1, rows=[row("4711", "/usr/lib/x86_64-linux-gnu/libopenblas.so.0", "lib", 50),
                                                  row(None, "[idle]", "idle", 10)],
                       jobs=[{"job": "4711", "user": "alice", "cpus_allocated": 16}])
        check_eq(store.ingest(b, headers={"Lmk-Spool": "batches=2 bytes=2048"})[0], 200, "ingest with a backlog")
        check_eq(store.ingest(b"{", token=NODE_TOKEN)[0], 400, "a rejected batch")
        status, _, text = store.request("GET", "/metrics")
        check_eq(status, 200, "GET /metrics")
        have = served(text)

        n_prom = n_api = 0
        for p, t in queries(dash):
            ds = t.get("datasource", p.get("datasource", {})).get("type")
            if ds == "prometheus":
                names = metric_names(t["expr"])
                check(names, f"panel {p['title']!r}: no metric in {t['expr']!r}")
                for n in names:
                    if n.startswith("lmkd_"):
                        continue  # served by lmkd: test-grafana.py --lmkd
                    check(n in have, f"panel {p['title']!r}: {n} is not served by lmk-store's /metrics "
                          f"(query {t['expr']!r})")
                n_prom += 1
            elif ds == "yesoreyeram-infinity-datasource":
                url = t["url"]
                check(url.startswith("/api/v1/") and "format=csv" in url and t["type"] == "csv",
                      f"panel {p['title']!r}: {url} is not a CSV list of the store's API")
                status, hdrs, body = store.request("GET", url, token=ADMIN_TOKEN)
                check_eq(status, 200, f"panel {p['title']!r}: GET {url}")
                check_eq(hdrs.get("content-type"), "text/csv; charset=utf-8", f"{url}: Content-Type")
                header = next(csv.reader(io.StringIO(body, newline="")))
                for c in t.get("columns", []):
                    check(c["selector"] in header, f"panel {p['title']!r}: column {c['selector']} is not in "
                          f"{url}'s header {header}")
                n_api += 1
            else:
                fail(f"panel {p['title']!r}: a query of data source {ds!r}")
        check(n_prom >= 8 and n_api >= 4, f"only {n_prom} Prometheus and {n_api} API queries")
        log(f"{n_prom} Prometheus queries name metrics lmk-store serves; {n_api} API queries answer CSV "
            "with the columns their panels read")


if __name__ == "__main__":
    main()
