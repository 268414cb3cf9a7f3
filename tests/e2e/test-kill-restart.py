#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmkd killed with SIGKILL and restarted while work runs: no batch lost or doubled.

lmkd pushes every second. It is killed mid-run (so a batch may be half
sent, or sent and not yet removed from the spool) and restarted on the same
spool. Every batch number lmkd ever wrote must be in the store exactly once
(at most the one number reserved in the instant of the kill may be
missing: its interval died with the process), and the spool must end empty.
"""
import os
import signal
import sqlite3
import subprocess
import time

import storetest
from e2etest import Lmkd, wait_for
from lmktest import build_path, check, log, require_bpf, tmpdir


def stored_seqs(store):
    with sqlite3.connect(f"file:{store.db}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT b.seq FROM batches b JOIN nodes n ON n.id = b.node_id "
                          "WHERE n.name = 'node-e2e'").fetchall()
    return [r[0] for r in rows]


def main():
    require_bpf()
    d = tmpdir()
    work = subprocess.Popen([build_path("tests", "sampler", "lmk-workload"), "1", "12"], stdout=subprocess.DEVNULL)
    with storetest.Store() as store:
        lmkd = Lmkd(d, store, interval=1).start()
        time.sleep(4.5)
        lmkd.stop(signal.SIGKILL)
        log("lmkd killed")
        time.sleep(1)
        lmkd.start()
        time.sleep(4)
        lmkd.stop(signal.SIGKILL)
        log("lmkd killed again")
        lmkd.start()
        work.wait(timeout=60)
        time.sleep(2)
        lmkd.stop()
        seqs = stored_seqs(store)
        _, _, metrics = store.request("GET", "/metrics")

    with open(os.path.join(lmkd.spool, "seq")) as f:
        next_seq = int(f.read())
    left = [n for n in os.listdir(lmkd.spool) if n.endswith(".json.gz")]
    missing = sorted(set(range(next_seq)) - set(seqs))
    dup = [l for l in metrics.splitlines() if "duplicate" in l and not l.startswith("#")]
    log(f"lmkd numbered {next_seq} batches; the store has {len(seqs)} ({len(set(seqs))} distinct); "
        f"missing {missing}; spool left {left}; {dup}")
    check(len(seqs) == len(set(seqs)), "a batch is stored twice")
    check(not left, f"batches left in the spool: {left}")
    check(len(missing) <= 2, f"batches lost: {missing}")
    check(next_seq >= 8, f"only {next_seq} batches in 12 s")
    log("PASS")


if __name__ == "__main__":
    main()
