#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Burst sampling: rates at a code location from samples 1 ms apart.

With --burst 1, every sample starts a burst of three more samples of the
same thread, 1 ms apart, whose windows give rates at that location. With
task-clock in the "cycles" role, a CPU-bound thread's burst rate must be one
second of task-clock per second (within 5%); without --burst, no bursts.
"""
import os
import signal
import subprocess

from lmktest import build_path, check, load_json, log, require_bpf, tmpdir, wait_ready

HZ = 49


def run(d, burst):
    out, ready = os.path.join(d, f"lmkd-{burst}.json"), os.path.join(d, f"ready-{burst}")
    lmkd = subprocess.Popen([build_path("daemon", "lmkd"), "-F", str(HZ), "--burst", str(burst),
                             "--events", "cycles=task-clock,instructions=page-faults", "-o", out,
                             "--ready-file", ready])
    wait_ready(ready, proc=lmkd)
    try:
        subprocess.run([build_path("tests", "sampler", "lmk-workload"), "1", "3"], check=True,
                       stdout=subprocess.DEVNULL)
    finally:
        lmkd.send_signal(signal.SIGINT)
        lmkd.wait(timeout=60)
    check(lmkd.returncode == 0, f"lmkd exited with {lmkd.returncode}")
    return load_json(out)


def main():
    require_bpf()
    d = tmpdir()
    rep = run(d, 0)
    check(rep["lmkd"]["burst_samples"] == 0 and not any("burst" in r for r in rep["rows"]),
          "bursts without --burst")

    rep = run(d, 1)
    rows = [r for r in rep["rows"] if r["comm"] == "lmk-workload" and "burst" in r]
    samples = sum(r["samples"] for r in rep["rows"] if r["comm"] == "lmk-workload")
    bursts = sum(r["burst"]["samples"] for r in rows)
    window = sum(r["burst"]["window_ns"] for r in rows)
    clock = sum(r["burst"]["per_second"]["cycles"] * r["burst"]["window_ns"] / 1e9 for r in rows)
    rate = clock / (window / 1e9)
    log(f"{samples} samples, {bursts} burst samples over {window / 1e6:.1f} ms; task-clock rate {rate:.3f} s/s")
    for r in rows[:4]:
        log(f"  {os.path.basename(r['object'])}: {r['burst']}")
    check(bursts >= 1.5 * samples, f"only {bursts} burst samples after {samples} samples (3 each)")
    # the first window of a burst runs from the sample to the 1 kHz event's
    # next tick (0.5 ms on average), the two after it 1 ms each
    check(0.7e6 <= window / bursts <= 1.1e6, f"burst windows of {window / bursts / 1e6:.2f} ms on average, not ~0.83")
    check(abs(rate - 1e9) <= 0.05e9, f"a busy thread's task-clock rate is {rate / 1e9:.3f} s/s, not 1")
    log("PASS")


if __name__ == "__main__":
    main()
