#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A stripped program's hot functions become one entry each, at the
offset where the unstripped build's symbol starts.

    test-functions-stripped.py PROGRAM

PROGRAM is lmk-func-hot (five hot functions, all in one 4 KiB page).
`strip --strip-all` keeps its build-id and its unwind table
(.eh_frame_hdr), not its symbols. The stripped copy (job 930003) and the
program itself (job 930004) run side by side under lmkd (one-shot
report, 997 Hz). The referee is binutils: `nm` on PROGRAM gives each
function's address, `readelf -l` its segments, so each start's file
offset. lmkd must name nothing in the stripped copy, give each of the
five functions its own entry ("entry": true) whose offset is that
function's start offset and whose share is within 3 percentage points
of the share lmkd names it with in the unstripped program (another
process: TOLERANCE), and put >= 99 % of the stripped copy's samples in
entries at function starts.
"""
import os
import shutil
import subprocess
import sys

import functest
from lmktest import check, log, report_functions, require_bpf, skip, which

SECONDS = 10             # up to ~10,000 samples of each at 997 Hz
STRIPPED, NAMED = "930003", "930004"
# Two processes' samples, not the same ones seen twice (as lmkd's and
# perf's are): with ~6,000 samples each on a busy machine, a share's
# difference has a standard deviation of about 0.9 points.
TOLERANCE = 3.0
KERNELS = ("kernel_alpha", "kernel_beta", "kernel_gamma", "kernel_delta", "kernel_epsilon")


def function_offsets(path):
    """{file offset of the function's start: name} from nm and readelf -l."""
    loads = []
    out = subprocess.run(["readelf", "-lW", path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            loads.append((int(f[1], 16), int(f[2], 16), int(f[4], 16)))    # offset, vaddr, filesz
    out = {}
    for line in subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if len(f) != 3 or f[1] not in "Tt":
            continue
        v = int(f[0], 16)
        for off, vaddr, filesz in loads:
            if vaddr <= v < vaddr + filesz:
                out[v - vaddr + off] = f[2]
    return out


def main():
    prog = sys.argv[1]
    require_bpf()
    for tool in ("strip", "nm", "readelf"):
        if not which(tool):
            skip(f"{tool} (binutils) is not installed: it strips the program or is the referee")
    starts = function_offsets(prog)
    want = {name: off for off, name in starts.items() if name in KERNELS}
    check(len(want) == len(KERNELS), f"nm does not show the five kernels in {prog}: {want}")
    check(len({off & ~0xfff for off in want.values()}) < len(KERNELS),
          "the kernels should share a page, so that only entries tell them apart")

    run = functest.Run(perf=False)
    stripped = os.path.join(run.d, "app-stripped")
    subprocess.run(["strip", "--strip-all", "-o", stripped, prog], check=True)
    os.chmod(stripped, 0o755)
    check(not any(k in subprocess.run(["nm", "-D", stripped], capture_output=True, text=True).stdout
                  for k in KERNELS), "the stripped copy still names the kernels in .dynsym")
    named = os.path.join(run.d, "app-named")
    shutil.copy(prog, named)
    os.chmod(named, 0o755)
    procs = []
    try:
        run.notice("job-start", STRIPPED)
        run.notice("job-start", NAMED)
        procs = [subprocess.Popen([path, str(SECONDS)], env=dict(os.environ, SLURM_JOB_ID=job),
                                  stdout=subprocess.DEVNULL) for path, job in ((stripped, STRIPPED), (named, NAMED))]
        for p in procs:
            check(p.wait(timeout=120) == 0, f"{p.args} failed")
        run.notice("job-end", STRIPPED)
        run.notice("job-end", NAMED)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
        rep = run.stop()

    fs = [f for f in report_functions(rep) if f["job"] == STRIPPED and os.path.basename(f["object"]) == "app-stripped"]
    total = sum(f["samples"] for f in fs)
    check(total > 0, "no functions of the stripped copy")
    for f in sorted(fs, key=lambda f: -f["samples"]):
        log(f"stripped: {f['samples']:6d} offset={f['offset']} entry={f.get('entry', False)} "
            f"function={f['function']} other={f['other']} -> {starts.get(f['offset'], '?')}")
    check(not any(f["function"] for f in fs), "a function of the stripped copy was named")
    check(all(f["build_id"] for f in fs if f["offset"] is not None), "an unnamed offset without the build-id")
    entries = {f["offset"]: f["samples"] for f in fs if f.get("entry")}
    at_starts = sum(n for off, n in entries.items() if off in starts)
    log(f"stripped: {100.0 * at_starts / total:.2f}% of {total} samples in entries at function starts")
    check(at_starts >= 0.99 * total, f"only {at_starts} of {total} samples in entries at function starts")
    check(all(f["offset"] % 4096 == 0 for f in fs if f["offset"] is not None and not f.get("entry")),
          "an offset without entry that is no page")

    ns = [f for f in report_functions(rep) if f["job"] == NAMED and os.path.basename(f["object"]) == "app-named"]
    ntotal = sum(f["samples"] for f in ns)
    check(ntotal > 0, "no functions of the unstripped program")
    bad = []
    for k in KERNELS:
        check(want[k] in entries, f"{k}: no entry at its start 0x{want[k]:x}: {sorted(map(hex, entries))}")
        a = 100.0 * entries[want[k]] / total
        b = 100.0 * sum(f["samples"] for f in ns if f["function"] == k) / ntotal
        log(f"{k:15s} entry 0x{want[k]:x}: {a:6.2f}% stripped, {b:6.2f}% named")
        if abs(a - b) > TOLERANCE:
            bad.append(f"{k}: {a:.2f}% as an entry, {b:.2f}% named")
    check(not bad, "shares more than %.1f points apart: %s" % (TOLERANCE, "; ".join(bad)))
    log("PASS")


if __name__ == "__main__":
    main()
