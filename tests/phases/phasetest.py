# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers of the phase tests: run lmkd around a marked workload."""
import json
import os
import signal
import subprocess
import time

from lmktest import build_path, check, job_notice, load_json, log, tmpdir, wait_ready

LIBLMK = build_path("liblmk", "liblmk.so.1")


def start_lmkd(d, hz=199, extra=()):
    """lmkd, told (as a job's Prolog would) that this test's job runs here."""
    out = os.path.join(d, "lmkd.json")
    ready = os.path.join(d, "ready")
    sock = os.path.join(d, "lmkd.sock")
    cmd = [build_path("daemon", "lmkd"), "-F", str(hz), "--jitter", "20", "--events", "none",
           "--liblmk", LIBLMK, "--notify-socket", sock, "-o", out, "--ready-file", ready, *extra]
    log("+", " ".join(cmd))
    p = subprocess.Popen(cmd)
    wait_ready(ready, proc=p)
    job_notice(sock, "job-start", JOB)
    return p, out


def stop_lmkd(p, out):
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)
    check(p.returncode == 0, f"lmkd exited with {p.returncode}")
    return load_json(out)


# The workload runs as a job of its own, named by this test's pid: lmkd
# samples every CPU, and any other lmk-marked still running (another
# test's Slurm job, a user's) must not count as this test's. Its
# SLURM_JOB_ID counts because start_lmkd() sends the job's notice, as a
# site's Prolog does.
JOB = str(os.getpid())


def job_env():
    return dict(os.environ, SLURM_JOB_ID=JOB)


def phase_samples(rep, comm):
    """samples per phase path of comm's rows in this test's job"""
    by = {}
    for r in rep["rows"]:
        if r["comm"] == comm and r["job"] == JOB:
            by[r["phase"]] = by.get(r["phase"], 0) + r["samples"]
    return by


def run_marked(threads, seconds, hot=False):
    cmd = [build_path("tests", "phases", "lmk-marked"), str(threads), str(seconds)] + (["hot"] if hot else [])
    p = subprocess.run(cmd, capture_output=True, text=True, check=True, timeout=seconds * 10, env=job_env())
    return json.loads(p.stdout)
