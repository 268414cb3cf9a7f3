#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmkd's own metrics over HTTP (--metrics-listen, lmkd(8)) next to its
textfile (--metrics-file), pushing to a real lmk-store: GET /metrics
answers the same families, with HELP and TYPE, and the same values as the
file written at the same tick; the address is local by default; and the
store learns the node's spool backlog from its pushes (Lmk-Spool). Needs
root and BPF."""
import os
import re
import subprocess
import time
import urllib.request

import storetest
from e2etest import node_token_file, wait_for
from lmktest import build_path, check, fail, log, require_bpf, tmpdir, wait_ready

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$')


def parse(text, what):
    helped, typed, out = set(), set(), {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
        elif line.startswith("# TYPE "):
            typed.add(line.split()[2])
        else:
            m = SAMPLE.match(line)
            check(m is not None, f"{what}: not a sample line: {line!r}")
            check(m.group(1) in helped and m.group(1) in typed, f"{what}: {m.group(1)} has no HELP or TYPE")
            out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def main():
    require_bpf()
    d = tmpdir("lmk-metrics-")
    with storetest.Store() as store:
        prom = os.path.join(d, "lmkd.prom")
        errlog = os.path.join(d, "lmkd.log")
        ready = os.path.join(d, "ready")
        cmd = [build_path("daemon", "lmkd"), "-F", "10", "--store", store.url(), "--token-file", node_token_file(d),
               "--push-interval", "1", "--spool", os.path.join(d, "spool"), "--metrics-file", prom,
               "--metrics-listen", "0", "--node-name", "node-metrics", "--events", "none",
               "--notify-socket", "none", "--ready-file", ready]
        log("+", " ".join(cmd))
        with open(errlog, "w") as err:
            proc = subprocess.Popen(cmd, stderr=err)
        try:
            wait_ready(ready, proc=proc)
            with open(errlog) as f:
                m = re.search(r"Serving metrics on http://127\.0\.0\.1:(\d+)/metrics", f.read())
            check(m is not None, f"lmkd did not say where it serves metrics (127.0.0.1 by default):\n"
                  f"{open(errlog).read()}")
            url = f"http://127.0.0.1:{m.group(1)}/metrics"
            wait_for(lambda: store.sql("SELECT count(*) FROM batches")[0][0] >= 2, 30, "two pushes")

            def sent():
                with open(prom) as f:
                    m = re.search(r'^lmkd_batches_total\{state="sent"\} (\d+)$', f.read(), re.M)
                return int(m.group(1)) if m else 0
            # the counters are published at lmkd's next tick
            wait_for(lambda: sent() >= 2, 10, "lmkd to count two batches sent")

            # the file and the endpoint carry the text of the same tick; a
            # tick between the two reads moves the counters: read again
            for attempt in range(20):
                with urllib.request.urlopen(url, timeout=5) as r:
                    check(r.status == 200, f"GET {url}: {r.status}")
                    ctype = r.headers["Content-Type"]
                    served = r.read().decode()
                with open(prom) as f:
                    written = f.read()
                if served == written:
                    break
                time.sleep(0.05)
            else:
                fail(f"GET /metrics never matched the textfile:\n{served}\n---\n{written}")
            check(ctype == "text/plain; version=0.0.4; charset=utf-8", f"Content-Type {ctype}")
            values = parse(served, url)
            for name in ("lmkd_build_info{version=\"%s\"}" % open(build_path("meson-info", "intro-projectinfo.json"))
                         .read().split('"version": "')[1].split('"')[0],
                         "lmkd_start_time_seconds", "lmkd_samples_total", "lmkd_samples_lost_total",
                         "lmkd_records_lost_total", 'lmkd_batches_total{state="sent"}', "lmkd_spool_batches",
                         "lmkd_spool_bytes", "lmkd_push_failures_total"):
                check(name in values, f"{url} has no {name}:\n{served}")
            check(values["lmkd_samples_total"] > 0, "lmkd counted no samples")
            check(values['lmkd_batches_total{state="sent"}'] >= 2, "lmkd sent fewer than two batches")
            check(abs(values["lmkd_start_time_seconds"] - time.time()) < 120, "lmkd's start time")

            with urllib.request.urlopen(store.url("/metrics"), timeout=5) as r:
                site = r.read().decode()
            m = re.search(r'^lmk_store_node_spool_batches\{node="node-metrics"\} (\d+)$', site, re.M)
            check(m is not None, f"the store has no spool backlog of node-metrics:\n{site}")
            check(int(m.group(1)) <= 1, f"a backlog of {m.group(1)} batches while the store answers")
            log(f"lmkd serves {len(values)} series at {url}, as in {prom}; the store knows its backlog")
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        check(proc.returncode == 0, f"lmkd exited with {proc.returncode}:\n{open(errlog).read()}")


if __name__ == "__main__":
    main()
