#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The store is away while a job runs: nothing is missing.

lmkd pushes every 5 s while lmk-workload runs. The store stops 15 s in and
comes back LMK_OUTAGE_SECONDS later (default 50: long enough for ten
batches to wait in the spool and for lmkd's backoff to grow past 30 s; set
120 or more for a longer outage) on the same database and port. After the
work ends, the store must hold exactly the samples lmkd's own report of
the whole run counts for the workload, and every batch lmkd spooled must
have been sent.
"""
import os
import subprocess
import time

import storetest
from e2etest import Lmkd, sums, wait_for
from lmktest import build_path, check, log, require_bpf, tmpdir

OUTAGE = float(os.environ.get("LMK_OUTAGE_SECONDS", "50"))


def main():
    require_bpf()
    d = tmpdir()
    with storetest.Store() as store:
        lmkd = Lmkd(d, store, interval=5, hz=19).start()
        work = subprocess.Popen([build_path("tests", "sampler", "lmk-workload"), "1", str(int(OUTAGE + 45))],
                                stdout=subprocess.DEVNULL)
        time.sleep(15)
        store.stop()
        log(f"store stopped for {OUTAGE:.0f} s")
        time.sleep(OUTAGE)
        queued = lmkd.metric("lmkd_spool_batches")
        failures = lmkd.metric("lmkd_push_failures_total")
        log(f"during the outage: {queued} batches queued, {failures} failed pushes")
        store.start()
        log("store back")
        work.wait(timeout=OUTAGE + 120)
        time.sleep(6)
        # backoff after a long outage: lmkd retries within about a minute
        wait_for(lambda: lmkd.metric('lmkd_batches_total{state="sent"}') ==
                 lmkd.metric('lmkd_batches_total{state="spooled"}'), 150, "the spool to drain")
        lmkd.stop()
        rep = lmkd.report()
        status, _, objs = store.get("/api/v1/objects?since=1d&kind=exe")
    check(queued >= OUTAGE / 5 - 3, f"only {queued} batches waited in the spool during the outage")
    check(failures >= 1, "no failed pushes while the store was away")
    check(lmkd.metric('lmkd_batches_total{state="sent"}') == lmkd.metric('lmkd_batches_total{state="spooled"}'),
          "batches left unsent")
    check(lmkd.metric('lmkd_batches_total{state="dropped"}') == 0, "batches dropped")
    mine = sums([r for r in rep["rows"] if r["comm"] == "lmk-workload"], "object")
    want = sum(n for o, n in mine.items() if o.endswith("/lmk-workload"))
    check(status == 200, f"GET /api/v1/objects: {status}")
    have = sum(o["samples"] for o in objs["objects"] if o["object"].endswith("/lmk-workload"))
    log(f"lmk-workload's executable: lmkd counted {want} samples, the store has {have}")
    check(want > 0 and have == want, "samples missing after the outage")
    log("PASS")


if __name__ == "__main__":
    main()
