#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The site's kernels against the truth of a constructed site (issue 31):
real Slurm jobs of two unprivileged users, different applications and
libraries, under lmkd pushing into one lmk-store, with
`perf record -a -F 199 -e cpu-clock` beside as the referee.

    test-site-kernels.py HOT ZLIB DGEMM LMK_NOTIFY SLURM_DIR

  lmkalice  lmk-func-hot (its own C kernels), lmk-dgemm in OpenBLAS
  lmkbob    lmk-func-zlib (zlib), lmk-dgemm in the reference BLAS

(copies named lmk-sk-*, so that perf tells them from other runs of the
same programs on the machine).

GET /api/v1/functions (an admin's, over every job) must give each of the
top functions a share of the jobs' core-hours within 2 percentage points
of perf's share of the same commands' samples (perf report --sort
comm,dso,sym, filtered by command here: perf 6.1's --comms drops kernel
samples); and each user, asking with a MUNGE credential, sees only the
functions of their own jobs."""
import os
import shutil
import sys
import time

import functest
import slurm
import storetest
from e2etest import Lmkd
from lmktest import check, fail, log, require_bpf, skip, tmpdir, which
from people import credential, with_people

OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3"
REF_BLAS = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"
SECONDS = 8
ROUNDS_MAX = 4
PERF_MIN = 3000
TOP = 12
TOLERANCE = 2.0
# the programs' copies, named for this test alone: the machine may run the
# function tests' own programs (lmk-func-hot, ...) at the same time, which
# perf would count as these jobs'
COMMS = {"lmk-sk-hot", "lmk-sk-zlib", "lmk-sk-dgemm"}


def ranking(store, headers=None, query=""):
    path = "/api/v1/functions?since=2d&limit=1000" + query
    st, _, body = store.request("GET", path, headers=headers) if headers else store.get(path)
    check(st == 200, f"GET {path}: {st} {body}")
    return body


def as_person(store, sock, user):
    cred = credential(user, sock, "lmk-store GET /api/v1/functions")
    return ranking(store, {"Authorization": f"MUNGE {cred}"})


def unnamed(label):
    """functest's label of an unnamed function, its start ("entry 0x…", from
    the unwind table) or its page ("page 0x…"), as "unnamed 0x…": the
    ranking's rows give the offset, not which of the two it is."""
    for prefix in ("entry 0x", "page 0x"):
        if label.startswith(prefix):
            return "unnamed 0x" + label[len(prefix):]
    return label


def label(e):
    """A function as functest labels perf's, an unnamed one as unnamed()."""
    if e["other"]:
        return functest.OTHER
    if e["offset"] is not None and e["function"].endswith("+0x%x" % e["offset"]):
        return f"unnamed 0x{e['offset']:x}"
    return functest.perf_style(e["function"])


def samples_of(bodies):
    """{(object's file name, function): samples} of rankings together, and
    their jobs' samples."""
    out = {}
    for body in bodies:
        for e in body["functions"]:
            key = (os.path.basename(e["object"]), label(e))
            out[key] = out.get(key, 0) + e["samples"]
    return out, sum(b["total_samples"] for b in bodies)


def compare(bodies, perf_data):
    lf, lt = samples_of(bodies)
    ls = {k: 100.0 * v / lt for k, v in lf.items()}
    pf, pt = functest.perf_shares(perf_data, COMMS)
    if pt < PERF_MIN:
        with open(os.path.join(os.path.dirname(perf_data), "perf.err"), errors="replace") as f:
            log(f"perf record said: {f.read()[-2000:]}")
    check(pt >= PERF_MIN, f"perf has only {pt} samples of {COMMS}, need {PERF_MIN} for 2-point shares")
    ps = {}
    for k, v in pf.items():
        key = (k[0], unnamed(k[1]))
        ps[key] = ps.get(key, 0.0) + 100.0 * v / pt
    log(f"the store: {lt} samples of the jobs; perf: {pt} samples of {sorted(COMMS)}")
    top_l = [k for k in sorted(ls, key=ls.get, reverse=True) if k[1] != functest.OTHER][:TOP]
    top_p = sorted(ps, key=ps.get, reverse=True)[:TOP]
    bad = []
    log(f"{'store':>7} {'perf':>7}  object / function")
    for k in sorted(set(top_l) | set(top_p), key=lambda k: -max(ls.get(k, 0), ps.get(k, 0))):
        a, b = ls.get(k, 0.0), ps.get(k, 0.0)
        mark = "" if abs(a - b) <= TOLERANCE else "   <-- off"
        log(f"{a:6.2f}% {b:6.2f}%  {k[0]} / {k[1]}{mark}")
        if mark:
            bad.append(f"{k[0]} {k[1]}: store {a:.2f}% perf {b:.2f}%")
    if bad:
        fail("shares of the site more than %.1f points from perf's: %s" % (TOLERANCE, "; ".join(bad)))
    return ls


