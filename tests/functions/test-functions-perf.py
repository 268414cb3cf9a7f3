#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmkd's functions of a workload against perf's, on the same run.

    test-functions-perf.py WORKLOAD PROGRAM [LIBRARY]

WORKLOAD is one of
  hot      a C program with hot functions of its own (lmk-func-hot)
  zlib     compressing and inflating with zlib (lmk-func-zlib): Debian's
           libz keeps only its exported functions in .dynsym, so most of
           its time is at offsets neither lmkd nor perf can name. lmkd
           sends them as the start of their function from libz's unwind
           table ("entry"); perf shows their addresses, which the test
           maps to the same functions with binutils' reading of that
           table (readelf --debug-dump=frames): the shares of those
           functions are compared too
  dgemm    a dgemm in OpenBLAS (lmk-dgemm LIBRARY, Debian's
           libopenblas0-pthread): its kernels are named from .dynsym
  cxx      C++ (lmk-func-cxx): names demangled, compared with perf's
  fortran  Fortran module procedures (lmk-func-fortran): perf shows
           __heat_MOD_step, lmk heat::step
Rounds of two processes of it run, as a job lmkd is told of, until they
had 30 s of CPU (about 6,000 of perf's samples; at most two minutes),
lmkd at 997 Hz and `perf record -a -F 199 -e cpu-clock` beside them. The top 10
functions of each, by their share of the workload's samples, must be
within 2 percentage points of the other's; in a file with symbols, a
function must be named for at least 99 % of the samples (the program's
own, OpenBLAS's).
"""
import os
import subprocess
import sys
import time

import functest
from lmktest import check, log, report_functions, require_bpf, skip, which

SECONDS = 8             # a round: two processes for this long
CPU_SECONDS = 30        # their CPU time in all: ~6,000 of perf's samples
MAX_SECONDS = 120
JOB = "930001"
OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"


def check_demangled(rep, perf_data, exe):
    """lmk's C++ names in full, as c++filt (binutils) shows the symbols
    perf sampled: perf 6.1 shows them without parameters."""
    # binutils comes with the compiler that built the programs
    check(which("c++filt"), "no c++filt (binutils) to compare lmk's full C++ names with")
    mangled = set()
    for line in functest.perf_report(perf_data, "--sort", "dso,sym", "--no-demangle"):
        parts = [p.strip() for p in line.split("\x1f")]
        if len(parts) >= 4 and parts[2] == exe and parts[3].startswith("[.] "):
            mangled.add(parts[3][4:])
    out = subprocess.run(["c++filt"], input="\n".join(sorted(mangled)) + "\n", capture_output=True, text=True,
                         check=True).stdout
    full = set(out.splitlines())
    fs = [f for f in report_functions(rep) if f["job"] == JOB and os.path.basename(f["object"]) == exe and f["function"]]
    total = sum(f["samples"] for f in fs)
    for f in fs:
        if f["samples"] >= 0.01 * total:
            check(f["function"] in full, f"lmk's {f['function']!r} is no symbol c++filt shows: {sorted(full)}")
    log(f"{exe}: lmk's names of >= 1% are c++filt's")


def main():
    workload, prog = sys.argv[1], sys.argv[2]
    require_bpf()
    if not which("perf"):
        skip("perf (Debian linux-perf) is not installed: it is this test's referee")
    if not prog or not os.path.exists(prog):
        skip(f"{workload}: its program was not built (no compiler for it)")
    env = dict(os.environ, SLURM_JOB_ID=JOB)
    argv = [prog, str(SECONDS)]
    if workload == "dgemm":
        if not os.path.exists(OPENBLAS):
            skip(f"{OPENBLAS} is missing (Debian package libopenblas0-pthread)")
        argv = [prog, os.path.realpath(OPENBLAS), "256", str(SECONDS)]
        env["OPENBLAS_NUM_THREADS"] = "1"
    comm = os.path.basename(prog)[:15]

    run = functest.Run()
    cpu, t0 = 0.0, time.monotonic()
    try:
        run.notice("job-start", JOB)
        # rounds of two processes until they had the CPU time for enough
        # of perf's samples: a busy machine gives them less
        while cpu < CPU_SECONDS and time.monotonic() - t0 < MAX_SECONDS:
            procs = [subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL) for _ in range(2)]
            for p in procs:
                _, status, ru = os.wait4(p.pid, 0)
                check(os.waitstatus_to_exitcode(status) == 0, f"{argv} failed: {status}")
                cpu += ru.ru_utime + ru.ru_stime
        run.notice("job-end", JOB)
    finally:
        rep = run.stop()
    log(f"{workload}: {cpu:.1f} s of CPU in {time.monotonic() - t0:.0f} s")

    funcs, total = functest.compare(rep, run.perf_data, JOB, {comm})
    if workload in ("hot", "cxx", "fortran"):
        functest.check_named(rep, JOB, os.path.basename(prog))
    if workload == "dgemm":
        # OpenBLAS names its kernels in .dynsym: a file with symbols
        libs = {os.path.basename(f["object"]) for f in report_functions(rep)
                if f["job"] == JOB and os.path.basename(f["object"]).startswith("libopenblas")}
        check(libs, "no functions of OpenBLAS's library")
        for lib in libs:
            functest.check_named(rep, JOB, lib)
    if workload == "zlib":
        # libz's unnamed time is in functions, not pages
        libz = [f for f in report_functions(rep) if f["job"] == JOB and os.path.basename(f["object"]).startswith("libz.")]
        entries = sum(f["samples"] for f in libz if f.get("entry"))
        unnamed = sum(f["samples"] for f in libz if f["offset"] is not None)
        log(f"libz: {entries} of {unnamed} unnamed samples at a function's start")
        check(unnamed > 0 and entries >= 0.99 * unnamed, "libz's unnamed samples should be entries")
    if workload == "cxx":
        check_demangled(rep, run.perf_data, os.path.basename(prog))
    want = {"hot": "kernel_alpha", "cxx": "solver::Grid<double>::smooth", "fortran": "heat::step",
            "dgemm": "dgemm_kernel"}.get(workload)
    if want:
        check(any(label.startswith(want) for _, label in funcs), f"no function named {want}*: {sorted(funcs)}")
    log("PASS")


if __name__ == "__main__":
    main()
