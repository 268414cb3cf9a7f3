#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A Slurm job of short-lived processes: its functions from lmkd against
perf's, and named although each process lives a few milliseconds.

    test-functions-slurm.py PROGRAM LMK_NOTIFY SLURM_DIR

A real Slurm (tests/lib/slurm.py, linuxproc mode: lmk's Prolog and
Epilog tell lmkd whose the job is) runs a batch script of two shell
loops, each starting lmk-func-hot for 5 ms of work 3,000 times. lmkd
(997 Hz, one-shot report) and `perf record -a -F 199 -e cpu-clock`
sample the run. The top 10 functions of the job's lmk-func-hot processes
must be within 2 percentage points of perf's, and a function must be
named for at least 99 % of their samples in lmk-func-hot (a file with
symbols), though every process has exited long before lmkd names
anything.
"""
import os
import shutil
import sys

import functest
import slurm
from lmktest import check, log, require_bpf, skip, tmpdir, which

RUNS = 3000
MS = 5


def main():
    prog, notify, slurm_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    require_bpf()
    slurm.require_slurm()
    if not which("perf"):
        skip("perf (Debian linux-perf) is not installed: it is this test's referee")
    d = tmpdir("lmk-functions-")
    os.chmod(d, 0o755)
    # a copy Slurm's user can run, wherever the build is
    app = os.path.join(d, "lmk-func-hot")
    shutil.copy(prog, app)
    os.chmod(app, 0o755)
    sock = os.path.join(d, "lmkd.sock")
    script = (f"#!/bin/sh\nloop() {{ i=0; while [ $i -lt {RUNS} ]; do {app} --ms {MS} || exit 1; i=$((i+1)); done; }}\n"
              "loop & loop & wait\n")
    with slurm.Slurm(mode="linuxproc", prolog=os.path.join(slurm_dir, "lmk-prolog"),
                     epilog=os.path.join(slurm_dir, "lmk-epilog"),
                     script_env={"LMK_NOTIFY": notify, "LMK_SOCKET": sock}) as s:
        run = functest.Run(d)
        try:
            job = s.sbatch(script, args=["--job-name=short"])
            s.wait_done(job, timeout=300)
            check(s.job_state(job) == "COMPLETED", f"job {job}: {s.job_state(job)}\n{s.output(job)}")
        finally:
            rep = run.stop()
    comm = "lmk-func-hot"
    procs = rep["lmkd"]["execs"]
    log(f"job {job}: {procs} execs seen by lmkd")
    functest.compare(rep, run.perf_data, job, {comm})
    functest.check_named(rep, job, comm)
    log("PASS")


if __name__ == "__main__":
    main()
