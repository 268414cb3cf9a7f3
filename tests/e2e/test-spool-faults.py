#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmkd samples on whatever befalls its spool, and says what it could not keep.

lmkd samples for real at 99 Hz and pushes a batch every second to lmk-store,
with its spool on a small tmpfs mounted here. Then:

- a second lmkd on the same spool is refused, naming the first one's pid;
- the file system fills up while the store takes every batch: with nothing
  to drop, lmkd counts the intervals it cannot spool and their samples, and
  says so once, not once per interval; the space comes back: lmkd says so
  and spools again;
- the store goes away, batches wait in the spool, each with batch.spool,
  the id in the spool's "id" file; the file system fills up: lmkd drops
  its oldest batches to make room, said once per episode;
- the file system is remounted read-only and back: counted, said once;
- lmkd stops cleanly; started on the read-only spool, or through a symlink
  to it, it refuses with a clear error.
"""
import gzip
import json
import os
import re
import subprocess
import time

import storetest
from e2etest import Lmkd, wait_for
from lmktest import check, fail, log, require_bpf, skip, tmpdir


def mount(*args):
    r = subprocess.run(["mount", *args], capture_output=True, text=True)
    return r.returncode == 0, r.stderr.strip()


def fill(path):
    """Appends to path until the file system is full."""
    chunk = b"\0" * 4096
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        while True:
            try:
                os.write(fd, chunk)
            except OSError as e:
                if e.errno == 28:  # ENOSPC
                    return
                raise
    finally:
        os.close(fd)


def refused(cmd, want):
    """Runs a second lmkd that must refuse to start and say want."""
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    log(f"refused (exit {r.returncode}): {r.stderr.strip().splitlines()[-1] if r.stderr.strip() else ''}")
    check(r.returncode != 0, f"lmkd started, want refused with \"{want}\"")
    check(want in r.stderr, f"lmkd's refusal does not say \"{want}\":\n{r.stderr}")


def episodes(text, pattern):
    """How often pattern is said between two "resumed" lines, at most."""
    return max(len(re.findall(pattern, part)) for part in text.split("(resumed)"))


def main():
    require_bpf()
    d = tmpdir()
    fs = os.path.join(d, "fs")
    os.mkdir(fs)
    ok, why = mount("-t", "tmpfs", "-o", "size=1m,mode=0700", "lmk-test-spool", fs)
    if not ok:
        skip(f"cannot mount a tmpfs for the spool: {why}")
    try:
        run(d, fs)
    finally:
        subprocess.run(["umount", "-l", fs])


def run(d, fs):
    spool = os.path.join(fs, "spool")
    with storetest.Store() as store:
        lmkd = Lmkd(d, store, interval=1, hz=99, spool=spool, log_path=os.path.join(d, "lmkd.log"))

        def m(name):
            # written at the first tick
            return lmkd.metric(name) if os.path.exists(lmkd.metrics) else -1

        lmkd.start()
        try:
            faults(d, fs, spool, store, lmkd, m)
        finally:
            if lmkd.proc.poll() is None:
                lmkd.proc.kill()
                lmkd.proc.wait()


def said(lmkd, pattern):
    return len(re.findall(pattern, lmkd.read_log()))


def faults(d, fs, spool, store, lmkd, m):
    wait_for(lambda: m('lmkd_batches_total{state="sent"}') >= 3, 20, "three batches sent")

    # one lmkd per spool
    refused(lmkd.cmd, f"Spool {spool} is in use by pid {lmkd.proc.pid}")
    check(lmkd.proc.poll() is None, "the first lmkd stopped")

    # the file system fills up while the store takes every batch: nothing
    # to drop, whole intervals cannot be spooled
    filler = os.path.join(fs, "filler")
    end = time.monotonic() + 60
    while m("lmkd_intervals_unspooled_total") < 5:
        if time.monotonic() > end:
            fail(f"intervals were not counted as unspooled: {m('lmkd_intervals_unspooled_total')}")
        fill(filler)
        time.sleep(0.2)
    check(lmkd.proc.poll() is None, f"lmkd stopped on a full spool: {lmkd.proc.returncode}")
    unspooled, samples = m("lmkd_intervals_unspooled_total"), m("lmkd_samples_unspooled_total")
    log(f"full: {unspooled} intervals ({samples} samples) not spooled")
    check(samples >= unspooled * 50, f"{samples} samples in {unspooled} unspooled intervals of 2 CPUs at 99 Hz")
    check(said(lmkd, r"Failed to write a batch to spool .*No space left") == 1, "the full spool was not said once")

    # space comes back
    spooled = m('lmkd_batches_total{state="spooled"}')
    os.unlink(filler)
    wait_for(lambda: m('lmkd_batches_total{state="spooled"}') >= spooled + 2, 20, "batches spooled again")
    wait_for(lambda: said(lmkd, r"\(resumed\)") >= 1, 5, "lmkd to say the spool takes batches again")
    resumed = re.search(r"\(resumed\): meanwhile (\d+) intervals \((\d+) samples\) could not be spooled",
                        lmkd.read_log())
    check(resumed and int(resumed.group(1)) >= unspooled and int(resumed.group(2)) >= samples,
          f"the resumed line does not say what was lost: {resumed and resumed.group(0)}")

    # the store goes away: batches wait, each with the spool's id
    store.stop()
    wait_for(lambda: m("lmkd_spool_batches") >= 3, 30, "three batches waiting")
    with open(os.path.join(spool, "id")) as f:
        spool_id = f.read().strip()
    check(re.fullmatch(r"[0-9a-f]{32}", spool_id), f"spool id {spool_id!r}")
    names = sorted(n for n in os.listdir(spool) if n.endswith(".json.gz"))
    for n in names:
        with gzip.open(os.path.join(spool, n)) as f:
            batch = json.load(f)
        check(batch["batch"]["spool"] == spool_id, f"{n}: batch.spool {batch['batch'].get('spool')}, want {spool_id}")
    log(f"{len(names)} batches carry batch.spool; the last one's header: {json.dumps(batch['batch'])}")

    # the file system fills up: the oldest batches make room
    end = time.monotonic() + 60
    while m("lmkd_spool_dropped_for_space_total") < 8:
        if time.monotonic() > end:
            fail(f"no batches dropped for room: {m('lmkd_spool_dropped_for_space_total')}")
        fill(filler)
        time.sleep(0.2)
    check(lmkd.proc.poll() is None, f"lmkd stopped on a full spool: {lmkd.proc.returncode}")
    dropped = m("lmkd_spool_dropped_for_space_total")
    check(m('lmkd_batches_total{state="dropped"}') >= dropped, "drops for room missing in state=dropped")
    resumes = said(lmkd, r"\(resumed\)")
    os.unlink(filler)
    wait_for(lambda: said(lmkd, r"\(resumed\)") > resumes, 20, "lmkd to say the spool takes batches again")
    text = lmkd.read_log()
    full_said = said(lmkd, r"spool .* is full: dropped")
    log(f"full: {dropped} batches dropped for room, said {full_said} times")
    check(full_said >= 1 and episodes(text, r"is full: dropped") == 1, "the full spool was not said once an episode")
    check(full_said < dropped / 2, "said once per batch, not per episode")

    # read-only, as a file system with errors is remounted
    ok, why = mount("-o", "remount,ro", fs)
    check(ok, f"remount read-only: {why}")
    before = m("lmkd_intervals_unspooled_total")
    wait_for(lambda: m("lmkd_intervals_unspooled_total") >= before + 3, 20, "intervals counted while read-only")
    check(lmkd.proc.poll() is None, f"lmkd stopped on a read-only spool: {lmkd.proc.returncode}")
    check(said(lmkd, r"Failed to write a batch to spool .*Read-only file system") == 1,
          "the read-only spool was not said once")
    resumes = said(lmkd, r"\(resumed\)")
    ok, why = mount("-o", "remount,rw", fs)
    check(ok, f"remount read-write: {why}")
    wait_for(lambda: said(lmkd, r"\(resumed\)") > resumes, 20, "lmkd to spool again after read-only")
    log("\n".join(line for line in lmkd.read_log().splitlines() if "spool" in line and "Pushing" not in line))
    lmkd.stop()
    log(f"lmkd stopped cleanly; {m('lmkd_intervals_unspooled_total')} intervals not spooled in all")

    # started on a read-only spool, lmkd refuses at once
    ok, why = mount("-o", "remount,ro", fs)
    check(ok, f"remount read-only: {why}")
    refused(lmkd.cmd, f"Spool {spool} cannot be written (Read-only file system)")
    mount("-o", "remount,rw", fs)

    # a symlink to the spool is not followed
    link = os.path.join(d, "spool-link")
    os.symlink(spool, link)
    cmd = list(lmkd.cmd)
    cmd[cmd.index("--spool") + 1] = link
    refused(cmd, f"Spool {link} is a symlink")
    log("PASS")


if __name__ == "__main__":
    main()
