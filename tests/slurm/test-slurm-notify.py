#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""slurm/lmk-prolog and slurm/lmk-epilog as a real slurmd's Prolog/Epilog:
each job's start and end reach a listener on lmkd's socket as notices that
collectors/job-notify.c parses (through job-probe --notice) to the right job
and user; and with nobody listening, jobs still run and the node stays up.

Usage: test-slurm-notify.py MODE JOB_PROBE LMK_NOTIFY SLURM_DIR
"""
import os
import shutil
import socket
import subprocess
import sys
import time

import lmktest
import slurm
from lmktest import check, log


def main():
    mode, job_probe, lmk_notify, slurm_dir = sys.argv[1:5]
    slurm.require_slurm()
    d = lmktest.tmpdir("lmk-notify-")
    path = os.path.join(d, "lmkd.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    try:
        with slurm.Slurm(mode=mode,
                         prolog=os.path.join(slurm_dir, "lmk-prolog"),
                         epilog=os.path.join(slurm_dir, "lmk-epilog"),
                         script_env={"LMK_NOTIFY": lmk_notify, "LMK_SOCKET": path}) as s:
            j = s.sbatch("#!/bin/sh\nsleep 1\n", args=["-J", "notified job"], user="nobody")
            check(s.wait_done(j) == "COMPLETED", f"job {j} did not complete")
            got = slurm.receive_notices(sock, job_probe, j, ("job-start", "job-end"))
            meta = s.show_job(j)
            for ev, n in got.items():
                info = n["info"]
                check(info["user"] == "nobody" and info["uid"] == 65534,
                      f"{ev} of job {j}: user {info['user']}({info['uid']}), expected nobody(65534)")
                check(info["partition"] == meta["Partition"], f"{ev}: partition {info['partition']}")
                check(info["cluster"] == "lmktest", f"{ev}: cluster {info['cluster']}")
                check(info["nodes"] == 1, f"{ev}: nodes {info['nodes']}")

            # Nobody listening: the Prolog and Epilog must not fail the job or
            # drain the node.
            sock.close()
            os.unlink(path)
            k = s.sbatch("#!/bin/sh\ntrue\n")
            check(s.wait_done(k) == "COMPLETED", f"job {k} without lmkd: {s.job_state(k)}")
            check(s.show_job(k).get("ExitCode") == "0:0", f"job {k}: {s.show_job(k).get('ExitCode')}")
            k2 = s.sbatch("#!/bin/sh\ntrue\n")
            check(s.wait_done(k2) == "COMPLETED", f"second job without lmkd: {s.job_state(k2)}")
            state = s.run(["sinfo", "-h", "-n", s.node, "-o", "%t"]).stdout.strip()
            check(state == "idle", f"node is {state!r} after jobs without lmkd, expected idle")
            log(f"OK: job {j} notices arrived, jobs {k} and {k2} ran without lmkd")
    finally:
        sock.close()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
