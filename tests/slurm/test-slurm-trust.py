#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""No user puts samples or notes into another user's job, nor owns a job
before it starts (docs/slurm.md, "Trust").

A real Slurm in linuxproc mode (no job cgroups: only slurmstepd's process
tree and lmk's Prolog/Epilog notices tell lmkd whose a job is) runs a job of
user nobody, under a real lmkd (BPF sampler) pushing to a real lmk-store.
A second unprivileged user, made for the test, runs busy processes outside
Slurm whose environments claim the job:
  - before the job exists, with the id Slurm is about to give it,
    SLURM_JOB_USER=mallory and LMK_NOTES (owning a job before it starts);
  - while it runs, without SLURM_JOB_UID, and with a forged SLURM_JOB_UID
    and SLURM_JOB_USER naming the job's user;
  - with an id no job has, SLURM_JOB_USER=mallory.
A root process outside Slurm claims the job too (root is not its user).
lmkd's report and the store must show the job as nobody's with nobody's
notes only and the victim's own samples; none of the intruders' samples or
notes in it; every intruder's samples kept outside any job under its own
user; and no job at all for the id no job has.

Usage: test-slurm-trust.py LMK_NOTIFY SLURM_DIR
"""
import os
import pwd
import subprocess
import sys
import time

import lmktest
import slurm
import storetest
from e2etest import Lmkd
from lmktest import check, log, require_bpf, tmpdir

INTRUDER = "lmkintruder"
# the system's Python: one of root's own (pyenv) is not for other users
PYTHON = "/usr/bin/python3"
VICTIM = "nobody"

# A busy process under a name of its own (its comm), for the seconds given
# (0: until killed).
SPIN = """import sys, time
with open("/proc/self/comm", "w") as f:
    f.write(sys.argv[1])
end = time.monotonic() + float(sys.argv[2]) if float(sys.argv[2]) > 0 else float("inf")
while time.monotonic() < end:
    pass
"""


def make_user(name):
    """The intruder: a system user of its own, made when missing."""
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       check=True, capture_output=True)
        return pwd.getpwnam(name)


def spin(spin_py, comm, env, pw=None):
    """A busy process outside Slurm, as pw (root if None), with only env
    (and PATH) in its environment."""
    def drop():
        os.setgid(pw.pw_gid)
        os.setgroups([])
        os.setuid(pw.pw_uid)

    return subprocess.Popen([PYTHON, spin_py, comm, "0"], env={"PATH": "/usr/bin:/bin", **env},
                            preexec_fn=drop if pw else None, cwd="/", stdout=subprocess.DEVNULL)


def main():
    notify, slurm_dir = sys.argv[1], sys.argv[2]
    require_bpf()
    slurm.require_slurm()
    if not os.access(PYTHON, os.X_OK):
        lmktest.skip(f"{PYTHON} is missing: the unprivileged users' processes need it")
    intruder = make_user(INTRUDER)
    victim = pwd.getpwnam(VICTIM)
    d = tmpdir()
    os.chmod(d, 0o755)
    sock = os.path.join(d, "lmkd.sock")
    intruders = {}
    with storetest.Store() as store, slurm.Slurm(
            mode="linuxproc", prolog=os.path.join(slurm_dir, "lmk-prolog"),
            epilog=os.path.join(slurm_dir, "lmk-epilog"),
            script_env={"LMK_NOTIFY": notify, "LMK_SOCKET": sock}) as s:
        spin_py = os.path.join(s.workdir(), "spin.py")
        with open(spin_py, "w") as f:
            f.write(SPIN)
        os.chmod(spin_py, 0o644)
        lmkd = Lmkd(d, store, interval=1, hz=99, notify_socket=sock).start()
        try:
            # the id Slurm gives the next job, and one it gives none here
            job, unseen = str(s.first_job_id), str(s.first_job_id + 5000000)
            intruders["lmk-early"] = spin(spin_py, "lmk-early", {
                "SLURM_JOB_ID": job, "SLURM_JOB_USER": "mallory", "LMK_NOTES": "stolen=early"}, intruder)
            intruders["lmk-unseen"] = spin(spin_py, "lmk-unseen", {
                "SLURM_JOB_ID": unseen, "SLURM_JOB_USER": "mallory", "SLURM_JOB_UID": str(intruder.pw_uid),
                "LMK_NOTES": "stolen=unseen"}, intruder)
            # pushed intervals of their own before the job exists: what lmkd
            # made of their claims reaches the store first
            time.sleep(3)
            got = s.sbatch(f"#!/bin/sh\nexec {PYTHON} {spin_py} lmk-victim 6\n", user=VICTIM,
                           env={"LMK_NOTES": "owner=victim"}, args=["--job-name=victim"])
            check(got == job, f"Slurm gave job {got}, not the {job} claimed beforehand")
            s.wait_state(job, "RUNNING")
            intruders["lmk-during"] = spin(spin_py, "lmk-during", {
                "SLURM_JOB_ID": job, "SLURM_JOB_USER": "mallory", "LMK_NOTES": "stolen=during"}, intruder)
            intruders["lmk-forged"] = spin(spin_py, "lmk-forged", {
                "SLURM_JOB_ID": job, "SLURM_JOB_USER": VICTIM, "SLURM_JOB_UID": str(victim.pw_uid),
                "LMK_NOTES": "stolen=forged"}, intruder)
            intruders["lmk-root"] = spin(spin_py, "lmk-root", {
                "SLURM_JOB_ID": job, "LMK_NOTES": "stolen=root"})
            s.wait_done(job, timeout=90)
            check(s.job_state(job) == "COMPLETED", f"job {job}: {s.job_state(job)}\n{s.output(job)}")
            time.sleep(2.5)  # the epilog's notice and the last interval
        finally:
            for p in intruders.values():
                p.kill()
                p.wait()
            lmkd.stop()
        rep = lmkd.report()
        status, _, stored = store.get(f"/api/v1/jobs/{job}")
        status_unseen, _, _ = store.get(f"/api/v1/jobs/{unseen}")

    rows = [r for r in rep["rows"] if r["job"] == job]
    by_comm = {}
    for r in rows:
        by_comm[(r["comm"], r["uid"])] = by_comm.get((r["comm"], r["uid"]), 0) + r["samples"]
    log(f"job {job}: rows by (comm, uid): {by_comm}")
    jobs = {j["job"]: j for j in rep["jobs"]}
    log(f"job {job} in the store: {status} "
        f"{stored if status != 200 else {k: stored.get(k) for k in ('user', 'notes', 'samples', 'metadata_conflicts')}}")

    # the victim's job holds the victim's work, and none of the intruders'
    victim_samples = sum(n for (comm, uid), n in by_comm.items() if comm == "lmk-victim" and uid == victim.pw_uid)
    check(victim_samples >= 50, f"job {job} has only {victim_samples} samples of its own program")
    stolen = {k: n for k, n in by_comm.items() if k[0] in intruders or k[1] == intruder.pw_uid}
    check(not stolen, f"samples of processes outside the job landed in it: {stolen}")

    # no job, under any name, for an id only an environment claimed
    check(unseen not in jobs and not any(r["job"] == unseen for r in rep["rows"]),
          f"lmkd made job {unseen} from an environment: {jobs.get(unseen)}")
    check(status_unseen == 404, f"the store knows job {unseen}: {status_unseen}")

    # the job's owner and notes as every batch told the store (its first
    # claim stands there, and lmkd's report lists only the last interval's
    # jobs)
    check(status == 200, f"GET /api/v1/jobs/{job}: {status} {stored}")
    check(stored["user"] == VICTIM, f"the store has job {job} as {stored['user']}'s")
    check(stored["notes"] == {"owner": "victim"}, f"job {job}'s notes in the store: {stored['notes']}")
    check(stored["metadata_conflicts"] == 0, f"batches claimed other metadata for job {job}")
    check(stored["samples"] == sum(by_comm.values()), f"the store has {stored['samples']} samples of job {job}, "
          f"lmkd {sum(by_comm.values())}")

    # the intruders' work is kept, outside any job, under its own user
    for comm in intruders:
        own = sum(r["samples"] for r in rep["rows"] if r["comm"] == comm and r["job"] is None)
        uids = {r["uid"] for r in rep["rows"] if r["comm"] == comm}
        log(f"{comm}: {own} samples outside any job, uids {uids}")
        check(own >= 20, f"{comm}: only {own} samples outside jobs (work outside jobs is never dropped)")
        check(uids == {0 if comm == "lmk-root" else intruder.pw_uid}, f"{comm}: rows of uids {uids}")
    log("PASS")


if __name__ == "__main__":
    main()
