#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""POP metrics from samples against an MPI program that measures its own.

lmk-mpi-imbalance (mpi-imbalance.c) runs as 2 Open MPI ranks, launched
once with mpirun inside a real Slurm batch job and once with
srun --mpi=pmix (where Slurm has the plugin) (tests/lib/slurm.py), under lmkd sampling at
200 Hz and pushing every 2 s to lmk-store. Rank 0 computes 1.0 units per iteration, rank 1 0.6, and each
waits for the other inside MPI (Open MPI's shared-memory transport spins
while it waits, so the waits are samples in its libraries). The program
measures its own time in MPI with MPI_Wtime and writes its load balance
(LB) and communication efficiency (CE); lmk's, from lmkd's per-rank
figures (ranks[] of its report) and from the store's job summary (pop),
must be within 0.05 of them, resting on at least 2,000 samples; the store
must hold exactly the samples lmkd reported.

Samples see CPU time, the program's clocks see wall time: when the machine
takes CPU time from the ranks (other work on a 2-CPU machine), a rank
waiting for a descheduled partner spins longer and the two measures part.
The program therefore also measures the same split in its CPU time. The
wall-clock referee (MPI_Wtime) is used when each rank had its CPU for at
least 90% of its elapsed time; otherwise the CPU-time referee is used and
the log says so. The bound is 0.05 either way.

Usage: test-pop.py PATH-TO-lmk-mpi-imbalance ('' when built without MPI)
"""
import json
import os
import subprocess
import sys
import time

import lmktest
import slurm
import storetest
from e2etest import Lmkd
from lmktest import build_path, check, load_json, log, require_bpf, tmpdir

HZ = 200
ITERATIONS = 800
LOOPS_PER_UNIT = 4000000
BOUND = 0.05
MIN_SAMPLES = 2000
CPU_SHARE_FOR_WALL = 0.9


def pop_from_ranks(rows, job, hz):
    """LB and CE from lmkd's ranks[] rows of one job, summed over phases
    and steps: useful = samples outside communication libraries, elapsed =
    the busiest rank's samples (docs/pop.md)."""
    per = {}
    for r in rows:
        if r["job"] != job:
            continue
        s = per.setdefault(r["rank"], [0, 0])
        s[0] += r["samples"]
        s[1] += r["comm_samples"]
    useful = {k: (v[0] - v[1]) / hz for k, v in per.items()}
    elapsed = max(v[0] for v in per.values()) / hz
    mx = max(useful.values())
    lb = sum(useful.values()) / len(useful) / mx
    return per, lb, mx / elapsed


def main():
    prog = sys.argv[1] if len(sys.argv) > 1 else ""
    require_bpf()
    slurm.require_slurm()
    mpirun = lmktest.require_mpi(prog)
    d = tmpdir()
    os.chmod(d, 0o755)
    out = os.path.join(d, "lmkd.json")

    # a malformed site table of library families stops lmkd at start, naming the line
    bad = os.path.join(d, "families.conf")
    with open(bad, "w") as f:
        f.write("comm site-mpi libsitempi.so*\nCOMM broken libx.so\n")
    r = subprocess.run([build_path("daemon", "lmkd"), "-F", "10", "-d", "1", "-o", out, "--families", bad],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 1 and "line 2" in r.stderr and bad in r.stderr,
          f"lmkd with a malformed families file: exit {r.returncode}, {r.stderr!r}")

    # Two launches: mpirun inside the batch script (ranks in step "batch",
    # rank from OMPI_COMM_WORLD_RANK), and Slurm's own srun --mpi=pmix
    # (step "0", rank from PMIX_RANK) where the plugin exists.
    env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_btl": "self,vader"}
    args = f"{prog} {ITERATIONS} {LOOPS_PER_UNIT}"
    # Not oversubscribed (2 ranks, 2 slots): Open MPI then spins in its
    # waits instead of yielding the CPU.
    cases = [("mpirun", "batch", f"exec {mpirun} -np 2 --bind-to none {args}")]

    sock = os.path.join(d, "lmkd.sock")
    results = []
    # lmk's Prolog/Epilog, as a site runs them: the job's metadata (its
    # cluster among them) before its first sample
    with storetest.Store() as store, slurm.Slurm(
            mode="linuxproc", prolog=os.path.join(lmktest.SOURCE_ROOT, "slurm", "lmk-prolog"),
            epilog=os.path.join(lmktest.SOURCE_ROOT, "slurm", "lmk-epilog"),
            script_env={"LMK_NOTIFY": build_path("slurm", "lmk-notify"), "LMK_SOCKET": sock}) as s:
        mpi = s.run(["srun", "--mpi=list"], check=False)
        if "pmix" in mpi.stdout + mpi.stderr:
            cases.append(("srun", "0", f"exec srun --mpi=pmix -n 2 {args}"))
        else:
            log("Slurm has no mpi/pmix plugin here: only the mpirun launch is tested")
        lmkd = Lmkd(d, store, interval=2, hz=HZ, notify_socket=sock).start()
        try:
            for name, step, cmd in cases:
                ref = os.path.join(s.workdir(), f"referee-{name}.json")
                job = s.sbatch(f"#!/bin/sh\n{cmd} {ref}\n", env=env,
                               args=["--ntasks=2", f"--job-name=pop-{name}"])
                s.wait_done(job, timeout=180)
                check(s.job_state(job) == "COMPLETED", f"job {job}: {s.job_state(job)}\n{s.output(job)}")
                results.append((name, step, job, ref))
            time.sleep(3)  # the last interval
        finally:
            lmkd.stop()
        rep = lmkd.report()
        checked = []
        for name, step, job, ref in results:
            status, _, summary = store.get(f"/api/v1/jobs/{job}")
            check(status == 200, f"GET /api/v1/jobs/{job}: {status} {summary}")
            cli = subprocess.run([build_path("cli", "lmk"), "--store", store.url(), "--token-file",
                                  store.token_file, "job", job], capture_output=True, text=True)
            checked.append((name, step, job, load_json(ref), summary["pop"], cli))

    check("ranks" in rep, "lmkd's report has no ranks[]")
    check(rep["lmkd"]["rank_samples_overflowed"] == 0, "rank rows overflowed")
    for case in checked:
        check_case(rep, *case)
    log("PASS")


