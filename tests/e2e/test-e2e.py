#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""End to end: a marked Slurm job -> lmkd -> lmk-store -> GET /api/v1/jobs/{id}.

The store's summary of the job must hold the binaries, libraries and phases
lmkd saw, with the same sample counts as lmkd's own report of the same run
(so the same shares), the job's metadata and notes; `lmk job` prints it.
"""
import os
import subprocess
import sys
import time

import lmktest
import slurm
import storetest
from e2etest import Lmkd, job_rows, sums, wait_for
from lmktest import build_path, check, log, require_bpf, tmpdir


def main():
    require_bpf()
    slurm.require_slurm()
    d = tmpdir()
    os.chmod(d, 0o755)
    sock = os.path.join(d, "lmkd.sock")
    mode = "linuxproc" if slurm.cgroup_v1_missing() else "cgroup"
    env_lib = {"LD_LIBRARY_PATH": build_path("liblmk")}
    with storetest.Store() as store, slurm.Slurm(
            mode=mode, prolog=os.path.join(lmktest.SOURCE_ROOT, "slurm", "lmk-prolog"),
            epilog=os.path.join(lmktest.SOURCE_ROOT, "slurm", "lmk-epilog"),
            script_env={"LMK_NOTIFY": build_path("slurm", "lmk-notify"), "LMK_SOCKET": sock}) as s:
        lmkd = Lmkd(d, store, interval=2, hz=99, notify_socket=sock).start()
        job = s.sbatch(f"#!/bin/sh\nexec {build_path('tests', 'phases', 'lmk-marked')} 2 5\n",
                       env={**env_lib, "LMK_NOTES": "app=e2e:size=64"}, args=["--job-name=e2e"], user="nobody")
        s.wait_done(job, timeout=90)
        check(s.job_state(job) == "COMPLETED", f"job {job}: {s.job_state(job)}")
        time.sleep(3)  # the epilog, the last interval
        lmkd.stop()
        rep = lmkd.report()
        check(lmkd.metric('lmkd_batches_total{state="sent"}') == lmkd.metric('lmkd_batches_total{state="spooled"}'),
              "lmkd stopped with batches unsent")
        status, _, summary = store.get(f"/api/v1/jobs/{job}")
        check(status == 200, f"GET /api/v1/jobs/{job}: {status} {summary}")
        cli = subprocess.run([build_path("cli", "lmk"), "--store", store.url(), "--token-file", store.token_file,
                              "job", job], capture_output=True, text=True)

    mine = job_rows(rep, job)
    n = sum(r["samples"] for r in mine)
    log(f"job {job}: lmkd saw {n} samples; the store has {summary['samples']}")
    check(n > 500, f"lmkd saw only {n} samples of the job")
    check(summary["samples"] == n, f"store has {summary['samples']} samples, lmkd saw {n}")
    objs = sums(mine, "object")
    stored = {o["object"]: o["samples"] for o in summary["objects"]}
    log(f"objects: lmkd {objs}\n         store {stored}")
    check(stored == objs, "objects differ between lmkd and the store")
    check(any(o.endswith("/lmk-marked") for o in stored), f"the job's executable is not in the store: {stored}")
    phases = sums(mine, "phase")
    sphases = {p["phase"]: p["samples"] for p in summary["phases"]}
    log(f"phases: lmkd {phases}, store {sphases}")
    check(sphases == phases and "timestep/solve" in sphases, "phases differ between lmkd and the store")
    for o in summary["objects"]:
        check(abs(o["share"] - o["samples"] / n) < 1e-3, f"share of {o['object']} is not its part of the job")
    check(summary["user"] == "nobody" and summary["name"] == "e2e", f"metadata: {summary}")
    check(summary["notes"] == {"app": "e2e", "size": "64"}, f"notes: {summary['notes']}")
    check(summary["ended"] is True, "the store does not know the job ended")
    check(cli.returncode == 0 and job in cli.stdout and "timestep/solve" in cli.stdout,
          f"lmk job {job} failed: {cli.stdout}{cli.stderr}")
    log(cli.stdout)
    log("PASS")


if __name__ == "__main__":
    main()
