#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A marker in a tight loop switches itself off; the program runs on; lmkd says which.
"""
from lmktest import check, log, require_bpf, tmpdir
from phasetest import phase_samples, run_marked, start_lmkd, stop_lmkd


def main():
    require_bpf()
    d = tmpdir()
    lmkd, out = start_lmkd(d)
    try:
        truth = run_marked(1, 3, hot=True)
    finally:
        rep = stop_lmkd(lmkd, out)
    log(f"workload: {truth}; lmkd markers: {rep['markers']}")
    check(truth["hot_state"] == 1, f"liblmk did not switch 'hot' off for rate: state {truth['hot_state']}")
    offs = [m for m in rep["markers"] if m["comm"] == "lmk-marked"]
    check(any(m["phase"] == "hot" and m["state"] == "off-rate" for m in offs),
          f"lmkd's report does not name the switched-off marker: {rep['markers']}")
    check(all(m["phase"] == "hot" for m in offs), f"other markers reported off: {offs}")
    got = phase_samples(rep, "lmk-marked")
    check(got.get("timestep/solve", 0) > 0, f"the other phases stopped: {got}")
    log("PASS")


if __name__ == "__main__":
    main()
