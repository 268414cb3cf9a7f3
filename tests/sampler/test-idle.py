#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""An idle machine: lmkd's sample count and idle share, referee'd by /proc/stat.

Total samples must be CPUs x Hz x seconds within 5% (idle CPUs included,
whether or not the kernel samples them), and the [idle] share must be
within 5 percentage points of the idle time the kernel accounted.
"""
import os

from lmktest import check, lmkd_oneshot, load_json, log, ncpus, require_bpf, tmpdir

HZ = 99
SECONDS = 5


def cpu_times():
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + fields[4]          # idle + iowait
    total = sum(fields[:8])               # without guest time, which is already in user
    return idle, total


def main():
    require_bpf()
    d = tmpdir()
    out = os.path.join(d, "lmkd.json")
    i0, t0 = cpu_times()
    lmkd = lmkd_oneshot(HZ, SECONDS, out)
    lmkd.wait(timeout=SECONDS + 60)
    i1, t1 = cpu_times()
    check(lmkd.returncode == 0, f"lmkd exited with {lmkd.returncode}")

    rep = load_json(out)
    n = rep["cpus"]
    check(n == ncpus(), f"report says {n} CPUs, the machine has {ncpus()} online")
    expected = n * HZ * rep["duration_s"]
    total = rep["samples_total"]
    idle = sum(r["samples"] for r in rep["rows"] if r["kind"] == "idle")
    idle_rows = [r for r in rep["rows"] if r["kind"] == "idle"]
    check(all(r["object"] == "[idle]" for r in idle_rows), f"idle rows not named [idle]: {idle_rows}")
    share = 100.0 * idle / total
    ref = 100.0 * (i1 - i0) / (t1 - t0)
    log(f"samples {total} (expected {expected:.0f}), idle {share:.1f}% (/proc/stat {ref:.1f}%), "
        f"synthesized {rep['samples_idle_synthesized']}")
    check(abs(total - expected) <= 0.05 * expected, f"{total} samples, expected {expected:.0f} +-5%")
    check(abs(share - ref) <= 5.0, f"idle share {share:.1f}% vs /proc/stat {ref:.1f}%")
    log("PASS")


if __name__ == "__main__":
    main()
