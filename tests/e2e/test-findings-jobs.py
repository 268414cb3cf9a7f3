#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Findings on real Slurm jobs: lmkd learns each job's allocation from Slurm
(its cgroup's cpuset, or SLURM_CPUS_ON_NODE in linuxproc mode) and which
BLAS builds the node has, pushes to a real store, and the store's rules
flag the job that triggers each and not its control:

  A  one thread in a 2-CPU allocation      single-thread
  B  two threads in a 2-CPU allocation     nothing (control for A and C)
  C  dd with tiny blocks: mostly syscalls  kernel-time
  D  dgemm in the reference BLAS           reference-blas (OpenBLAS is installed)
  E  dgemm in OpenBLAS                     nothing (control for D)
  F  sleep in a 2-CPU allocation           idle-cores
  G  all its time in a library the site's  communication
     families file calls communication
  H  a phase marker in a tight loop         markers-off (liblmk switches it off)

The referee for "how many cores did it keep busy" is each job's own rusage
over its own wall-clock time (rusage-run.py): lmk's figure must agree with
it, and the allocation rules must follow the referee's figure. (On a
loaded machine B's two threads may share one CPU; then the referee, too,
sees one busy core, and a single-thread finding is the right answer.)"""
import json
import os
import time

import lmktest
import slurm
import storetest
from e2etest import Lmkd
from lmktest import build_path, check, fail, log, require_bpf, skip, tmpdir

REF_BLAS = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"
OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"
SECONDS = 6


def check_site_answers(store, summaries):
    """The site answers of issue 13 on these real runs: time per library
    family holds the BLAS time of jobs D and E, and the application mix
    holds every job, D and E (nearly all their time in the BLAS, little or
    none in their own code) under their executable or, without a sample
    in it, their command: both lmk-dgemm."""
    fam = {(f["purpose"], f["family"]): f for f in store.get_ok("/api/v1/families?since=1h")["families"]}
    # the BLAS's own files: Debian's reference libblas, OpenBLAS's wrapper and its real library
    for name, key, part in (("D", ("blas-reference", "netlib"), "/blas/"), ("E", ("blas", "openblas"), "openblas")):
        want = sum(o["samples"] for o in summaries[name]["objects"] if part in o["object"])
        got = fam.get(key, {}).get("samples", 0)
        log(f"family {key}: {got} samples site-wide, job {name} {want} in files with {part} in their path")
        # the site's figure is the job's, and whatever else on the machine used that BLAS
        check(want > 100 and want <= got <= want * 1.05 + 10, f"family {key}: {got} samples, job {name} {want}")
    mix = store.get_ok("/api/v1/apps?since=1d&top=1000")
    groups = {g["name"]: g for g in mix["groups"]}
    log(f"application mix: {[(g['name'], g['kind'], g['samples'], g['runs']) for g in mix['groups']]}")
    dgemm = groups.get("lmk-dgemm", {})
    check(dgemm.get("kind") in ("command", "executable", "mixed") and dgemm.get("runs") == 2 and
          dgemm.get("samples") == summaries["D"]["samples"] + summaries["E"]["samples"],
          f"the mix's lmk-dgemm {dgemm} is not jobs D and E "
          f"({summaries['D']['samples']} + {summaries['E']['samples']} samples)")
    if mix["total_runs"] != len(summaries):
        ours = {s["job"] for s in summaries.values()}
        others = [j for j in store.get_ok("/api/v1/jobs?since=1d&limit=100")["jobs"] if j["job"] not in ours]
        log(f"jobs in the store that are none of the test's: {others}")
    check(mix["total_runs"] == len(summaries) and
          mix["total_samples"] == sum(s["samples"] for s in summaries.values()),
          f"the mix holds {mix['total_runs']} jobs and {mix['total_samples']} samples, not the "
          f"{len(summaries)} jobs' {sum(s['samples'] for s in summaries.values())}")


def main():
    require_bpf()
    slurm.require_slurm()
    if not (os.path.exists(REF_BLAS) and os.path.exists(OPENBLAS)):
        skip(f"the reference-blas jobs need {REF_BLAS} and {OPENBLAS} "
             "(apt-get install libblas3 libopenblas0-pthread)")
    d = tmpdir()
    os.chmod(d, 0o755)
    sock = os.path.join(d, "lmkd.sock")
    rules = os.path.join(d, "findings.conf")
    families = os.path.join(d, "families.conf")
    with open(rules, "w") as f:
        # communication above 90%: G (all in liblmktest-a) but not A and B (60%)
        f.write("[general]\nmin-elapsed = 3\nmin-samples = 100\n[communication]\nthreshold = 0.9\n")
    with open(families, "w") as f:
        f.write("comm test-comm liblmktest-a.so*\n")
    mode = "linuxproc" if slurm.cgroup_v1_missing() else "cgroup"
    workload = build_path("tests", "sampler", "lmk-workload")
    dgemm = build_path("tests", "e2e", "lmk-dgemm")
    rusage = os.path.join(lmktest.SOURCE_ROOT, "tests", "jobs", "rusage-run.py")
    env = {"LD_LIBRARY_PATH": build_path("tests", "sampler"), "OPENBLAS_NUM_THREADS": "1"}
    with storetest.Store(extra=["--findings", rules, "--families", families]) as store, slurm.Slurm(
            mode=mode, prolog=os.path.join(lmktest.SOURCE_ROOT, "slurm", "lmk-prolog"),
            epilog=os.path.join(lmktest.SOURCE_ROOT, "slurm", "lmk-epilog"),
            script_env={"LMK_NOTIFY": build_path("slurm", "lmk-notify"), "LMK_SOCKET": sock}) as s:
        lmkd = Lmkd(d, store, interval=2, hz=99, notify_socket=sock).start()
        truth = {k: os.path.join(s.workdir(), f"rusage-{k}.json") for k in "AB"}
        jobs = {
            "A": s.sbatch(f"#!/bin/sh\nexec python3 {rusage} {truth['A']} {workload} 1 {SECONDS}\n", env=env,
                          args=["--cpus-per-task=2"]),
            "B": s.sbatch(f"#!/bin/sh\nexec python3 {rusage} {truth['B']} {workload} 2 {SECONDS}\n", env=env,
                          args=["--cpus-per-task=2"]),
            "C": s.sbatch(f"#!/bin/sh\ntimeout {SECONDS} dd if=/dev/zero of=/dev/null bs=16 status=none\n"
                          "exit 0\n", env=env),
        }
        jobs["F"] = s.sbatch(f"#!/bin/sh\nsleep {SECONDS}\n", env=env, args=["--cpus-per-task=2"])
        jobs["G"] = s.sbatch(f"#!/bin/sh\nexec {build_path('tests', 'sampler', 'lmk-shortproc')} {SECONDS * 1000}\n",
                             env=env)
        jobs["H"] = s.sbatch(f"#!/bin/sh\nexec {build_path('tests', 'phases', 'lmk-marked')} 1 4 hot\n",
                             env={**env, "LD_LIBRARY_PATH": build_path("liblmk")})
        jobs["D"] = s.sbatch(f"#!/bin/sh\nexec {dgemm} {REF_BLAS} 160 {SECONDS}\n", env=env)
        jobs["E"] = s.sbatch(f"#!/bin/sh\nexec {dgemm} {OPENBLAS} 160 {SECONDS}\n", env=env)
        for name, job in jobs.items():
            s.wait_done(job, timeout=120)
            check(s.job_state(job) == "COMPLETED", f"job {name} ({job}): {s.job_state(job)}\n{s.output(job)}")
        time.sleep(3)  # the epilogs, the last interval
        lmkd.stop()
        found = {}
        for name, job in jobs.items():
            summary = store.get_ok(f"/api/v1/jobs/{job}")
            found[name] = {f["rule"]: f for f in summary["findings"]}
            if not summary["nodes"]:
                fail(f"job {name} ({job}) has no node in the store: {summary}")
            node = summary["nodes"][0]
            sj = s.show_job(job)
            log(f"job {name}: slurm {sj.get('StartTime')}..{sj.get('EndTime')}, lmk {node['first_seen']}..{node['last_seen']}")
            log(f"job {name} ({job}): {summary['samples']} samples, kernel share "
                f"{summary['kinds']['kernel']['share']:.2f}, cpus_allocated {node['cpus_allocated']}, "
                f"findings {[(f['rule'], f['message']) for f in summary['findings']]}")
        nodes = {k: store.get_ok(f"/api/v1/jobs/{jobs[k]}")["nodes"][0] for k in "AB"}
        site = store.get_ok("/api/v1/findings?since=1h")
        check_site_answers(store, {k: store.get_ok(f"/api/v1/jobs/{j}") for k, j in jobs.items()})
        ru = {}
        for k in "AB":
            with open(truth[k]) as f:
                ru[k] = json.load(f)

    for k in "AB":
        n, r = nodes[k], ru[k]
        check(n["cpus_allocated"] == 2, f"job {k}'s allocation: {n}")
        used = n["cpu_seconds"] / (n["last_seen"] - n["first_seen"])
        ref = r["cpu_s"] / r["wall_s"]
        log(f"job {k}: lmk counts {n['cpu_seconds']:.2f} CPU-s, {used:.2f} cores busy; its rusage "
            f"{r['cpu_s']:.2f} CPU-s in {r['wall_s']:.2f} s, {ref:.2f} cores")
        # lmkd's samples of the job against the kernel's accounting of it
        check(abs(n["cpu_seconds"] - r["cpu_s"]) <= 0.1 * r["cpu_s"] + 0.2,
              f"job {k}: lmk {n['cpu_seconds']:.2f} CPU-s, rusage {r['cpu_s']:.2f}")
        # lmk's time is the allocation's (Prolog to Epilog), which starts
        # before the program and ends after it, by about a second here
        low = r["cpu_s"] / (r["wall_s"] + 2.0) - 0.1
        check(low <= used <= ref + 0.1, f"job {k}: lmk {used:.2f} busy cores, the referee {ref:.2f} "
              f"(at least {low:.2f} with 2 s of the allocation around the program)")
        # the rule (0.5 ≤ busy ≤ 1.1 of ≥ 2) on the referee's figure, away from its edges
        if abs(ref - 1.1) > 0.15 and abs(used - 1.1) > 0.15:
            want = ref < 1.1
            got = "single-thread" in found[k]
            check(got == want, f"job {k}: {ref:.2f} cores busy by its rusage, findings {found[k]}")
    check("single-thread" in found["A"] and "of 2 allocated cores busy" in found["A"]["single-thread"]["message"],
          f"job A: {found['A']}")
    check("kernel-time" not in found["A"] and "kernel-time" not in found["B"], f"A, B: {found['A']} {found['B']}")
    check("kernel-time" in found["C"], f"job C (dd, bs=16) not flagged for kernel time: {found['C']}")
    check(set(found["F"]) == {"idle-cores"} and "uses 0.0 of 2 allocated cores" in found["F"]["idle-cores"]["message"],
          f"job F (sleep): {found['F']}")
    check("communication" in found["G"] and "liblmktest-a.so" in found["G"]["communication"]["message"],
          f"job G (all in the site's communication library): {found['G']}")
    check(not any("communication" in found[k] for k in "AB"), f"A, B: {found['A']} {found['B']}")
    check("markers-off" in found["H"] and '"hot" in lmk-marked' in found["H"]["markers-off"]["message"],
          f"job H (a marker in a tight loop): {found['H']}")
    check(not any("markers-off" in found[k] for k in "ABCFG"), "markers-off on jobs without markers")
    check("reference-blas" in found["D"], f"job D (reference BLAS) not flagged: {found['D']}")
    check("openblas is installed" in found["D"]["reference-blas"]["message"],
          f"job D's message: {found['D']['reference-blas']['message']}")
    check("reference-blas" not in found["E"], f"job E (OpenBLAS) flagged: {found['E']}")
    flagged = {f["job"] for f in site["findings"]}
    check(jobs["A"] in flagged and jobs["C"] in flagged and (jobs["B"] in flagged) == bool(found["B"]),
          f"the site list: {[(f['job'], f['rule']) for f in site['findings']]}")
    log("PASS")


if __name__ == "__main__":
    main()
