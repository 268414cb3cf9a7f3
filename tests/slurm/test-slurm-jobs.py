#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmk's job parsers (collectors/job-cgroup.c, job-environ.c, job-stepd.c,
through job-probe) on the live /proc/<pid>/cgroup and /proc/<pid>/environ of
processes a real Slurm runs, and the root slurmstepd above each.

Slurm's own word is the reference: 'scontrol listpids' says which job and
step every process on the node belongs to. Covered: two concurrent jobs of
different users running different programs, a job with two srun steps, a
job with LMK_NOTES, and a process outside Slurm.

Usage: test-slurm-jobs.py cgroup|linuxproc JOB_PROBE LMK_NOTIFY SLURM_DIR
"""
import json
import os
import subprocess
import sys
import time

import lmktest
import slurm
from lmktest import check, log

ENOENT, ESRCH = 2, 3


def probe(job_probe, pids):
    r = subprocess.run([job_probe, *map(str, pids)], capture_output=True, text=True)
    check(r.returncode == 0, f"job-probe failed ({r.returncode}): {r.stderr}")
    return {o["pid"]: o for o in map(json.loads, r.stdout.splitlines())}


def listpids(s, job):
    """[(pid, step)] of the job on this node, as slurmd's proctrack sees them."""
    r = s.run(["scontrol", "listpids", str(job)], check=False)
    out = []
    for line in r.stdout.splitlines()[1:]:
        f = line.split()
        if len(f) >= 3 and f[0].isdigit() and f[1] == str(job):
            out.append((int(f[0]), f[2]))
    return out


def comm(pid):
    try:
        with open(f"/proc/{pid}/comm") as f:
            return f.read().strip()
    except OSError:
        return "?"


def wait_pids(s, job, want, timeout=30):
    """Waits until the job's processes include, for each step in want, the
    programs listed (comm names); returns listpids' answer."""
    end = time.monotonic() + timeout
    while True:
        pids = listpids(s, job)
        have = {}
        for pid, step in pids:
            have.setdefault(step, set()).add(comm(pid))
        if all(set(progs) <= have.get(step, set()) for step, progs in want.items()):
            return pids
        if time.monotonic() > end:
            lmktest.fail(f"job {job}: wanted {want}, Slurm lists {have}\n{s.logs()}")
        time.sleep(0.2)


class Checker:
    def __init__(self, s, mode, job_probe):
        self.s = s
        self.mode = mode
        self.job_probe = job_probe
        self.checked = 0

    def job(self, job, pids, user, uid, notes=None):
        """Every process Slurm lists for job maps to job and its step."""
        meta = self.s.show_job(job)
        got = probe(self.job_probe, [p for p, _ in pids])
        # listpids also lists a task slurmstepd has forked but that has not
        # exec'd yet: it still has slurmstepd's environment. Such a task
        # execs within moments; a process that stays without the job fails.
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            pending = [p for p, o in got.items() if o["environ"]["rc"] == 0]
            if not pending:
                break
            time.sleep(0.2)
            got.update(probe(self.job_probe, pending))
        steps = set()
        for pid, step in pids:
            o = got[pid]
            cg, env = o["cgroup"], o["environ"]
            if cg["rc"] in (-ENOENT, -ESRCH) or env["rc"] in (-ENOENT, -ESRCH):
                continue  # gone since listpids (srun's helpers come and go)
            what = f"job {job} step {step} pid {pid} ({comm(pid)})"
            if self.mode == "cgroup":
                check(cg["rc"] == 1, f"{what}: cgroup parse gave {cg['rc']}, expected the job")
                check(cg["job"] == job, f"{what}: cgroup says job {cg['job']}")
                check(cg["step"] == step, f"{what}: cgroup says step {cg['step']!r}")
                check(cg["uid"] == uid, f"{what}: cgroup says uid {cg['uid']}")
            else:
                check(cg["rc"] == 0, f"{what}: linuxproc jobs have no cgroup, parse gave {cg}")
            # root's slurmstepd above it: how lmkd knows the job of a
            # process outside job cgroups whose environment names one
            sd = o["stepd"]
            check(sd["rc"] == 1 and sd["job"] == job and sd["step"] == step,
                  f"{what}: root's slurmstepd above it gave {sd}")
            check(env["rc"] == 1, f"{what}: environ parse gave {env['rc']}, expected the job")
            info = env["info"]
            check(info["job"] == job, f"{what}: environ says job {info['job']}")
            # Slurm sets SLURM_STEP_ID for srun's tasks only: the batch
            # script (and srun itself inside it) has no step in its environment.
            if step.isdigit():
                check(info["step"] == step, f"{what}: environ says step {info['step']!r}")
            else:
                check(info["step"] in ("", step), f"{what}: environ says step {info['step']!r}")
            check(info["user"] == user and info["uid"] == uid,
                  f"{what}: environ says user {info['user']}({info['uid']})")
            check(info["partition"] == meta["Partition"], f"{what}: partition {info['partition']}")
            check(info["cluster"] == "lmktest", f"{what}: cluster {info['cluster']}")
            check(info["name"] == meta["JobName"], f"{what}: name {info['name']!r} != {meta['JobName']!r}")
            check(info["nodes"] == int(meta["NumNodes"]), f"{what}: nodes {info['nodes']}")
            if notes is not None:
                check(info["notes"] == notes and info["notes_rejected"] == 0,
                      f"{what}: notes {info['notes']} (rejected {info['notes_rejected']}), expected {notes}")
            steps.add(step)
            self.checked += 1
        return steps


