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
"""
import os
import signal
import subprocess

from lmktest import build_path, check, job_notice, load_json, log, require_bpf, tmpdir, wait_ready

HZ = 2
N = 8
MS = 1200
JOB = str(os.getpid())


def main():
    require_bpf()
    d = tmpdir()
    out, ready, sock = (os.path.join(d, n) for n in ("lmkd.json", "ready", "lmkd.sock"))
    cmd = [build_path("daemon", "lmkd"), "-F", str(HZ), "--events", "none", "--notify-socket", sock,
           "-o", out, "--ready-file", ready]
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


if __name__ == "__main__":
    main()