def run(d, sock, progs, notify, slurm_dir):
    shared = os.path.join(d, "bin")
    os.makedirs(shared)
    os.chmod(shared, 0o755)
    exe = {}
    # copies the jobs' users can run, wherever the build is
    for name, path in progs.items():
        exe[name] = os.path.join(shared, name)
        shutil.copy(path, exe[name])
        os.chmod(exe[name], 0o755)
    lmkd_sock = os.path.join(d, "lmkd.sock")
    mode = "linuxproc" if slurm.cgroup_v1_missing() else "cgroup"
    env = {"OPENBLAS_NUM_THREADS": "1"}
    with storetest.Store(extra=["--munge-socket", sock]) as store, slurm.Slurm(
            mode=mode, prolog=os.path.join(slurm_dir, "lmk-prolog"), epilog=os.path.join(slurm_dir, "lmk-epilog"),
            script_env={"LMK_NOTIFY": notify, "LMK_SOCKET": lmkd_sock}) as s:
        os.chmod(store.dir, 0o755)
        lmkd = Lmkd(d, store, interval=2, hz=functest.HZ, notify_socket=lmkd_sock).start()
        perf = functest.Run(tmpdir("lmk-site-kernels-perf-"), perf=True, lmkd=False)
        jobs = []
        try:
            # rounds of the four jobs until perf has enough samples of them
            # for 2-point shares (from the store's count at lmkd's rate): on
            # a machine other work shares, a job gets less of a CPU
            for _ in range(ROUNDS_MAX):
                for user, name, script in (
                        ("lmkalice", "hot", f"#!/bin/sh\nexec {exe['lmk-sk-hot']} {SECONDS}\n"),
                        ("lmkbob", "zlib", f"#!/bin/sh\nexec {exe['lmk-sk-zlib']} {SECONDS}\n"),
                        ("lmkalice", "openblas", f"#!/bin/sh\nexec {exe['lmk-sk-dgemm']} {OPENBLAS} 160 {SECONDS}\n"),
                        ("lmkbob", "refblas", f"#!/bin/sh\nexec {exe['lmk-sk-dgemm']} {REF_BLAS} 160 {SECONDS}\n")):
                    # one at a time: two CPUs, and each job's own shares stay steady
                    job = s.sbatch(script, env=env, user=user)
                    jobs.append((name, job))
                    s.wait_done(job, timeout=120)
                    check(s.job_state(job) == "COMPLETED", f"job {name} ({job}): {s.job_state(job)}\n{s.output(job)}")
                time.sleep(4)  # the epilogs, the last interval pushed
                got = sum(ranking(store, query=f"&user={u}")["total_samples"] for u in ("lmkalice", "lmkbob"))
                log(f"after {len(jobs) // 4} round(s): {got} samples of these users' jobs at {functest.HZ} Hz")
                if got * functest.PERF_HZ / functest.HZ >= PERF_MIN * 1.2:
                    break
        finally:
            perf.stop()
            lmkd.stop()
        log(f"jobs: {jobs}")
        # The machine is shared: other jobs (other tests' Slurm, with other
        # users) are sampled too, and are the site's. The site of this test
        # is that of its two users, as an admin narrows the ranking to them.
        mine = [ranking(store, query=f"&user={u}") for u in ("lmkalice", "lmkbob")]
        shares = compare(mine, perf.perf_data)
        admin = ranking(store)
        af, _ = samples_of([admin])
        mf, _ = samples_of(mine)
        check(all(af.get(k, 0) >= v for k, v in mf.items()),
              "the ranking over every job holds at least these users' samples of each function")
        check(af[("lmk-sk-hot", "kernel_alpha")] == mf[("lmk-sk-hot", "kernel_alpha")],
              "kernel_alpha, only these jobs': the same over every job as over these users'")
        # the object is named by the file mapped: libblas.so.3 or the
        # libblas.so.3.11.0 it links to, as the process's maps name it
        check(any(k[1] == "dgemm_" for k in shares if k[0].startswith("libblas.so.3")),
              f"the reference BLAS's dgemm_ in the ranking: {sorted(shares)}")
        # Debian's zlib exports its API, not the static functions its time
        # goes to: they stay unnamed until the store names them by build-id
        check(any(k[0].startswith("libz.so") and k[1].startswith("unnamed 0x") for k in shares),
              f"zlib's unnamed functions in the ranking: {sorted(shares)}")
        fams = {e["family"] for e in mine[0]["functions"] + mine[1]["functions"]}
        check("blas-level3" in fams, f"the families: {fams}")

        alice, bob = as_person(store, sock, "lmkalice"), as_person(store, sock, "lmkbob")
        a_objs = {os.path.basename(e["object"]) for e in alice["functions"]}
        b_objs = {os.path.basename(e["object"]) for e in bob["functions"]}
        a_dirs = {os.path.dirname(e["object"]) for e in alice["functions"]}
        b_dirs = {os.path.dirname(e["object"]) for e in bob["functions"]}
        log(f"lmkalice sees {sorted(a_objs)}; lmkbob sees {sorted(b_objs)}")

        # Debian installs the reference BLAS under .../blas/ and OpenBLAS
        # under .../openblas-*/, both as libblas.so.3 (and OpenBLAS's own
        # libopenblas*): told apart by folder, not by versions Debian changes
        def has(objs, prefix):
            return any(o.startswith(prefix) for o in objs)

        def reference_blas(dirs):
            return any(os.path.basename(x) == "blas" for x in dirs)

        def openblas(objs, dirs):
            return has(objs, "libopenblas") or any(os.path.basename(x).startswith("openblas") for x in dirs)
        check(("lmk-sk-hot" in a_objs or openblas(a_objs, a_dirs)) and "lmk-sk-zlib" not in a_objs and
              not reference_blas(a_dirs) and not has(a_objs, "libz.so"),
              f"lmkalice sees her jobs' functions only: {sorted(a_objs)} in {sorted(a_dirs)}")
        check(reference_blas(b_dirs) and has(b_objs, "libz.so") and "lmk-sk-hot" not in b_objs and
              not openblas(b_objs, b_dirs),
              f"lmkbob sees his jobs' functions only: {sorted(b_objs)} in {sorted(b_dirs)}")
        check((alice["total_samples"], bob["total_samples"]) == (mine[0]["total_samples"], mine[1]["total_samples"]),
              "each user's own view of their jobs' samples is the admin's narrowed to them")
    log("PASS")


def main():
    hot, zlib, dgemm, notify, slurm_dir = sys.argv[1:6]
    require_bpf()
    slurm.require_slurm()
    if not which("perf"):
        skip("perf (Debian linux-perf) is not installed: it is this test's referee")
    if not (os.path.exists(OPENBLAS) and os.path.exists(REF_BLAS)):
        skip(f"needs {OPENBLAS} and {REF_BLAS} (apt-get install libopenblas0-pthread libblas3)")
    progs = {"lmk-sk-hot": hot, "lmk-sk-zlib": zlib, "lmk-sk-dgemm": dgemm}
    with_people(lambda d, sock: run(d, sock, progs, notify, slurm_dir))


if __name__ == "__main__":
    main()
