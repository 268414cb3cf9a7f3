#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmkd's shares of a workload with known truth, referee'd by perf record.

The workload splits its CPU time 60/30/10 between liblmktest-a, liblmktest-b
and its executable and reports what it really spent (thread CPU clocks).
lmkd and `perf record -a` sample the same run at the same frequency; lmkd's
shares must be within 3 percentage points of the truth and of perf's.
"""
import json
import os
import signal
import subprocess
import sys

from lmktest import (build_path, check, fail, lmkd_oneshot, load_json, log, require_bpf, skip, tmpdir,
                     wait_ready, which)

HZ = 199
THREADS = 2
SECONDS = 14            # per thread: 2 x 14 s x 199 Hz ~ 5,500 samples
TOLERANCE = 3.0         # percentage points
MIN_SAMPLES = 5000


def perf_shares(perf_data, comm):
    """Shares per DSO of the workload's samples, from perf report."""
    out = subprocess.run(
        ["perf", "report", "-i", perf_data, "--stdio", "--comms", comm, "--sort", "dso",
         "-F", "overhead,sample,dso", "-q", "--percentage", "relative"],
        capture_output=True, text=True, check=True).stdout
    shares = {}
    total = 0
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3 or not parts[0].endswith("%"):
            continue
        n = int(parts[1])
        shares[parts[2]] = shares.get(parts[2], 0) + n
        total += n
    return shares, total


def main():
    require_bpf()
    if not which("perf"):
        skip("perf (Debian linux-perf) is not installed: it is this test's referee")
    d = tmpdir()
    out = os.path.join(d, "lmkd.json")
    ready = os.path.join(d, "ready")
    perf_data = os.path.join(d, "perf.data")

    lmkd = lmkd_oneshot(HZ, None, out, extra=["--ready-file", ready])
    wait_ready(ready, proc=lmkd)
    perf = subprocess.Popen(["perf", "record", "-a", "-F", str(HZ), "-e", "cpu-clock", "-o", perf_data, "-q"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wl = subprocess.run([build_path("tests", "sampler", "lmk-workload"), str(THREADS), str(SECONDS)],
                            capture_output=True, text=True, check=True, timeout=SECONDS * 4)
    finally:
        perf.send_signal(signal.SIGINT)
        lmkd.send_signal(signal.SIGINT)
        perf_err = perf.communicate(timeout=60)[1]
        lmkd.wait(timeout=60)
    check(lmkd.returncode == 0, f"lmkd exited with {lmkd.returncode}")
    check(perf.returncode in (0, -signal.SIGINT), f"perf record failed: {perf_err.decode()}")

    truth = json.loads(wl.stdout)
    t_total = truth["a_ns"] + truth["b_ns"] + truth["exe_ns"]
    t_share = {"liblmktest-a.so": 100.0 * truth["a_ns"] / t_total,
               "liblmktest-b.so": 100.0 * truth["b_ns"] / t_total,
               "lmk-workload": 100.0 * truth["exe_ns"] / t_total}

    rep = load_json(out)
    rows = [r for r in rep["rows"] if r["comm"] == "lmk-workload"]
    total = sum(r["samples"] for r in rows)
    log(f"lmkd: {total} samples of lmk-workload; truth {t_share}")
    check(total >= MIN_SAMPLES, f"only {total} workload samples, need {MIN_SAMPLES}")
    by_obj = {}
    kinds = {}
    for r in rows:
        base = os.path.basename(r["object"])
        by_obj[base] = by_obj.get(base, 0) + r["samples"]
        kinds[base] = r["kind"]
        if r["kind"] in ("exe", "lib") and r["object"].startswith("/"):
            check(r["build_id"] and len(r["build_id"]) == 40,
                  f"{r['object']} has no 40-digit build-id: {r['build_id']}")
    check(kinds.get("lmk-workload") == "exe", f"executable kind wrong: {kinds}")
    check(kinds.get("liblmktest-a.so") == "lib", f"library kind wrong: {kinds}")

    p_counts, p_total = perf_shares(perf_data, "lmk-workload")
    log(f"perf: {p_total} samples of lmk-workload: {p_counts}")
    check(p_total >= MIN_SAMPLES // 2, f"perf saw only {p_total} workload samples")

    for obj, want in t_share.items():
        got = 100.0 * by_obj.get(obj, 0) / total
        ref = 100.0 * p_counts.get(obj, 0) / p_total
        log(f"{obj:20s} truth {want:5.1f}%  lmkd {got:5.1f}%  perf {ref:5.1f}%")
        check(abs(got - want) <= TOLERANCE, f"{obj}: lmkd {got:.1f}% vs truth {want:.1f}%")
        check(abs(got - ref) <= TOLERANCE, f"{obj}: lmkd {got:.1f}% vs perf {ref:.1f}%")

    unknown = sum(r["samples"] for r in rows if r["kind"] == "unknown")
    check(unknown == 0, f"{unknown} workload samples attributed to [unknown]")
    log("PASS")


if __name__ == "__main__":
    main()
