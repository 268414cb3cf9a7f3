#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""test-example.py EXAMPLE SECONDS [THREADS]: an example runs for about
SECONDS, spends its CPU time 2:1 in "compute" and "io" (what lmkd's phase
tests rely on), prints that as JSON, and does the same with LMK_DISABLE=1."""
import json
import os
import subprocess
import sys
import time

from lmktest import check, log


def run(cmd, env):
    start = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=60)
    took = time.monotonic() - start
    check(p.returncode == 0, f"{cmd} exited with {p.returncode}: {p.stderr}")
    log(f"{' '.join(cmd)} -> {p.stdout.strip()} in {took:.2f}s")
    return json.loads(p.stdout), took


def main():
    cmd = sys.argv[1:]
    seconds = float(cmd[1])
    threads = int(cmd[2]) if len(cmd) > 2 else 1

    for disable in ("0", "1"):
        env = dict(os.environ, LMK_DISABLE=disable)
        out, took = run(cmd, env)
        check(out["threads"] == threads, f"threads {out['threads']}, expected {threads}")
        check(out["timesteps"] > 0, "no timestep ran")
        check(seconds <= took < seconds + 10, f"ran {took:.2f}s for {seconds}s")
        ratio = out["compute_s"] / out["io_s"]
        check(1.8 <= ratio <= 2.2, f"compute:io is {ratio:.2f}, expected 2")
        # Each timestep's phases take 2 + 1 ms of CPU at least.
        per_step = (out["compute_s"] + out["io_s"]) / out["timesteps"]
        check(0.003 <= per_step < 0.006, f"{per_step * 1000:.2f} ms of phases per timestep")
    log("ok")


main()
