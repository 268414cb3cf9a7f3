#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmk.so (slurm/spank-lmk.c) in a real Slurm's plugstack.conf, jobs of an
unprivileged user: sbatch, srun and salloc take --lmk and --lmk-notes; the
plugin's job_prolog/job_epilog in slurmd send lmkd's notices (read by a
listener on the socket and collectors/job-notify.c through job-probe) with
what the user asked; bad values and a forbidden opt-out are errors at
submit; with nobody listening (and with "required") jobs behave as
docs/slurm.md says.

Usage: test-slurm-spank.py JOB_PROBE LMK_SO
"""
import os
import shutil
import socket
import sys
import time

import lmktest
import slurm
from lmktest import check, log


def plugstack(so, path, *args):
    return [f"required {so} socket={path} " + " ".join(args)]


def submit_fails(s, args, want):
    """sbatch with args is refused at submit, saying want."""
    r = s.run(["sbatch", "--parsable", f"--chdir={s.workdir()}", *args, "--wrap", "true"],
              user="nobody", check=False)
    check(r.returncode != 0, f"sbatch {args} was accepted: {r.stdout!r}")
    check(want in r.stderr, f"sbatch {args}: {r.stderr!r} does not say {want!r}")
    log(f"sbatch {' '.join(args)}: refused: {r.stderr.strip().splitlines()[0]}")


def job_named(s, name):
    out = s.run(["scontrol", "-o", "show", "job"]).stdout
    ids = [l.split()[0].split("=")[1] for l in out.splitlines() if f" JobName={name} " in l]
    check(len(ids) == 1, f"jobs named {name}: {ids}")
    return ids[0]


def wait_idle(s):
    """The node goes back to idle: no job failed its prolog or epilog."""
    end = time.monotonic() + 20
    while (state := s.run(["sinfo", "-h", "-n", s.node, "-o", "%t"]).stdout.strip()) != "idle":
        check(time.monotonic() < end and state in ("mix", "alloc", "comp"), f"node is {state!r}, not idle")
        time.sleep(0.5)


def main():
    job_probe, so = os.path.abspath(sys.argv[1]), slurm.require_spank(sys.argv[2])
    slurm.require_slurm()
    d = lmktest.tmpdir("lmk-spank-")
    os.chmod(d, 0o755)
    path = os.path.join(d, "lmkd.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    try:
        with slurm.Slurm(mode="linuxproc", plugstack=plugstack(so, path)) as s:
            # sbatch's --help lists the options
            h = s.run(["sbatch", "--help"], user="nobody").stdout
            check("--lmk=on|off|nocounters" in h and "--lmk-notes=" in h, f"sbatch --help: {h[-600:]}")

            off = s.sbatch("#!/bin/sh\nsleep 1\n", user="nobody",
                           args=["--lmk=off", "--lmk-notes=app=secret:size=3"])
            plain = s.sbatch("#!/bin/sh\nsleep 1\n", user="nobody")
            noc = s.sbatch("#!/bin/sh\nsleep 1\n", user="nobody", args=["--lmk=nocounters"])
            for j in (off, plain, noc):
                check(s.wait_done(j) == "COMPLETED", f"job {j}: {s.job_state(j)}")
            want = {off: ("off", {"app": "secret", "size": "3"}), plain: (None, {}), noc: ("nocounters", {})}
            stash = {}
            for j, (lmk, notes) in want.items():
                got = slurm.receive_notices(sock, job_probe, j, ("job-start", "job-end"), stash=stash)
                for ev, n in got.items():
                    info = n["info"]
                    check(info["uid"] == 65534 and info["user"] == "nobody", f"job {j} {ev}: {info}")
                    check(info["lmk"] == lmk, f"job {j} {ev}: lmk={info['lmk']}, expected {lmk}")
                    check(info["notes"] == notes, f"job {j} {ev}: notes {info['notes']}, expected {notes}")
            log(f"OK: notices of jobs {off} (off), {plain}, {noc} (nocounters) say what was asked")

            # srun and salloc take them too
            r = s.srun(["true"], args=["-J", "by-srun", "--lmk=nocounters", "--lmk-notes=via=srun"], user="nobody")
            check(r.returncode == 0, f"srun --lmk: {r.stderr}")
            r = s.run(["salloc", "-J", "by-salloc", "--lmk=off", "true"], user="nobody", check=False)
            check(r.returncode == 0, f"salloc --lmk=off: {r.stderr}")
            for name, lmk, notes in (("by-srun", "nocounters", {"via": "srun"}), ("by-salloc", "off", {})):
                j = job_named(s, name)
                got = slurm.receive_notices(sock, job_probe, j, ("job-start", "job-end"), stash=stash)
                for ev, n in got.items():
                    check((n["info"]["lmk"], n["info"]["notes"]) == (lmk, notes), f"{name} job {j} {ev}: {n}")
            log("OK: srun and salloc pass --lmk and --lmk-notes on")

            # mistakes are errors where the user typed them
            submit_fails(s, ["--lmk=of"], "expected on, off or nocounters")
            submit_fails(s, ["--lmk-notes=bad key=1"], "not key=value")
            wait_idle(s)

        # The site forbids opting out: sbatch says so, nothing is submitted;
        # --lmk=nocounters stays allowed.
        with slurm.Slurm(mode="linuxproc", plugstack=plugstack(so, path, "opt-out=forbidden")) as s:
            submit_fails(s, ["--lmk=off"], "does not allow switching lmk off")
            j = s.sbatch("#!/bin/sh\ntrue\n", user="nobody", args=["--lmk=nocounters"])
            check(s.wait_done(j) == "COMPLETED", f"job {j}: {s.job_state(j)}")
            got = slurm.receive_notices(sock, job_probe, j, ("job-start",))
            check(got["job-start"]["info"]["lmk"] == "nocounters", f"job {j}: {got}")
            log("OK: a forbidden opt-out is refused at submit")

        # Nobody listening: the job runs, the node stays up ...
        sock.close()
        os.unlink(path)
        with slurm.Slurm(mode="linuxproc", plugstack=[f"optional {so} socket={path}"]) as s:
            j = s.sbatch("#!/bin/sh\ntrue\n", user="nobody", args=["--lmk=off"])
            check(s.wait_done(j) == "COMPLETED", f"job {j} without lmkd: {s.job_state(j)}")
            check(s.show_job(j).get("ExitCode") == "0:0", f"job {j}: {s.show_job(j).get('ExitCode')}")
            wait_idle(s)
            log(f"OK: job {j} ran without lmkd")
        # ... also where Slurm itself requires the plugin (it loads) ...
        with slurm.Slurm(mode="linuxproc", plugstack=[f"required {so} socket={path}"]) as s:
            j = s.sbatch("#!/bin/sh\ntrue\n", user="nobody")
            check(s.wait_done(j) == "COMPLETED", f"job {j} without lmkd: {s.job_state(j)}")
            wait_idle(s)
        # ... unless the site made lmk "required" (in both places: Slurm
        # ignores what an optional plugin returns): then the prolog fails,
        # and Slurm holds the job and drains the node rather than run it
        # unmeasured.
        with slurm.Slurm(mode="linuxproc", plugstack=[f"required {so} socket={path} required"]) as s:
            j = s.sbatch("#!/bin/sh\ntrue\n", user="nobody")
            end = time.monotonic() + 30
            while (reason := s.show_job(j).get("Reason")) != "launch_failed_requeued_held":
                check(time.monotonic() < end and s.job_state(j) != "COMPLETED",
                      f"job {j} is {s.job_state(j)} ({reason}) although lmk is required and lmkd is down")
                time.sleep(0.5)
            node = s.run(["sinfo", "-h", "-n", s.node, "-o", "%t %E"]).stdout.strip()
            check(node.startswith("drain") and "Prolog error" in node, f"node: {node!r}")
            log(f"OK: with 'required' and no lmkd, job {j} is held and the node drained ({node})")
    finally:
        sock.close()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
