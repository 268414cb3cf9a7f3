#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmkd started after the workload registered its phases still attributes them.

The workload's liblmk announced itself before any lmkd ran, so lmkd must
find it in /proc, read liblmk's descriptor and region table from the
process's memory, and from then on every sample carries the phase.
"""
import json
import subprocess
import time

from lmktest import build_path, check, log, require_bpf, tmpdir
from phasetest import job_env, phase_samples, start_lmkd, stop_lmkd


def main():
    require_bpf()
    d = tmpdir()
    wl = subprocess.Popen([build_path("tests", "phases", "lmk-marked"), "2", "10"], stdout=subprocess.PIPE, text=True,
                          env=job_env())
    time.sleep(2)  # registered and running before lmkd exists
    lmkd, out = start_lmkd(d)
    time.sleep(5)
    rep = stop_lmkd(lmkd, out)
    truth = json.loads(wl.communicate(timeout=60)[0])
    check(wl.returncode == 0, "lmk-marked failed")
    got = phase_samples(rep, "lmk-marked")
    n = sum(got.values())
    log(f"{n} samples of lmk-marked by phase: {got}")
    marked_share = 100.0 * (truth["solve_ns"] + truth["io_ns"]) / (truth["solve_ns"] + truth["io_ns"] + truth["unmarked_ns"])
    mine = 100.0 * (got.get("timestep/solve", 0) + got.get("timestep/io", 0)) / max(n, 1)
    log(f"marked share: truth {marked_share:.1f}%, lmkd {mine:.1f}%")
    # At 199 Hz for 5 s the workload's two threads are due ~2,000 samples
    # when they have both CPUs; a busy machine gives them fewer. The bound
    # follows the count: 4 points, or 3 standard errors of the share.
    check(n >= 200, f"only {n} samples")
    p = marked_share / 100.0
    tol = max(4.0, 300.0 * (p * (1 - p) / n) ** 0.5)
    check(abs(mine - marked_share) <= tol,
          f"phases of a process older than lmkd: {mine:.1f}% vs {marked_share:.1f}% (bound {tol:.1f} points at {n} samples)")
    check(not any(p.startswith("#") or "/#" in p for p in got), f"phase names not learned: {got}")
    log("PASS")


if __name__ == "__main__":
    main()
