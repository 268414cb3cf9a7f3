#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The node's wall clock steps 2 h ahead and back: no batch spans a step,
none ends before it starts, and the store gets every sample.

lmkd pushes every 5 s to lmk-store while lmk-workload runs. 8 s in, lmkd's
wall clock steps 2 h ahead, as NTP stepping a drifted node's clock does, and
10 s later it steps back. Only lmkd's clock steps: tests/lib/clock-step.c,
LD_PRELOAD'ed, offsets what CLOCK_REALTIME answers lmkd, because date -s
would step the clock under every other test running beside, and a time
namespace cannot offset CLOCK_REALTIME. lmkd must end the interval at each
step and say so; every batch must last what the monotonic clock says (at
most a push interval); the ones after the first step are stamped 2 h ahead;
and the store must hold every sample lmkd's own report of the run counts.
"""
import os
import re
import subprocess
import time

import storetest
from e2etest import Lmkd
from lmktest import build_path, check, log, require_bpf, skip, tmpdir

STEP = 7200
INTERVAL = 5


def main():
    require_bpf()
    shim = build_path("tests", "lib", "liblmk-clock-step.so")
    if not os.path.exists(shim):
        skip(f"{shim} was not built")
    d = tmpdir()
    offset = os.path.join(d, "clock-offset")

    def step_to(seconds):
        with open(offset + ".new", "w") as f:
            f.write(f"{seconds}\n")
        os.rename(offset + ".new", offset)
        log(f"lmkd's wall clock now {seconds:+d} s")

    step_to(0)
    env = {"LD_PRELOAD": shim, "LMK_TEST_CLOCK_OFFSET_FILE": offset,
           # the shim comes before the sanitizer's runtime in a sanitized build
           "ASAN_OPTIONS": ":".join(filter(None, [os.environ.get("ASAN_OPTIONS"), "verify_asan_link_order=0"]))}
    with storetest.Store() as store:
        lmkd = Lmkd(d, store, interval=INTERVAL, hz=19, env=env, log_path=os.path.join(d, "lmkd.log"))
        lmkd.start()
        work = subprocess.Popen([build_path("tests", "sampler", "lmk-workload"), "1", "28"], stdout=subprocess.DEVNULL)
        time.sleep(8)
        step_to(STEP)
        time.sleep(10)
        step_to(0)
        work.wait(timeout=60)
        time.sleep(2)
        lmkd.stop()
        batches = store.sql("SELECT seq, interval_start, interval_end, samples FROM batches ORDER BY seq")
    text = lmkd.read_log()
    said = [line for line in text.splitlines() if "clock stepped" in line]
    log("\n".join(said))
    now = time.time()
    for seq, start, end, samples in batches:
        log(f"batch {seq}: {start:.3f} .. {end:.3f} ({end - start:.3f} s, {start - now:+.0f} s from now), "
            f"{samples} samples")

    with open(os.path.join(lmkd.spool, "seq")) as f:
        numbered = int(f.read())
    check(lmkd.metric("lmkd_clock_steps_total") == 2, f"{lmkd.metric('lmkd_clock_steps_total')} clock steps counted")
    # the step as lmkd measured it: the clocks are read a moment apart, so
    # +7199.998 s is a step of 7200 s
    steps = [float(m.group(1)) for m in (re.search(r"stepped by ([+-][0-9.]+) s", x) for x in said) if m]
    check(len(steps) == 2 and abs(steps[0] - STEP) < 1 and abs(steps[1] + STEP) < 1,
          f"the steps were not said: {said}")
    check(lmkd.metric('lmkd_batches_total{state="rejected"}') == 0, "the store refused batches")
    check([b[0] for b in batches] == list(range(numbered)), f"the store has batches {[b[0] for b in batches]} "
          f"of lmkd's {numbered}")
    for seq, start, end, _ in batches:
        check(start <= end, f"batch {seq} ends before it starts")
        check(end - start <= INTERVAL + 1.5, f"batch {seq} lasts {end - start:.3f} s, more than a push interval")
    ahead = [seq for seq, start, _, _ in batches if start > now + STEP / 2]
    check(1 <= len(ahead) < len(batches) - 1, f"batches stamped ahead: {ahead}")
    rep = lmkd.report()
    want = sum(r["samples"] for r in rep["rows"])
    have = sum(b[3] for b in batches)
    log(f"lmkd counted {want} samples in its report of the run, the store has {have}")
    check(want > 0 and have == want, "samples lost")
    log("PASS")


if __name__ == "__main__":
    main()
