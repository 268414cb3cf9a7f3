#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The C++ and Fortran examples' phases appear in lmkd's output, compute above io.
"""
import json
import os
import subprocess
import sys

from lmktest import build_path, check, log, require_bpf, skip, tmpdir
from phasetest import job_env, phase_samples, start_lmkd, stop_lmkd


def main():
    require_bpf()
    progs = [p for p in ("example-cpp", "example-fortran") if os.path.exists(build_path("liblmk", p))]
    if len(progs) < 2:
        skip(f"only {progs} built: C++ (g++) or Fortran (gfortran) compiler missing")
    d = tmpdir()
    lmkd, out = start_lmkd(d)
    truth = {}
    try:
        for p in progs:
            r = subprocess.run([build_path("liblmk", p), "3"], capture_output=True, text=True, check=True, timeout=60,
                               env=job_env())
            truth[p] = json.loads(r.stdout)
    finally:
        rep = stop_lmkd(lmkd, out)
    for p in progs:
        got = phase_samples(rep, p[:15])
        n = sum(got.values())
        log(f"{p}: truth {truth[p]}, lmkd {got}")
        c, i = got.get("timestep/compute", 0), got.get("timestep/io", 0)
        # the samples due for the CPU time the example says it had: on a
        # busy machine a 3 s run may get much less than 3 s of CPU
        due = (truth[p]["compute_s"] + truth[p]["io_s"]) * 199
        check(n >= 0.7 * due and n > 50 and c > 0 and i > 0,
              f"{p}: phases missing from lmkd's report: {got} ({due:.0f} samples due)")
        # The examples run fixed 2 ms + 1 ms rounds, which a fixed sampling
        # period can beat with (test-shares measures shares with random
        # rounds); here the order must hold.
        check(c > i, f"{p}: compute:io {c}:{i}, the example spends 2:1")
    log("PASS")


if __name__ == "__main__":
    main()
