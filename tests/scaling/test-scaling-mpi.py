#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Scaling across runs against an MPI program of known scaling, run as
real Slurm jobs (docs/scaling.md, "Validation").

lmk-mpi-scaling (mpi-scaling.c) runs with mpirun inside Slurm batch jobs
at 1, 2, 3, 4, 6 and 8 tasks (oversubscribed beyond the machine's CPUs:
sbatch --overcommit, mpirun --oversubscribe), with LMK_NOTES app=, size=,
under lmkd sampling at 500 Hz and pushing every 2 s to lmk-store. Each
rank computes A/p + B units and does round(C log2 p) reductions in the MPI
library per part, and measures its own CPU time in and outside MPI.

Checked:
- every run's row of GET /api/v1/scaling (the busiest rank's sampled
  seconds) matches the program's own CPU-time figures of its busiest rank:
  elapsed within 3/sqrt(n) (n: the rank's samples; a rank that runs in
  time slices is caught by a periodic sample with a chance, so its count
  varies about like a binomial one) but at least ELAPSED_BOUND, relative,
  + 2 samples; the CPU time of all ranks together (the run's samples)
  within ELAPSED_BOUND + 2 samples; both plus the share of the machine's
  busy time the hypervisor stole meanwhile (samples run on the CPU's clock,
  steal included, the program's clocks leave it out: lmktest.StealMeter);
  computation and communication within that + SPLIT_BOUND s (what samples
  cannot split the way
  the program does: the dynamic loader's and libc's work inside MPI_Init
  and MPI_Finalize, loading and unloading about a hundred plugins, is
  useful to samples and MPI to the program's clocks);
- each run rests on at least MIN_SAMPLES samples;
- leaving each interior task count out (2, 3, 4, 6), fitting the others
  and predicting it (the API's leave_one_out) is within PREDICT_BOUND of
  the program's own elapsed time at that count, and the root mean square
  of those errors within TOTAL_BOUND;
- lmk scaling and /site/scaling show the JSON's numbers.

Wall time is no referee here: with more ranks than CPUs, and other work
on the machine, a rank's wall time is mostly waiting for a CPU. CPU time
per rank is what samples measure, and what the model predicts.

Usage: test-scaling-mpi.py PATH-TO-lmk-mpi-scaling ('' when built without MPI)
"""
import json
import math
import os
import subprocess
import sys
import time

import lmktest
import slurm
import storetest
from e2etest import Lmkd
from lmktest import build_path, fail, load_json, log, require_bpf, tmpdir

HZ = 500
CORES = (1, 2, 3, 4, 6, 8)
INTERIOR = (2, 3, 4, 6)
A, B, C, ITERATIONS = 4.5, 0.15, 5000, 4
LOOPS_PER_UNIT = 5e8  # about a second of CPU here
APP, SIZE = "lmk-scaling-referee", "s1"
MIN_SAMPLES = 1000
ELAPSED_BOUND = 0.05
SPLIT_BOUND = 0.15
PREDICT_BOUND = 0.10
TOTAL_BOUND = 0.05


failures = []


def check(cond, msg):
    """Notes a failure and goes on, so that one run shows every figure."""
    if not cond:
        log("FAIL: " + msg)
        failures.append(msg)


def cpu_stat():
    """(stolen, busy) jiffies of the machine so far (/proc/stat)."""
    with open("/proc/stat") as f:
        user, nice, system, idle, iowait, irq, softirq, steal = (int(x) for x in f.readline().split()[1:9])
    return steal, user + nice + system + irq + softirq + steal


def busiest(truth):
    """The program's own figures of its busiest rank (most CPU time)."""
    r = max(truth["ranks"], key=lambda x: x["process_cpu"])
    return r["process_cpu"], r["useful_cpu"], r["communication_cpu"]


def main():
    prog = sys.argv[1] if len(sys.argv) > 1 else ""
    require_bpf()
    slurm.require_slurm()
    mpirun = lmktest.require_mpi(prog)
    t0 = time.monotonic()
    d = tmpdir()
    os.chmod(d, 0o755)
    sock = os.path.join(d, "lmkd.sock")
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_btl": "self,vader",
           "LMK_NOTES": f"app={APP}:size={SIZE}"}
    truth = {}
    with storetest.Store() as store, slurm.Slurm(
            mode="linuxproc", prolog=os.path.join(lmktest.SOURCE_ROOT, "slurm", "lmk-prolog"),
            epilog=os.path.join(lmktest.SOURCE_ROOT, "slurm", "lmk-epilog"),
            script_env={"LMK_NOTIFY": build_path("slurm", "lmk-notify"), "LMK_SOCKET": sock}) as s:
        lmkd = Lmkd(d, store, interval=2, hz=HZ, notify_socket=sock).start()
        try:
            for p in CORES:
                ref = os.path.join(s.workdir(), f"referee-{p}")
                cmd = (f"exec {mpirun} -np {p} --oversubscribe --bind-to none {prog} {A} {B} {C} {ITERATIONS} "
                       f"{LOOPS_PER_UNIT} {ref}")
                s0, b0 = cpu_stat()
                job = s.sbatch(f"#!/bin/sh\n{cmd}\n", env=env,
                               args=[f"--ntasks={p}", "--overcommit", f"--job-name=scaling-{p}"])
                s.wait_done(job, timeout=120)
                if s.job_state(job) != "COMPLETED":
                    fail(f"job {job}: {s.job_state(job)}\n{s.output(job)}")
                s1, b1 = cpu_stat()
                truth[p] = (job, {"ranks": [load_json(f"{ref}-{k}.json") for k in range(p)],
                                  "steal": (s1 - s0) / max(b1 - b0, 1)})
                log(f"p={p}: job {job} done after {time.monotonic() - t0:.1f} s, "
                    f"{100 * truth[p][1]['steal']:.1f}% of the busy time stolen")
            time.sleep(3)  # the last interval, with the epilog's end of the jobs
        finally:
            lmkd.stop()

        q = f"/api/v1/scaling?app={APP}&size={SIZE}&predict=16"
        o = store.get_ok(q)
        log("scaling: " + json.dumps(o))
        lmk = [build_path("cli", "lmk"), "--store", store.url(), "--token-file", store.token_file,
               "scaling", APP, "--size", SIZE, "--predict", "16"]
        cli = subprocess.run(lmk, capture_output=True, text=True)
        cli_json = subprocess.run(lmk + ["--json"], capture_output=True, text=True)
        status, _, page = store.request("GET", f"/site/scaling?app={APP}&size={SIZE}&predict=16",
                                        token=storetest.ADMIN_TOKEN)

    log("lmk scaling:\n" + cli.stdout + cli.stderr)
    if len(o["groups"]) != 1:
        fail(f"one group expected (one app, size, executable, node type): {len(o['groups'])}")
    g = o["groups"][0]
    check(g["executable"] and g["executable"].endswith("lmk-mpi-scaling"), f"executable {g['executable']}")
    check([c["p"] for c in g["core_counts"]] == list(CORES), f"core counts {[c['p'] for c in g['core_counts']]}")

    log(f"{'p':>3} {'samples':>7} {'lmk elapsed':>11} {'ref elapsed':>11} {'lmk comp':>9} {'ref comp':>9} "
        f"{'lmk comm':>9} {'ref comm':>9} {'lmk all':>9} {'ref all':>9}")
    rows = {r["p"]: r for r in g["runs"]}
    for p in CORES:
        job, t = truth[p]
        r = rows[p]
        e, u, m = busiest(t)
        log(f"{p:>3} {r['samples']:>7} {r['elapsed_seconds']:>11.3f} {e:>11.3f} {r['computation_seconds']:>9.3f} "
            f"{u:>9.3f} {r['communication_seconds']:>9.3f} {m:>9.3f} {r['samples'] / HZ:>9.3f} "
            f"{sum(x['process_cpu'] for x in t['ranks']):>9.3f}")
        check(r["job"] == job, f"p={p}: the run is job {r['job']}, expected {job}")
        check(r["ranks"] == p, f"p={p}: {r['ranks']} ranks seen")
        check(r["samples"] >= MIN_SAMPLES, f"p={p}: only {r['samples']} samples, need {MIN_SAMPLES}")
        n = r["elapsed_seconds"] * HZ
        allowed = (max(ELAPSED_BOUND, 3 / math.sqrt(n)) + t["steal"]) * e + 2 / HZ
        check(abs(r["elapsed_seconds"] - e) <= allowed,
              f"p={p}: elapsed {r['elapsed_seconds']:.3f} s, the program's {e:.3f} s")
        everyone = sum(x["process_cpu"] for x in t["ranks"])
        check(abs(r["samples"] / HZ - everyone) <= (ELAPSED_BOUND + t["steal"]) * everyone + 2 / HZ,
              f"p={p}: all ranks {r['samples'] / HZ:.3f} s, the program's {everyone:.3f} s")
        check(abs(r["computation_seconds"] - u) <= SPLIT_BOUND + allowed,
              f"p={p}: computation {r['computation_seconds']:.3f} s, the program's {u:.3f} s")
        check(abs(r["communication_seconds"] - m) <= SPLIT_BOUND + allowed,
              f"p={p}: communication {r['communication_seconds']:.3f} s, the program's {m:.3f} s")

    fit = g["fit"]
    log(f"fit: computation {fit['computation']}, communication {fit['communication']}, "
        f"leave-one-out error {fit['leave_one_out_error']}")
    errors = []
    for x in fit["leave_one_out"]:
        e = busiest(truth[x["p"]][1])[0]
        err = (x["predicted_elapsed_seconds"] - e) / e
        log(f"left out p={x['p']}: predicted {x['predicted_elapsed_seconds']:.3f} s "
            f"({x['low_seconds']}-{x['high_seconds']}), the program's {e:.3f} s: error {100 * err:+.1f}%")
        if x["p"] in INTERIOR:
            errors.append(err)
            check(abs(err) <= PREDICT_BOUND, f"p={x['p']} left out: error {100 * err:.1f}% > {100 * PREDICT_BOUND}%")
    check(len(errors) == len(INTERIOR), f"leave-one-out for {INTERIOR}: {fit['leave_one_out']}")
    total = math.sqrt(sum(e * e for e in errors) / len(errors))
    log(f"total (RMS) error predicting a left-out interior task count: {100 * total:.1f}%")
    check(total <= TOTAL_BOUND, f"total error {100 * total:.1f}% > {100 * TOTAL_BOUND}%")
    check(g["prediction"]["p"] == 16 and g["prediction"]["elapsed_seconds"] > 0, f"prediction {g['prediction']}")

    check(cli.returncode == 0, f"lmk scaling: {cli.returncode} {cli.stderr}")
    # asked a moment later: the default range ends at another "now"
    check({k: v for k, v in json.loads(cli_json.stdout).items() if k not in ("since", "until")} ==
          {k: v for k, v in o.items() if k not in ("since", "until")}, "lmk scaling --json differs from the API's answer")
    check(status == 200 and "<svg" in page, f"/site/scaling: {status}")
    for text, what in ((cli.stdout, "lmk scaling"), (page, "/site/scaling")):
        want = ["%.3f" % c[k] for c in g["core_counts"]
                for k in ("elapsed_seconds", "computation_seconds", "communication_seconds", "speedup", "efficiency")]
        want += ["%.3f" % g["prediction"][k] for k in ("elapsed_seconds", "computation_seconds")]
        missing = [w for w in want if w not in text]
        check(not missing, f"{what} does not show {missing}")
    if failures:
        fail(f"{len(failures)} checks failed, the first: {failures[0]}")
    log(f"PASS after {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    main()
