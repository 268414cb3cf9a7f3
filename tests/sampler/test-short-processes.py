#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""300 short processes (~30 ms of CPU each, in liblmktest-a) are attributed.

Each process lives well under a second, so a sampler that learns mappings
from /proc after the fact would miss them. At least 90% of their samples
must land in liblmktest-a, and their number must match the CPU time the
kernel accounted to them (wait4 rusage) within 10%: nothing dropped.
"""
import os
import signal
import time

from lmktest import build_path, check, lmkd_oneshot, load_json, log, require_bpf, skip, tmpdir, wait_ready

HZ = 199
N = 300
MS = 30
PARALLEL = 2


def main():
    require_bpf()
    if os.environ.get("LMK_SANITIZED") == "1":
        skip("the short processes are built with sanitizers here: their start-up in libasan, not "
             "their work in liblmktest-a, dominates a 30 ms life")
    d = tmpdir()
    out = os.path.join(d, "lmkd.json")
    ready = os.path.join(d, "ready")
    prog = build_path("tests", "sampler", "lmk-shortproc")

    lmkd = lmkd_oneshot(HZ, None, out, extra=["--ready-file", ready])
    wait_ready(ready, proc=lmkd)
    cpu = 0.0
    running = 0
    started = 0
    t0 = time.monotonic()
    try:
        while started < N or running > 0:
            while running < PARALLEL and started < N:
                pid = os.fork()
                if pid == 0:
                    try:
                        os.execv(prog, [prog, str(MS)])
                    finally:
                        os._exit(127)
                started += 1
                running += 1
            _, status, ru = os.wait4(-1, 0)
            running -= 1
            check(os.waitstatus_to_exitcode(status) == 0, f"lmk-shortproc failed: status {status}")
            cpu += ru.ru_utime + ru.ru_stime
    finally:
        lmkd.send_signal(signal.SIGINT)
        lmkd.wait(timeout=60)
    log(f"{N} processes in {time.monotonic() - t0:.1f} s, {cpu:.2f} s of CPU")
    check(lmkd.returncode == 0, f"lmkd exited with {lmkd.returncode}")

    rep = load_json(out)
    rows = [r for r in rep["rows"] if r["comm"] == "lmk-shortproc"]
    total = sum(r["samples"] for r in rows)
    in_a = sum(r["samples"] for r in rows if os.path.basename(r["object"]) == "liblmktest-a.so")
    for r in rows:
        log(f"  {r['samples']:6d} {r['kind']:7s} {r['object']}")
    expected = cpu * HZ
    log(f"lmkd: {total} samples of lmk-shortproc (expected {expected:.0f} from rusage), {in_a} in liblmktest-a")
    check(total > 0, "no samples of the short processes at all")
    check(abs(total - expected) <= 0.10 * expected,
          f"{total} samples but the processes used {cpu:.2f} s of CPU ({expected:.0f} samples): some were lost")
    share = 100.0 * in_a / total
    check(share >= 90.0, f"only {share:.1f}% of the short processes' samples attributed to liblmktest-a")
    unknown = sum(r["samples"] for r in rows if r["kind"] == "unknown")
    check(unknown <= 0.01 * total, f"{unknown} samples of short processes went to [unknown]")
    log(f"PASS: {share:.1f}% in liblmktest-a")


if __name__ == "__main__":
    main()