def check_case(rep, name, step, job, truth, pop, cli):
    log(f"== {name}: job {job}")
    log("referee: " + json.dumps(truth))
    rows = [r for r in rep["ranks"] if r["job"] == job]
    for r in rows:
        log(f"lmkd rank row: {r}")
    check({r["step"] for r in rows} == {step}, f"{name}: ranks in steps {sorted({r['step'] for r in rows})}, "
          f"expected {step}")
    per, lb, ce = pop_from_ranks(rep["ranks"], job, rep["frequency_hz"])
    log(f"store: {json.dumps(pop)}")
    log("lmk job:\n" + cli.stdout)
    check(cli.returncode == 0 and "MPI efficiency (POP, from samples of 2 ranks)" in cli.stdout,
          f"lmk job {job}: {cli.returncode} {cli.stderr}")
    check(pop is not None and pop["ranks"] == 2, f"the store's pop: {pop}")
    check((pop["samples"], pop["comm_samples"]) == (sum(v[0] for v in per.values()), sum(v[1] for v in per.values())),
          "the store's samples of ranks differ from lmkd's")
    check(abs(pop["load_balance"] - lb) < 1e-3 and abs(pop["communication_efficiency"] - ce) < 1e-3,
          f"the store's LB {pop['load_balance']} CE {pop['communication_efficiency']} differ from lmkd's")
    check(sorted(per) == [0, 1], f"ranks seen: {sorted(per)} (expected 0 and 1, and no launcher)")
    total = sum(v[0] for v in per.values())
    log(f"lmk: {total} samples of ranks ({', '.join(f'rank {k}: {v[0]} ({v[1]} comm)' for k, v in sorted(per.items()))}); "
        f"LB {lb:.3f} CE {ce:.3f}")
    check(total >= MIN_SAMPLES, f"only {total} samples of ranks, need {MIN_SAMPLES}")

    share = min(r["cpu"] / r["elapsed"] for r in truth["ranks"])
    if share >= CPU_SHARE_FOR_WALL:
        kind, t_lb, t_ce = "wall clock (MPI_Wtime)", truth["load_balance"], truth["communication_efficiency"]
    else:
        kind, t_lb, t_ce = ("CPU time (the machine took CPU time from the ranks: "
                            f"least share {share:.2f} < {CPU_SHARE_FOR_WALL})",
                            truth["load_balance_cpu"], truth["communication_efficiency_cpu"])
    log(f"referee by {kind}: LB {t_lb:.3f} CE {t_ce:.3f}; wall LB {truth['load_balance']:.3f} "
        f"CE {truth['communication_efficiency']:.3f}, CPU LB {truth['load_balance_cpu']:.3f} "
        f"CE {truth['communication_efficiency_cpu']:.3f}")
    check(abs(lb - t_lb) <= BOUND, f"{name}: load balance {lb:.3f}, referee {t_lb:.3f}: off by more than {BOUND}")
    check(abs(ce - t_ce) <= BOUND,
          f"{name}: communication efficiency {ce:.3f}, referee {t_ce:.3f}: off by more than {BOUND}")


if __name__ == "__main__":
    main()
