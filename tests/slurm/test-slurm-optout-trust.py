#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""What a user controls on lmk.so's way to lmkd cannot switch lmk off where
the site forbids it, nor set anything of a job but its notes, and no file
but root's own speaks for a job (docs/slurm.md, "The SPANK plugin").

A real Slurm in linuxproc mode whose node (slurmd's plugstack.conf) loads
lmk.so with opt-out=forbidden, a real lmkd (its own opt-out allowed: only
the plugin refuses here) and a real lmk-store. The user submits with a
slurm.conf of their own (SLURM_CONF, as any user may) whose plugstack.conf
loads lmk.so without opt-out=forbidden:
  - --lmk=off passes that sbatch; the node refuses it: the job runs and is
    measured as usual (objects and samples in the store, not opted out),
    its kept start notice says lmk=on, and slurmd's log says why.
  - --lmk-notes text meant to reach other notice fields (spaces, '=',
    quotes, '%', uid=0, job=OTHER, lmk=off, as pairs and inside values):
    the store has exactly those notes, and the job's id, user and
    measurement are its own; text with a newline, control characters,
    non-ASCII, too long, too many pairs is refused at submit, saying why.
  - A plugin of the user's own that calls itself lmk and passes --lmk and
    --lmk-notes on unchecked (tests/slurm/spank-unchecked.c): the node's
    lmk.so keeps of the notes only valid pairs, takes a --lmk value it
    does not know as none, and the job is measured as usual.
  - Start notices kept beside lmkd's socket that are not root's alone,
    put in place of the real ones of two running jobs and saying lmk=off,
    before an lmkd starts: one owned by nobody (0600), one root's but
    world-writable (0666). lmkd ignores both, says so, and measures both
    jobs as usual.

Usage: test-slurm-optout-trust.py LMK_SO LMK_MARKED UNCHECKED_SO
"""
import os
import re
import shutil
import sys
import time

import slurm
import storetest
from e2etest import Lmkd
from lmktest import check, log, require_bpf, tmpdir

USER = "nobody"
UID = 65534


def job_rows(store, job, table):
    return store.sql(f"SELECT count(*) FROM {table} t JOIN jobs j ON j.id = t.job_id WHERE j.job = ?", (job,))[0][0]


def client_conf(s, d, name, line):
    """A slurm.conf of the user's own (in d/name): the cluster's, with a
    plugstack.conf of one line."""
    cdir = os.path.join(d, name)
    os.makedirs(cdir)
    os.chmod(cdir, 0o755)
    plugstack = os.path.join(cdir, "plugstack.conf")
    with open(plugstack, "w") as f:
        f.write(line + "\n")
    with open(s.conf) as f:
        text = f.read()
    text, n = re.subn(r"^PlugStackConfig=.*$", f"PlugStackConfig={plugstack}", text, flags=re.M)
    check(n == 1, f"no PlugStackConfig in {s.conf}")
    conf = os.path.join(cdir, "slurm.conf")
    with open(conf, "w") as f:
        f.write(text)
    os.chmod(conf, 0o644)
    # cgroup.conf and the rest beside it, as Slurm looks for them there
    etc = os.path.dirname(s.conf)
    for name in os.listdir(etc):
        if name not in ("slurm.conf", "plugstack.conf"):
            os.symlink(os.path.join(etc, name), os.path.join(cdir, name))
    return {"SLURM_CONF": conf}


def submit_fails(s, env, notes, want):
    r = s.run(["sbatch", "--parsable", f"--chdir={s.workdir()}", f"--lmk-notes={notes}", "--wrap", "true"],
              user=USER, env=env, check=False)
    check(r.returncode != 0, f"sbatch --lmk-notes={notes!r} was accepted: {r.stdout!r}")
    check(want in r.stderr, f"sbatch --lmk-notes={notes!r}: {r.stderr!r} does not say {want!r}")
    log(f"--lmk-notes={notes[:40]!r}...: refused")


def wait_kept(s, path):
    """The plugin's kept start notice of a job Slurm says runs (its prolog
    may still be running)."""
    end = time.monotonic() + 30
    while not os.path.exists(path):
        check(time.monotonic() < end, f"no kept notice {path}\n{s.logs()}")
        time.sleep(0.2)
    with open(path) as f:
        return f.read()


def measured(store, job, what):
    """The job is in the store measured as usual: not opted out, its own
    user, samples and objects."""
    r = store.get_ok(f"/api/v1/jobs/{job}")
    check(r["opted_out"] is False, f"{what}: job {job} is opted out: {r}")
    check(r["user"] == USER, f"{what}: job {job}'s user is {r['user']!r}")
    check(r["samples"] >= 100, f"{what}: job {job} has {r['samples']} samples")
    objects = job_rows(store, job, "job_objects")
    check(objects > 0, f"{what}: job {job} has no objects in the store")
    log(f"OK: {what}: job {job} measured ({r['samples']} samples, {objects} objects)")
    return r


def main():
    d = tmpdir("lmk-optout-trust-")
    try:
        run(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def run(d):
    so, marked = slurm.require_spank(sys.argv[1]), os.path.abspath(sys.argv[2])
    unchecked = os.path.abspath(sys.argv[3])
    require_bpf()
    slurm.require_slurm()
    os.chmod(d, 0o755)
    sock = os.path.join(d, "lmkd.sock")
    kept_dir = os.path.join(d, "jobs")
    with storetest.Store() as store, \
            slurm.Slurm(mode="linuxproc", plugstack=[f"required {so} socket={sock} opt-out=forbidden"]) as s:
        mine = client_conf(s, d, "client", f"required {so} socket={sock}")
        # a plugin of the user's own named lmk, which passes anything on
        raw = client_conf(s, d, "client-unchecked", f"required {unchecked}")
        script = f"#!/bin/sh\nexec {marked} 1 5 hot\n"

        # The node's word counts: --lmk=off, accepted by the user's sbatch
        notes = ("app=x lmk=off uid=0 job=OTHER:uid=0:job=OTHER:lmk=off:user=root:"
                 "quote=\"it's\" `x`:eq=a=b=c:pct=100%25%0A%00:html=<b>&amp;</b>")
        want_notes = {"app": "x lmk=off uid=0 job=OTHER", "uid": "0", "job": "OTHER", "lmk": "off", "user": "root",
                      "quote": "\"it's\" `x`", "eq": "a=b=c", "pct": "100%25%0A%00", "html": "<b>&amp;</b>"}
        # what the unchecked plugin passes on: the node keeps the pairs
        # that are notes (app, x) and drops the rest
        raw_notes = ("app=ok:nl=a\nlmk=off:ctl=a\x01b:tab=a\tb:hi=caf\u00e9:long=" + "x" * 2000 +
                     ":x=y: uid=0:=z:x=dup:lmk off")
        lmkd = Lmkd(d, store, interval=1, hz=99, notify_socket=sock, log_path=os.path.join(d, "lmkd.log")).start()
        try:
            refused = s.sbatch(script, user=USER, env=mine, args=["--lmk=off", "--lmk-notes=app=refused"])
            noted = s.sbatch(script, user=USER, env=mine, args=[f"--lmk-notes={notes}"])
            unchecked_job = s.sbatch(script, user=USER, env=raw,
                                     args=["--lmk=nocounters uid=0", f"--lmk-notes={raw_notes}"])
            for j in (refused, noted):
                s.wait_state(j, "RUNNING")
            kept = wait_kept(s, os.path.join(kept_dir, refused))
            for j in (refused, noted, unchecked_job):
                check(s.wait_done(j, timeout=90) == "COMPLETED", f"job {j}: {s.job_state(j)}\n{s.output(j)}")
            time.sleep(2.5)  # the epilogs' notices and the last interval
        finally:
            lmkd.stop()
        r = measured(store, refused, "--lmk=off where the node forbids it")
        check(r["notes"] == {"app": "refused"}, f"job {refused}'s notes: {r['notes']}")
        check(" lmk=on" in kept and "lmk=off" not in kept, f"job {refused}'s kept notice: {kept!r}")
        with open(os.path.join(s.dir, "log", "slurmd.log"), errors="replace") as f:
            said = f.read()
        check(f"lmk: job {refused} asked --lmk=off, which this node forbids: measured as usual" in said,
              f"slurmd's log does not say why job {refused} was measured:\n{s.logs()}")

        # --lmk-notes: notes, exactly, and nothing else of the job
        r = measured(store, noted, "--lmk-notes with other fields in it")
        check(r["notes"] == want_notes, f"job {noted}'s notes: {r['notes']}, expected {want_notes}")
        check(r["job"] == noted and r["counters_released"] is False, f"job {noted}: {r}")
        check(store.get("/api/v1/jobs/OTHER")[0] == 404, "a note made a job OTHER")
        check(store.sql("SELECT count(*) FROM jobs WHERE job = 'OTHER'")[0][0] == 0, "a note made a job OTHER")
        log(f"OK: job {noted}'s notes are what was written: {r['notes']}")
        for bad, want in (("app=a\nlmk=off", "not key=value"),
                          ("app=a\rb", "not key=value"),
                          ("app=a\tb", "not key=value"),
                          ("app=a\x01b", "not key=value"),
                          ("app=a\x7f", "not key=value"),
                          ("app=caf\u00e9", "not key=value"),
                          ("=off", "not key=value"),
                          ("lmk off", "not key=value"),
                          ("uid=0:uid=1", "repeat a key"),
                          ("k" * 65 + "=v", "not key=value"),
                          ("app=" + "x" * 1100, "1024 bytes in all"),
                          (":".join(f"k{i}=v" for i in range(33)), "at most 32 pairs")):
            submit_fails(s, mine, bad, want)

        # passed on unchecked: the node's lmk.so keeps notes only, and
        # the job's measurement is what a word it knows says (none here)
        r = measured(store, unchecked_job, "options of an unchecked client plugin")
        check(r["notes"] == {"app": "ok", "x": "y"} and r["counters_released"] is False,
              f"job {unchecked_job}: notes {r['notes']}, counters_released {r['counters_released']}")
        log(f"OK: job {unchecked_job}: the node kept {r['notes']} of what an unchecked plugin passed on")

        # Kept notices not root's alone, in place of two running jobs'
        victims = [s.sbatch(script.replace(" 5 ", " 6 "), user=USER) for _ in range(2)]
        for v in victims:
            s.wait_state(v, "RUNNING")
        for v, (uid, mode) in zip(victims, ((UID, 0o600), (0, 0o666))):
            path = os.path.join(kept_dir, v)
            wait_kept(s, path)
            tmp = os.path.join(kept_dir, f".forged-{v}")
            with open(tmp, "w") as f:
                f.write(f"LMK1 job-start job={v} uid={UID} user={USER} lmk=off\n")
            os.chown(tmp, uid, uid)
            os.chmod(tmp, mode)
            os.replace(tmp, path)
        lmkd = Lmkd(d, store, interval=1, hz=99, notify_socket=sock,
                    log_path=os.path.join(d, "lmkd-forged.log")).start()
        try:
            for v in victims:
                check(s.wait_done(v, timeout=90) == "COMPLETED", f"job {v}: {s.job_state(v)}\n{s.output(v)}")
            time.sleep(2.5)
        finally:
            lmkd.stop()
        for v, what in zip(victims, ("a kept notice of nobody's", "a world-writable kept notice")):
            measured(store, v, what)
        said = lmkd.read_log()
        for v in victims:
            check(f"Ignored the kept job notice {os.path.join(kept_dir, v)}: Operation not permitted" in said,
                  f"lmkd took the forged notice of job {v}: {said[-1500:]}")
        check("Read the start notices" not in said, f"lmkd read a kept notice: {said[-1500:]}")
    log("PASS")


if __name__ == "__main__":
    main()
