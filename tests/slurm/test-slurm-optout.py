#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""sbatch --lmk=off and --lmk=nocounters through lmk.so, a real lmkd and a
real lmk-store (docs/slurm.md, "The SPANK plugin").

A real Slurm in linuxproc mode with lmk.so in its plugstack.conf (its job
notices are the only ones: no Prolog/Epilog). Two jobs of user nobody run
the same marked program (lmk-marked: phases, and a marker lmk switches
off) side by side on the node, each with --lmk-notes; one with --lmk=off.
The normal job keeps its objects, phases, notes and markers in the store;
the opted-out job only its CPU time and samples: no row of it in
job_objects, job_phases, job_notes, job_markers, job_tasks, job_ranks,
job_functions or sample_packs, lmkd's report has no row of it either, and
`lmk job` and its page say "opted out by the user". A third job asks
--lmk=nocounters: lmkd releases the PMU while it runs (this VM has no
hardware counters: the state is what is checked) and the store and page
say so. An lmkd started while an opted-out job runs learns its wish from
the start notice the plugin keeps beside the socket. Then lmkd with
--opt-out forbidden measures an --lmk=off job as usual.

Usage: test-slurm-optout.py LMK_SO LMK_MARKED
"""
import os
import subprocess
import sys
import time

import lmktest
import slurm
import storetest
from e2etest import Lmkd, build_path
from lmktest import check, log, require_bpf, tmpdir

USER = "nobody"
PER_JOB = ("job_objects", "job_phases", "job_notes", "job_markers", "job_tasks", "job_ranks",
           "job_functions", "sample_packs")


def job_row_counts(store, job):
    (jid,), = store.sql("SELECT id FROM jobs WHERE job = ?", (job,))
    return {t: store.sql(f"SELECT count(*) FROM {t} WHERE job_id = ?", (jid,))[0][0] for t in PER_JOB}


def lmk(store, *args):
    p = subprocess.run([build_path("cli", "lmk"), "--store", store.url(), "--token-file", store.token_file, *args],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"lmk {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    return p.stdout


def page(store, job):
    status, _, body = store.request("GET", f"/jobs/{job}", token=storetest.ADMIN_TOKEN)
    check(status == 200, f"GET /jobs/{job}: {status}")
    return body.decode() if isinstance(body, bytes) else body


def main():
    so, marked = slurm.require_spank(sys.argv[1]), os.path.abspath(sys.argv[2])
    require_bpf()
    slurm.require_slurm()
    d = tmpdir()
    os.chmod(d, 0o755)
    sock = os.path.join(d, "lmkd.sock")
    with storetest.Store() as store, slurm.Slurm(mode="linuxproc",
                                                   plugstack=[f"required {so} socket={sock}"]) as s:
        token = os.path.join(d, "admin-token")
        with open(token, "w") as f:
            f.write(storetest.ADMIN_TOKEN + "\n")
        os.chmod(token, 0o600)
        store.token_file = token
        script = f"#!/bin/sh\nexec {marked} 1 6 hot\n"

        lmkd = Lmkd(d, store, interval=1, hz=99, notify_socket=sock, log_path=os.path.join(d, "lmkd.log")).start()
        try:
            off = s.sbatch(script, user=USER, args=["--lmk=off", "--lmk-notes=app=secret:input=/home/x"])
            normal = s.sbatch(script, user=USER, args=["--lmk-notes=app=open:size=2"])
            for j in (off, normal):
                s.wait_state(j, "RUNNING")
            # side by side: both run at once on this node
            check(s.job_state(off) == "RUNNING", f"job {off}: {s.job_state(off)}")
            for j in (off, normal):
                check(s.wait_done(j, timeout=90) == "COMPLETED", f"job {j}: {s.job_state(j)}\n{s.output(j)}")
            time.sleep(2.5)  # the epilogs' notices and the last interval
            noc = s.sbatch("#!/bin/sh\nexec " + marked + " 1 4\n", user=USER, args=["--lmk=nocounters"])
            s.wait_state(noc, "RUNNING")
            check(s.wait_done(noc, timeout=90) == "COMPLETED", f"job {noc}: {s.job_state(noc)}")
            time.sleep(2.5)
        finally:
            lmkd.stop()
        rep = lmkd.report()
        said = lmkd.read_log()

        # lmkd's own view: no row, rank, marker or total of the opted-out job
        check(not [r for r in rep["rows"] if r["job"] == off], f"lmkd has rows of opted-out job {off}")
        check(not [m for m in rep.get("markers", []) if m.get("job") == off], f"markers of job {off}")
        check(not [r for r in rep.get("ranks", []) if r["job"] == off], f"ranks of job {off}")
        check(all(t["comm"] == "" for t in rep["totals"] if t["job"] == off), f"commands of job {off} in totals")
        check(rep["lmkd"]["job_opt_outs_refused"] == 0 and lmkd.metric("lmkd_job_opt_outs_refused_total") == 0,
              f"opt-outs refused where allowed: {rep['lmkd']}")
        normal_rows = [r for r in rep["rows"] if r["job"] == normal]
        check(normal_rows, f"lmkd has no rows of job {normal}")

        o = store.get_ok(f"/api/v1/jobs/{off}")
        n = store.get_ok(f"/api/v1/jobs/{normal}")
        c = store.get_ok(f"/api/v1/jobs/{noc}")
        log(f"opted out {off}: samples {o['samples']}, cpu {o['cpu_seconds']}, notes {o['notes']}, "
            f"exact {o.get('exact')}; normal {normal}: samples {n['samples']}")
        # the opted-out job: its CPU time and samples, nothing else
        check(o["opted_out"] is True and n["opted_out"] is False, f"opted_out: {o['opted_out']}, {n['opted_out']}")
        check(o["samples"] >= 300, f"job {off} has {o['samples']} samples: its CPU time was not kept")
        check(abs(o["samples"] - n["samples"]) < 0.25 * n["samples"],
              f"the same program: {o['samples']} samples opted out, {n['samples']} not")
        check(o["exact"] and o["exact"]["cpu_time_ns"] > 4e9, f"job {off}'s exact CPU time: {o.get('exact')}")
        check(o["notes"] == {}, f"job {off}'s notes were stored: {o['notes']}")
        check(not o["objects"] and not o["phases"], f"job {off}: objects {o['objects']}, phases {o['phases']}")
        check(all(f["rule"] in ("idle-cores", "single-thread", "unbalanced-nodes") for f in o.get("findings", [])),
              f"job {off}: findings from samples nobody recorded: {o.get('findings')}")
        rows_off, rows_normal = job_row_counts(store, off), job_row_counts(store, normal)
        log(f"rows of {off}: {rows_off}; of {normal}: {rows_normal}")
        check(not any(rows_off.values()), f"the opted-out job {off} has rows: {rows_off}")
        for t in ("job_objects", "job_phases", "job_notes", "job_markers", "job_tasks"):
            check(rows_normal[t] > 0, f"job {normal} has no {t}")
        check(n["notes"] == {"app": "open", "size": "2"}, f"job {normal}'s notes: {n['notes']}")
        phases = store.sql("SELECT p.path FROM job_phases jp JOIN phases p ON p.id = jp.phase_id "
                           "JOIN jobs j ON j.id = jp.job_id WHERE j.job = ?", (normal,))
        check(("timestep/solve",) in phases, f"job {normal}'s phases: {phases}")
        out = lmk(store, "job", off)
        log(out)
        check("Opted out   by the user" in out, f"lmk job {off} does not say it opted out")
        check("Objects" not in out and "Time by kind" not in out, f"lmk job {off} shows empty tables")
        check("opted out by the user" in page(store, off).lower(), f"the page of job {off} does not say so")
        check("opted out" not in page(store, normal).lower(), f"the page of job {normal} says opted out")

        # --lmk=nocounters: lmkd gave the PMU to the job while it ran
        check(c["counters_released"] is True and n["counters_released"] is False,
              f"counters_released: {c['counters_released']}, {n['counters_released']}")
        check(c["samples"] > 100 and c["opted_out"] is False, f"job {noc}: {c['samples']} samples")
        check("Counters released for the user" in page(store, noc), f"the page of job {noc} does not say so")
        # released at its start, taken back at its end (lmkd's log says when)
        i = said.find("Hardware counters released")
        check(i >= 0 and said.find("Hardware counters taken back", i) > i, f"lmkd's log: {said[-2000:]}")
        log_text = lmk(store, "job", noc)
        check("released for the user" in log_text, f"lmk job {noc}: {log_text}")

        # lmkd started while an opted-out job runs: the plugin kept its
        # start notice beside the socket (root's file), lmkd reads it
        late = s.sbatch(script, user=USER, args=["--lmk=off"])
        s.wait_state(late, "RUNNING")
        kept = os.path.join(d, "jobs", late)
        # Slurm says RUNNING while the prolog may still run
        end = time.monotonic() + 30
        while not os.path.exists(kept):
            check(time.monotonic() < end, f"no kept notice {kept}\n{s.logs()}")
            time.sleep(0.2)
        st = os.stat(kept)
        check(st.st_uid == 0 and st.st_mode & 0o777 == 0o600, f"{kept}: uid {st.st_uid}, mode {st.st_mode:o}")
        # what is not root's alone, or not the job its name says, is no notice
        forged = os.path.join(d, "jobs", "99999999")
        with open(forged, "w") as f:
            f.write("LMK1 job-start job=99999999 uid=65534 user=nobody lmk=off\n")
        os.chown(forged, 65534, 65534)
        misnamed = os.path.join(d, "jobs", "99999998")
        with open(misnamed, "w") as f:
            f.write(f"LMK1 job-start job={normal} lmk=off\n")
        os.chmod(misnamed, 0o600)
        lmkd = Lmkd(d, store, interval=1, hz=99, notify_socket=sock, log_path=os.path.join(d, "lmkd-late.log")).start()
        try:
            check(s.wait_done(late, timeout=90) == "COMPLETED", f"job {late}: {s.job_state(late)}")
            time.sleep(2.5)
        finally:
            lmkd.stop()
        check(not os.path.exists(kept), f"{kept} is still there after the job's end")
        said = lmkd.read_log()
        check("Read the start notices of 1 running job(s)" in said, f"lmkd's log: {said[-1500:]}")
        for bad in (forged, misnamed):
            check(f"Ignored the kept job notice {bad}" in said, f"lmkd took {bad}: {said[-1500:]}")
            os.unlink(bad)
        check(store.get("/api/v1/jobs/99999999")[0] == 404, "a notice nobody wrote made a job")
        check(store.get_ok(f"/api/v1/jobs/{normal}")["opted_out"] is False, f"a misnamed notice opted {normal} out")
        r = store.get_ok(f"/api/v1/jobs/{late}")
        check(r["opted_out"] is True and r["samples"] > 100, f"job {late} after lmkd's start: {r}")
        check(not any(job_row_counts(store, late).values()), f"job {late} has rows: {job_row_counts(store, late)}")
        log(f"OK: lmkd started during opted-out job {late} kept only its samples ({r['samples']})")

        # lmkd.conf opt_out = forbidden: an --lmk=off job is measured as usual
        lmkd = Lmkd(d, store, interval=1, hz=99, notify_socket=sock, extra=("--opt-out", "forbidden")).start()
        try:
            refused = s.sbatch(script, user=USER, args=["--lmk=off", "--lmk-notes=app=kept"])
            check(s.wait_done(refused, timeout=90) == "COMPLETED", f"job {refused}: {s.job_state(refused)}")
            time.sleep(2.5)
        finally:
            lmkd.stop()
        r = store.get_ok(f"/api/v1/jobs/{refused}")
        check(r["opted_out"] is False and r["notes"] == {"app": "kept"}, f"job {refused}: {r}")
        # lmkd counts the refusal where it counts its notices, and for
        # Prometheus: each of the job's notices (start, end) asked for it
        rep = lmkd.report()["lmkd"]
        check(rep["job_opt_outs_refused"] == rep["job_notices"] >= 1 and
              lmkd.metric("lmkd_job_opt_outs_refused_total") == rep["job_opt_outs_refused"],
              f"the refused opt-out of job {refused}, notice by notice: report {rep}, metric "
              f"{lmkd.metric('lmkd_job_opt_outs_refused_total')}")
        check(job_row_counts(store, refused)["job_objects"] > 0, f"job {refused} has no objects")
        log(f"OK: with opt_out = forbidden, job {refused} was measured ({r['samples']} samples)")
    log("PASS")


if __name__ == "__main__":
    main()
