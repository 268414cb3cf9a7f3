# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers of the phase tests: run lmkd around a marked workload."""
import json
import os
import signal
import subprocess
import time

from lmktest import build_path, check, load_json, log, tmpdir, wait_ready

LIBLMK = build_path("liblmk", "liblmk.so.1")


def start_lmkd(d, hz=199, extra=()):
    out = os.path.join(d, "lmkd.json")
    ready = os.path.join(d, "ready")
    cmd = [build_path("daemon", "lmkd"), "-F", str(hz), "--jitter", "20", "--events", "none",
           "--liblmk", LIBLMK, "-o", out, "--ready-file", ready, *extra]
    log("+", " ".join(cmd))
    p = subprocess.Popen(cmd)
    wait_ready(ready, proc=p)
    return p, out


def stop_lmkd(p, out):
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)
    check(p.returncode == 0, f"lmkd exited with {p.returncode}")
    return load_json(out)


# The workload runs as a job of its own, named by this test's pid: lmkd
# samples every CPU, and any other lmk-marked still running (another
# test's Slurm job, a user's) must not count as this test's.
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