def main():
    mode, job_probe = sys.argv[1], sys.argv[2]
    slurm.require_slurm()
    if mode == "cgroup":
        missing = slurm.cgroup_v1_missing()
        if missing:
            lmktest.skip("cgroup mode needs the cgroup v1 controllers %s mounted under /sys/fs/cgroup"
                         % ", ".join(missing))

    clean_env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    outside = subprocess.Popen(["sleep", "300"], env=clean_env)
    try:
        with slurm.Slurm(mode=mode) as s:
            c = Checker(s, mode, job_probe)
            log(f"slurm {slurm.slurm_version()}, {mode} mode, up in {s.start_seconds:.1f} s")

            # A process outside Slurm belongs to no job.
            o = probe(job_probe, [outside.pid])[outside.pid]
            check(o["cgroup"]["rc"] == 0, f"process outside Slurm: cgroup parse gave {o['cgroup']}")
            check(o["environ"]["rc"] == 0, f"process outside Slurm: environ parse gave {o['environ']}")
            check(o["stepd"]["rc"] == 0, f"process outside Slurm: below a slurmstepd: {o['stepd']}")

            # Two jobs at once, of two users, running different programs.
            a = s.sbatch("#!/bin/sh\nsleep 300 &\nwait\n", args=["-J", "lmk sleeper"])
            b = s.sbatch("#!/bin/sh\ntail -f /dev/null &\nwait\n", args=["-J", "lmk-tail"],
                         user="nobody")
            s.wait_state(a, "RUNNING")
            s.wait_state(b, "RUNNING")
            pa = wait_pids(s, a, {"batch": ["slurm_script", "sleep"]})
            pb = wait_pids(s, b, {"batch": ["slurm_script", "tail"]})
            check(s.job_state(a) == "RUNNING" and s.job_state(b) == "RUNNING",
                  "the two jobs did not run at the same time")
            check(not ({p for p, _ in pa} & {p for p, _ in pb}), "Slurm lists a process in both jobs")
            c.job(a, pa, "root", 0)
            c.job(b, pb, "nobody", 65534)
            s.cancel(a)
            s.cancel(b)
            s.wait_done(a)
            s.wait_done(b)

            # One job, two srun steps running side by side.
            j = s.sbatch("#!/bin/sh\n"
                         "srun --overlap -n1 sleep 300 &\n"
                         "srun --overlap -n1 sleep 301 &\n"
                         "wait\n", args=["-n2", "-J", "lmk-steps"])
            s.wait_state(j, "RUNNING")
            pj = wait_pids(s, j, {"batch": ["slurm_script", "srun"], "0": ["sleep"], "1": ["sleep"]})
            steps = c.job(j, pj, "root", 0)
            check({"batch", "0", "1"} <= steps, f"job {j}: steps checked {steps}")
            s.cancel(j)
            s.wait_done(j)

            # LMK_NOTES set at submission reaches the job's processes.
            notes = {"app": "demo", "size": "128"}
            n = s.sbatch("#!/bin/sh\nsrun -n1 sleep 300 &\nsleep 300 &\nwait\n",
                         env={"LMK_NOTES": "app=demo:size=128"}, args=["-J", "lmk-notes"])
            s.wait_state(n, "RUNNING")
            pn = wait_pids(s, n, {"batch": ["slurm_script", "sleep"], "0": ["sleep"]})
            steps = c.job(n, pn, "root", 0, notes=notes)
            check({"batch", "0"} <= steps, f"job {n}: steps checked {steps}")
            s.cancel(n)
            s.wait_done(n)

            # Still outside after all that.
            o = probe(job_probe, [outside.pid])[outside.pid]
            check(o["cgroup"]["rc"] == 0 and o["environ"]["rc"] == 0,
                  f"process outside Slurm maps to a job: {o}")
            log(f"OK: {c.checked} job processes mapped to their job and step ({mode} mode)")
    finally:
        outside.kill()
        outside.wait()


if __name__ == "__main__":
    main()
