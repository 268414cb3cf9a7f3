#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The store's 95% intervals against a workload of known truth (issue 11),
a short version of bench/uncertainty/run: 150 runs of a workload that
knows its own share of libcov-a, each its own job, through a real lmkd
and lmk-store. Checks that every served share_ci95 is the Wilson interval
of the served counts, and that the interval method covers the truth in at
least 88% of the runs (at a true 95%, 150 runs fall below 88% about
twice in 10,000 runs of this test). The full measurement, and
why the store's share of all samples is not asserted here (kernel samples
on a loaded machine), are in docs/uncertainty.md."""
import json
import os
import subprocess
import sys

from lmktest import SOURCE_ROOT, build_path, check, log, require_bpf, skip, tmpdir

RUNS = 150


def main():
    require_bpf()
    if os.environ.get("LMK_SANITIZED") == "1":
        skip("the workload's slices are timed; not under sanitizers")
    if not os.path.exists(build_path("bench", "uncertainty", "lmk-cov-workload")):
        skip("bench/uncertainty was not built")
    out = os.path.join(tmpdir(), "coverage.json")
    cmd = [sys.executable, os.path.join(SOURCE_ROOT, "bench", "uncertainty", "run"),
           "--build", build_path(), "--runs", str(RUNS), "--modes", "random", "--jitters", "0", "--json", out]
    log("+", " ".join(cmd))
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    log(proc.stdout)
    check(proc.returncode == 0, f"bench/uncertainty/run exited with {proc.returncode}")
    with open(out) as f:
        result = json.load(f)
    s = result["summaries"][0]
    runs = result["runs"][s["config"]]

    # each run lingers 1.5 s after its work, alive through a drain of
    # lmkd's rings (1 s apart), so that lmkd reads its SLURM_JOB_ID (the
    # runs have no parent in the job to inherit it from; the job's notice
    # before it, as a Prolog's, makes lmkd take that word): a run missing
    # from the store is lost, save where the machine held lmkd back
    check(s["left_out"] <= RUNS // 50, f"{s['left_out']} of {RUNS} runs are not in the store")
    check(0.9 <= s["samples_vs_cpu_time"] <= 1.15,
          f"the jobs have {s['samples_vs_cpu_time']:.3f} times the samples their CPU time calls for")
    for r in runs:
        if r["k"] == 0:
            continue
        k, n = r["k"], r["n"]
        want = wilson(k, n)
        check(all(abs(a - b) <= 1e-6 for a, b in zip([r["low"], r["high"]], want)),
              f"job {r['job']}: {k} of {n} served as {r['low']}-{r['high']}, Wilson is {want}")
    c = s["a_of_ab"]
    log(f"coverage: method {c['covered']}/{s['runs']}, store {s['store']['covered']}/{s['runs']}")
    check(c["coverage"] >= 0.88,
          f"the 95% interval held the truth in only {c['covered']} of {s['runs']} runs")
    log("PASS")


def wilson(k, n, z=1.959964):
    p = k / n
    centre, half = p + z * z / (2 * n), z * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return [round(max(0.0, (centre - half) / (1 + z * z / n)), 6), round(min(1.0, (centre + half) / (1 + z * z / n)), 6)]


if __name__ == "__main__":
    main()
