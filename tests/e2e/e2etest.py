# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers of the end-to-end tests: lmk-store (tests/store/storetest.py),
lmkd pushing to it, and a real Slurm (tests/lib/slurm.py)."""
import os
import signal
import subprocess
import time

import storetest
from lmktest import build_path, check, fail, load_json, log, wait_ready


def node_token_file(d):
    path = os.path.join(d, "node.token")
    with open(path, "w") as f:
        f.write(storetest.NODE_TOKEN + "\n")
    os.chmod(path, 0o600)
    return path


class Lmkd:
    """lmkd pushing to a store every interval seconds, keeping a report of
    all intervals (its own view of the run) in report.json."""

    def __init__(self, d, store, interval=2, hz=99, notify_socket=None, events="none", extra=(), spool=None,
                 env=None, log_path=None):
        self.d = d
        self.out = os.path.join(d, "report.json")
        self.spool = spool or os.path.join(d, "spool")
        # what lmkd says goes there (appended across restarts) when given
        self.env = env
        self.log_path = log_path
        self.metrics = os.path.join(d, "lmkd.prom")
        self.cmd = [build_path("daemon", "lmkd"), "-F", str(hz), "--store", store.url(),
                    "--token-file", node_token_file(d), "--push-interval", str(interval),
                    "--spool", self.spool, "--metrics-file", self.metrics, "--node-name", "node-e2e",
                    "--liblmk", build_path("liblmk", "liblmk.so.1"), "--events", events,
                    "--notify-socket", notify_socket or "none", "-o", self.out, *extra]
        self.proc = None

    def start(self):
        ready = os.path.join(self.d, "ready")
        if os.path.exists(ready):
            os.unlink(ready)
        log("+", " ".join(self.cmd))
        err = open(self.log_path, "ab") if self.log_path else None
        env = dict(os.environ, **self.env) if self.env else None
        self.proc = subprocess.Popen(self.cmd + ["--ready-file", ready], stderr=err, env=env)
        if err:
            err.close()
        wait_ready(ready, proc=self.proc)
        return self

    def read_log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        self.proc.wait(timeout=60)
        if sig == signal.SIGTERM:
            check(self.proc.returncode == 0, f"lmkd exited with {self.proc.returncode}")

    def report(self):
        return load_json(self.out)

    def metric(self, name):
        with open(self.metrics) as f:
            for line in f:
                if line.startswith(name + " ") or line.startswith(name + "{"):
                    return int(line.split()[-1])
        fail(f"no metric {name} in {self.metrics}")


def wait_for(cond, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.2)
    fail(f"timed out waiting for {what}")


def job_rows(rep, job):
    return [r for r in rep["rows"] if r["job"] == job]


def sums(rows, key):
    out = {}
    for r in rows:
        out[r[key]] = out.get(r[key], 0) + r["samples"]
    return out
