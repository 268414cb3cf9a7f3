#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A program rebuilt in place between its run and lmkd's naming is never
given the new build's names.

    test-functions-rebuilt.py PROGRAM REBUILT

PROGRAM and REBUILT are lmk-func-hot built twice: REBUILT has other code,
another build-id and its functions named "..._v2". Four copies of PROGRAM
run for two seconds in one job under lmkd (one-shot report); then, before
lmkd names anything (when it stops):
  app1 exited and is replaced as a linker does (a new file renamed over it)
  app2 exited and is rewritten in place (cp: the same inode, new bytes)
  app3 still runs (sleeping) and is replaced as app1
  app4 exited and stays
lmkd must leave app1's and app2's offsets unnamed with PROGRAM's build-id
(for the store to name from that build's debug info), name app3 with
PROGRAM's names through /proc/PID/map_files, name app4, and name nothing
"_v2".
"""
import os
import shutil
import signal
import subprocess
import sys
import time

import functest
from lmktest import check, log, report_functions, require_bpf

JOB = "930002"


def build_id(path):
    """The GNU build-id note of path, as lower-case hex (readelf -n)."""
    out = subprocess.run(["readelf", "-n", path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        if "Build ID:" in line:
            return line.split("Build ID:")[1].strip()
    return None


def replace_like_a_linker(path, new):
    tmp = path + ".new"
    shutil.copy(new, tmp)
    os.chmod(tmp, 0o755)
    os.rename(tmp, path)


def rewrite_in_place(path, new):
    with open(new, "rb") as src, open(path, "r+b") as dst:
        data = src.read()
        dst.truncate(0)
        dst.write(data)


def main():
    prog, rebuilt = sys.argv[1], sys.argv[2]
    require_bpf()
    old, new = build_id(prog), build_id(rebuilt)
    check(old and new and old != new, f"the two builds need two build-ids: {old} {new}")
    run = functest.Run(extra=["--poll-ms", "100"], perf=False)
    apps = {}
    for name in ("app1", "app2", "app3", "app4"):
        apps[name] = os.path.join(run.d, name)
        shutil.copy(prog, apps[name])
        os.chmod(apps[name], 0o755)
    env = dict(os.environ, SLURM_JOB_ID=JOB)
    live = None
    try:
        run.notice("job-start", JOB)
        live = subprocess.Popen([apps["app3"], "2", "--then-sleep"], env=env)
        for pair in (("app1", "app2"), ("app4",)):
            ps = [subprocess.Popen([apps[n], "2"], env=env) for n in pair]
            for p in ps:
                check(p.wait(timeout=60) == 0, f"{p.args} failed")
        # lmkd has attributed the runs' samples (it polls every 0.1 s)
        # and read the build it sampled
        time.sleep(2)
        replace_like_a_linker(apps["app1"], rebuilt)
        rewrite_in_place(apps["app2"], rebuilt)
        replace_like_a_linker(apps["app3"], rebuilt)
        check(live.poll() is None, "app3 ended before lmkd could name its functions")
        rep = run.stop()
    finally:
        if live:
            live.send_signal(signal.SIGKILL)
            live.wait()

    fs = [f for f in report_functions(rep) if f["job"] == JOB]
    for f in fs:
        log(f"{os.path.basename(f['object'])} {f['build_id']} {f['function'] or f['offset'] or 'other'} "
            f"{f['samples']}")
    check(not any(f["function"] and f["function"].endswith("_v2") for f in fs),
          "a function was named from the rebuilt program")
    check(not any(f["build_id"] == new for f in fs), "a function carries the rebuilt program's build-id")
    rows = {os.path.basename(r["object"]): r for r in rep["rows"] if r["job"] == JOB and r["kind"] == "exe"}
    for name in ("app1", "app2"):
        mine = [f for f in fs if os.path.basename(f["object"]) == name]
        check(mine, f"{name}: no functions")
        check(rows[name]["build_id"] == old, f"{name}: sampled as build {rows[name]['build_id']}, not {old}")
        check(all(f["function"] is None for f in mine), f"{name}: named after it was rebuilt: {mine}")
        unnamed = sum(f["samples"] for f in mine if f["offset"] is not None)
        check(all(f["build_id"] == old for f in mine if f["offset"] is not None),
              f"{name}: an unnamed offset without the sampled build-id")
        check(unnamed >= 0.99 * sum(f["samples"] for f in mine),
              f"{name}: its offsets should wait for the store with build-id {old}")
    for name in ("app3", "app4"):
        functest.check_named(rep, JOB, name)
        check(any(f["function"] == "kernel_alpha" for f in fs if os.path.basename(f["object"]) == name),
              f"{name}: kernel_alpha not named")
    log("PASS")


if __name__ == "__main__":
    main()
