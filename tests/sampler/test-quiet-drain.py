#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A quiet lmkd still reads a job's new processes while they live.

While the processes it samples are ones it has read, lmkd drains its rings
only every --quiet-poll-ms (10 s by default): on a quiet node a wakeup costs
more than the few samples it collects. A sample of a process lmkd has not
read wakes it (at most every --poll-ms), so that it reads the process's job
from /proc before the process is gone. lmkd samples at 2 Hz here, where a
quarter of its ring takes far longer than 10 s to fill; 8 processes of a
job, each 1.2 s of CPU in liblmktest-a and gone long before the quiet
timer, must have >= 90% of their samples in their job's rows (without the
wakeup their samples fall outside any job: seen with it disabled).

Then lmkd's drains are counted by the WATCHDOG=1 it sends a service
manager's socket after each (NOTIFY_SOCKET): over 12 s of an idle 1 Hz
lmkd, at most 3 with the default, at least 10 with --quiet-poll-ms 1000;
and under a 2 s watchdog (WATCHDOG_USEC) it drains at least every second
whatever --quiet-poll-ms says.
"""
import os
import signal
import socket
import subprocess
import time

from lmktest import build_path, check, job_notice, load_json, log, require_bpf, tmpdir, wait_ready

HZ = 2
N = 8
MS = 1200
JOB = str(os.getpid())
QUIET = "30000"


def main():
    require_bpf()
    d = tmpdir()
    out, ready, sock = (os.path.join(d, n) for n in ("lmkd.json", "ready", "lmkd.sock"))
    cmd = [build_path("daemon", "lmkd"), "-F", str(HZ), "--events", "none", "--notify-socket", sock,
           "-o", out, "--ready-file", ready, "--quiet-poll-ms", QUIET]
    log("+", " ".join(cmd))
    lmkd = subprocess.Popen(cmd)
    try:
        wait_ready(ready, proc=lmkd)
        job_notice(sock, "job-start", JOB)
        prog = build_path("tests", "sampler", "lmk-shortproc")
        for _ in range(N):
            subprocess.run([prog, str(MS)], check=True, env=dict(os.environ, SLURM_JOB_ID=JOB))
    finally:
        lmkd.send_signal(signal.SIGINT)
        lmkd.wait(timeout=60)
    check(lmkd.returncode == 0, f"lmkd exited with {lmkd.returncode}")
    rep = load_json(out)
    rows = [r for r in rep["rows"] if r["comm"] == "lmk-shortproc"]
    total = sum(r["samples"] for r in rows)
    in_job = sum(r["samples"] for r in rows if r["job"] == JOB)
    log(f"lmk-shortproc: {total} samples, {in_job} of them in job {JOB}; "
        f"outside: {sorted({r['job'] for r in rows if r['job'] != JOB})}")
    expected = N * MS / 1000 * HZ
    check(total >= 0.5 * expected, f"only {total} samples of lmk-shortproc, about {expected:.0f} expected")
    check(in_job >= 0.9 * total, f"only {in_job} of {total} samples of the job's short processes are in the job: "
          "lmkd read them after they were gone")


def drains(d, seconds, extra=(), env=None):
    """WATCHDOG=1 messages of an idle 1 Hz lmkd over seconds after its start"""
    path = os.path.join(d, f"notify-{len(os.listdir(d))}")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(0.2)
    ready = path + ".ready"
    cmd = [build_path("daemon", "lmkd"), "-F", "1", "--events", "none", "--notify-socket", "none",
           "--ready-file", ready, "-o", os.devnull, *extra]
    log("+", " ".join(cmd))
    lmkd = subprocess.Popen(cmd, env=dict(os.environ, NOTIFY_SOCKET=path, **(env or {})))
    n = 0
    try:
        wait_ready(ready, proc=lmkd)
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                n += sock.recv(4096).decode().split("\n").count("WATCHDOG=1")
            except socket.timeout:
                pass
    finally:
        lmkd.send_signal(signal.SIGINT)
        lmkd.wait(timeout=60)
        sock.close()
    return n


def count_drains():
    d = tmpdir()
    quiet, busy = drains(d, 12, ["--quiet-poll-ms", QUIET]), drains(d, 12)
    watched = drains(d, 6, ["--quiet-poll-ms", QUIET], env={"WATCHDOG_USEC": "2000000"})
    log(f"drains of an idle lmkd at 1 Hz: {quiet} in 12 s with --quiet-poll-ms {QUIET}, {busy} by default, "
        f"{watched} in 6 s under a 2 s watchdog")
    check(quiet <= 3, f"an idle lmkd drained its rings {quiet} times in 12 s (every 30 s expected)")
    check(busy >= 10, f"by default (every --poll-ms) lmkd drained only {busy} times in 12 s")
    check(watched >= 4, f"under a 2 s watchdog lmkd told it only {watched} times in 6 s")


if __name__ == "__main__":
    main()
    count_drains()
