#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The application mix (GET /api/v1/apps, docs/api.md): CPU time per
application, user, account or partition over whole days, the top N and
"everything else", week by week. An application is the app= note, else the
package that installed the top executable, else its file name. A job whose
top executable changes (a job script's shell first, the solver later) or
whose metadata comes late is moved whole to its new key, leaving nothing
under the old one. Figures are checked against what the batches pushed and
against the job list; people see no one else's use; bad queries get 400;
`lmk apps` prints the same."""
import glob
import os
import sqlite3
import subprocess

from lmktest import SOURCE_ROOT, build_path, fail, log
from storetest import START, Store, check_eq, make_batch, row, workdir

DAY = 86400
GMX = "/opt/spack/opt/spack/linux/gcc-12/gromacs-2023.1-abcdef/bin/gmx_mpi"
INVENTORY = {
    "format": "lmk-inventory", "version": 1, "digest": "c" * 64,
    "packages": [
        {"manager": "spack", "name": "gromacs", "version": "2023.1", "hash": "abcdef",
         "prefix": "/opt/spack/opt/spack/linux/gcc-12/gromacs-2023.1-abcdef", "size": 1, "files": [GMX]},
    ],
}


def job(jid, user, account, partition, notes=None, start=START):
    j = {"job": jid, "user": user, "account": account, "partition": partition, "first_seen": start,
         "last_seen": start + 60}
    if notes:
        j["notes"] = notes
    return j


def test_migration():
    """A store made before the mix (schema 12) gets its jobs' days."""
    d = workdir()
    db = os.path.join(d, "old.db")
    con = sqlite3.connect(db)
    for path in sorted(glob.glob(os.path.join(SOURCE_ROOT, "schema", "sqlite", "00*.sql"))):
        name = os.path.basename(path)[:-4]
        if int(name[:4]) > 12:
            continue
        with open(path) as f:
            con.executescript(f.read())
        con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                    "applied_at INTEGER NOT NULL)")
        con.execute("INSERT INTO schema_version VALUES (?, ?, 0)", (int(name[:4]), name))
    day = int(START) // DAY * DAY
    con.executescript(f"""
        INSERT INTO objects (id, path, kind, build_id) VALUES (1, '/sw/vasp/bin/vasp_std', 'exe', ''),
            (2, '/usr/bin/python3.11', 'exe', '');
        INSERT INTO jobs (id, cluster, job, user_name, account, first_seen, last_seen, samples, cpu_seconds, app)
            VALUES (1, 'demo', '1', 'alice', 'p1', {day + 100}, {day + DAY + 100}, 30, 30, 'python3.11'),
                   (2, 'demo', '2', 'bob', 'p2', {day + 100}, {day + 300}, 50, 50, 'vasp-6.4');
        INSERT INTO job_objects (job_id, object_id, samples, cpu_seconds) VALUES (1, 2, 30, 30), (2, 1, 50, 50);
        INSERT INTO job_notes VALUES (2, 'app', 'vasp-6.4');
        INSERT INTO job_timeline (job_id, grain, node_id, t, seconds, samples, cpu_seconds) VALUES
            (1, 86400, 1, {day}, 60, 10, 10), (1, 86400, 1, {day + DAY}, 60, 20, 20), (1, 86400, 2, {day}, 60, 0, 0),
            (2, 86400, 1, {day}, 60, 50, 50);
    """)
    con.commit()
    con.close()
    with Store(directory=d, db=db) as store:
        o = store.get_ok(f"/api/v1/apps?since={day - 7 * DAY}&until={day + 2 * DAY}")
        got = [(g["name"], g["kind"], g["samples"], g["runs"]) for g in o["groups"]]
        check_eq(got, [("vasp-6.4", "note", 50, 1), ("python3.11", "executable", 30, 1)], "the mix after the migration")
        check_eq(store.sql("SELECT job, app_object FROM jobs ORDER BY job"), [("1", 2), ("2", None)],
                 "the executables apps came from")
        o = store.get_ok(f"/api/v1/apps?since={day + DAY}&until={day + 2 * DAY}")
        check_eq([(g["name"], g["samples"], g["runs"]) for g in o["groups"]], [("python3.11", 20, 0)],
                 "a job's second day, without its run")


def test_later_batches():
    """A job's application as its later batches find it: an app= note keeps
    naming it whatever runs later (its first claim stays), an empty note
    names nothing, and without a note the executable with the most samples
    so far names it, also when that changes with a later batch."""
    with Store() as s:
        jobs = [job("2001", "erin", "p3", "cpu", {"app": "wrf"}), job("2002", "erin", "p3", "cpu", {"app": ""}),
                job("2003", "erin", "p3", "cpu")]
        first = [row(j, "/opt/wrf/wrf.exe", "exe", 100, user="erin") for j in ("2001", "2002", "2003")]
        later = [row(j, "/usr/bin/python3.11", "exe", 300, user="erin") for j in ("2001", "2002", "2003")]
        check_eq(s.ingest(make_batch(seq=1, jobs=jobs, rows=first))[0], 200, "first batch")
        check_eq([s.get_ok(f"/api/v1/jobs/{j}")["app"] for j in ("2001", "2002", "2003")], ["wrf", "wrf.exe", "wrf.exe"],
                 "the apps after the first batch")
        # the later batch claims another note: the first claim stays
        jobs[0]["notes"] = {"app": "other"}
        check_eq(s.ingest(make_batch(seq=2, start=START + 60, jobs=jobs, rows=later))[0], 200, "later batch")
        check_eq([s.get_ok(f"/api/v1/jobs/{j}")["app"] for j in ("2001", "2002", "2003")],
                 ["wrf", "python3.11", "python3.11"], "the apps after a later batch with more time elsewhere")
        got = [(g["name"], g["kind"], g["samples"]) for g in s.get_ok("/api/v1/apps?since=14d")["groups"]]
        check_eq(got, [("python3.11", "executable", 800), ("wrf", "note", 400)], "the mix follows the apps")


def test_bystanders():
    """An executable with a handful of a job's samples does not name it
    when a command of another name holds ten times as many: the BLAS
    driver whose time is all in the library is its command, not the
    slurmstepd that took two samples in its cgroup. An executable the
    command's name starts is never a bystander (comm python3 runs
    python3.11, whose own code is a sliver beside numpy's)."""
    with Store() as s:
        jobs = [job(j, "erin", "p3", "cpu") for j in ("3001", "3002", "3003")]
        rows = [row("3001", "/usr/sbin/slurmstepd", "exe", 2, user="erin", comm="slurmstepd"),
                row("3001", "/usr/lib/libopenblas.so.0", "lib", 581, user="erin", comm="lmk-dgemm"),
                row("3002", "/usr/sbin/slurmstepd", "exe", 2, user="erin", comm="slurmstepd"),
                row("3002", "/usr/bin/python3.11", "exe", 1, user="erin", comm="python3"),
                row("3002", "/usr/lib/libopenblas.so.0", "lib", 900, user="erin", comm="python3"),
                # a tenth of the command's samples is no bystander
                row("3003", "/usr/sbin/slurmstepd", "exe", 60, user="erin", comm="slurmstepd"),
                row("3003", "/usr/lib/libopenblas.so.0", "lib", 600, user="erin", comm="lmk-dgemm")]
        check_eq(s.ingest(make_batch(seq=1, jobs=jobs, rows=rows))[0], 200, "batch")
        check_eq([s.get_ok(f"/api/v1/jobs/{j}")["app"] for j in ("3001", "3002", "3003")],
                 ["lmk-dgemm", "python3.11", "slurmstepd"], "the apps")
        got = sorted((g["name"], g["kind"], g["samples"]) for g in s.get_ok("/api/v1/apps?since=14d")["groups"])
        check_eq(got, [("lmk-dgemm", "command", 583), ("python3.11", "executable", 903),
                       ("slurmstepd", "executable", 660)], "the mix")


def main():
    log("== test_migration")
    test_migration()
    log("== test_later_batches")
    test_later_batches()
    log("== test_bystanders")
    test_bystanders()
    hdr = "X-Remote-User"
    with Store(extra=["--user-header", hdr, "--trusted-proxies", "127.0.0.1 ::1"]) as s:
        old = START - 8 * DAY
        pushes = [
            # the week before: one lammps run
            make_batch(seq=1, start=old, jobs=[job("1000", "alice", "p1", "cpu", {"app": "lammps"}, old)],
                       rows=[row("1000", "/opt/lammps/bin/lmp", "exe", 250)]),
            make_batch(seq=2, jobs=[job("1001", "alice", "p1", "cpu", {"app": "lammps"}),
                                    job("1002", "bob", "p2", "gpu"), job("1003", "carol", "p1", "cpu")],
                       rows=[row("1001", "/opt/lammps/bin/lmp", "exe", 600),
                             row("1002", GMX, "exe", 300, user="bob"),
                             row("1003", "/home/carol/a.out", "exe", 100, user="carol"),
                             row(None, "[idle]", "idle", 77)]),
            # dave's job: its shell first and no metadata yet ...
            make_batch(seq=3, start=START + 60, rows=[row("1004", "/usr/bin/bash", "exe", 50, user="dave")]),
            # ... then the solver, with Slurm's metadata
            make_batch(seq=4, start=START + 120, jobs=[job("1004", "dave", "p2", "cpu")],
                       rows=[row("1004", "/home/dave/solver", "exe", 500, user="dave")]),
        ]
        pushes[1]["inventory"] = INVENTORY
        for b in pushes:
            check_eq(s.ingest(b)[0], 200, f"batch {b['batch']['seq']}")

        o = s.get_ok("/api/v1/apps?since=14d")
        got = [(g["name"], g["kind"], g["samples"], g["runs"]) for g in o["groups"]]
        check_eq(got, [("lammps", "note", 850, 2), ("solver", "executable", 550, 1),
                       ("gromacs", "package", 300, 1), ("a.out", "executable", 100, 1)],
                 "time per application: note, package, file name; the job that changed moved whole")
        check_eq((o["total_samples"], o["total_runs"], o["other"]), (1800, 5, None),
                 "totals are the jobs' samples (idle is no application)")
        jobs = s.get_ok("/api/v1/jobs?since=14d&limit=100")["jobs"]
        check_eq(sum(j["samples"] for j in jobs), o["total_samples"], "the same samples as the job list")
        check_eq(o["groups"][0]["cpu_seconds"], 850.0, "CPU seconds at 1 Hz")
        low, high = o["groups"][0]["share_ci95"]
        if not (low < o["groups"][0]["share"] < high):
            fail(f"a share with its interval: {o['groups'][0]}")
        check_eq(s.sql("SELECT count(*) FROM app_days d JOIN mix_keys k ON k.id = d.mix_key WHERE k.app = 'bash'"),
                 [(0,)], "nothing left under the shell's key")
        check_eq(s.sql("SELECT count(*) FROM app_dim_days WHERE value IN ('bash', '')"), [(0,)],
                 "nor under its application, or under the user it had before its metadata came")
        # the per-dimension sums (unfiltered answers) agree with the keys (filtered ones)
        for by, field in (("app", "app"), ("account", "account"), ("partition", "partition"), ("user", "user")):
            for g in s.get_ok(f"/api/v1/apps?since=14d&by={by}")["groups"]:
                if by == "app":
                    continue
                one = s.get_ok(f"/api/v1/apps?since=14d&by={by}&{field}={g['name']}")
                check_eq([(x["name"], x["samples"], x["runs"]) for x in one["groups"]],
                         [(g["name"], g["samples"], g["runs"])], f"{by} {g['name']}: both ways")

        # the top and everything else
        o = s.get_ok("/api/v1/apps?since=14d&top=2")
        check_eq([g["name"] for g in o["groups"]], ["lammps", "solver"], "top 2")
        check_eq((o["other"]["groups"], o["other"]["samples"], o["other"]["runs"]), (2, 400, 2), "everything else")
        # weeks: each week's groups and other add up to the week, the weeks to the total
        weeks = o["weeks"]
        if len(weeks) not in (2, 3):
            fail(f"14 days make 2 or 3 weeks: {weeks}")
        for w in weeks:
            if abs(sum(w["groups"]) + w["other"] - w["cpu_seconds"]) > 1e-6 or w["start"] % DAY != 0:
                fail(f"a week that does not add up: {w}")
            if (w["start"] // DAY) % 7 != 4:
                fail(f"weeks start on Monday (UTC): {w}")
        check_eq(sum(w["samples"] for w in weeks), 1800, "the weeks hold every sample")
        old_week = [w for w in weeks if w["start"] <= old < w["start"] + 7 * DAY]
        check_eq((len(old_week), old_week[0]["groups"][0] if old_week else None), (1, 250.0),
                 "the earlier lammps run in its own week")

        # a shorter range leaves the earlier run out; whole days
        o = s.get_ok(f"/api/v1/apps?since={int(START)}&until={int(START) + 3600}")
        check_eq((o["since"], o["until"] - o["since"]), (int(START) // DAY * DAY, DAY), "whole days")
        check_eq(o["groups"][0]["samples"], 600, "lammps within the day")

        # by account, user and partition, and filters
        by = {g["name"]: g["samples"] for g in s.get_ok("/api/v1/apps?since=14d&by=account")["groups"]}
        check_eq(by, {"p1": 950, "p2": 850}, "by account")
        by = {g["name"]: g["samples"] for g in s.get_ok("/api/v1/apps?since=14d&by=partition")["groups"]}
        check_eq(by, {"cpu": 1500, "gpu": 300}, "by partition")
        by = {g["name"]: g["samples"] for g in s.get_ok("/api/v1/apps?since=14d&by=user&account=p1")["groups"]}
        check_eq(by, {"alice": 850, "carol": 100}, "by user, of one account")
        by = {g["name"]: g["samples"] for g in s.get_ok("/api/v1/apps?since=14d&by=user&app=gromacs")["groups"]}
        check_eq(by, {"bob": 300}, "who uses gromacs")

        # people: applications yes, other people no
        status, _, body = s.request("GET", "/api/v1/apps?since=14d", headers={hdr: "bob"})
        check_eq((status, len(body["groups"])), (200, 4), "a person sees the site's mix")
        for q in ("by=user", "user=alice"):
            status, _, body = s.request("GET", f"/api/v1/apps?{q}", headers={hdr: "bob"})
            check_eq((status, body.get("field")), (403, q.split("=")[0]), f"{q} for a person: {body}")
        status, _, body = s.request("GET", "/api/v1/apps?since=14d&user=bob", headers={hdr: "bob"})
        check_eq((status, [g["name"] for g in body["groups"]]), (200, ["gromacs"]), "bob's own mix")

        # bad queries
        for q, field in (("by=node", "by"), ("top=0", "top"), ("since=later", "since"), ("color=red", None),
                         ("since=1d&until=3d", "until")):
            status, _, body = s.get(f"/api/v1/apps?{q}")
            if status != 400 or (field and body.get("field") != field):
                fail(f"{q}: expected 400 naming {field}, got {status} {body}")

        # the page shows the JSON's figures, as an admin and as a person
        status, headers, page = s.get("/site/apps?since=14d&top=2")
        check_eq((status, headers.get("content-type", "").split(";")[0]), (200, "text/html"), "the page")
        for want in ("lammps", "solver", "Everything else (2 more)", "47.2%", 'class="mix-0"', "mix-other",
                     "lammps: 4.2 core-min", "<option value=\"user\""):
            if want not in page:
                fail(f"/site/apps lacks {want!r}")
        status, _, page = s.request("GET", "/site/apps?since=14d", headers={hdr: "bob"})
        if status != 200 or "gromacs" not in page or '<option value="user"' in page:
            fail(f"/site/apps for a person: {status} {page[:300]}")
        status, headers, page = s.request("GET", "/site/apps?by=user", headers={hdr: "bob"})
        check_eq((status, headers.get("content-type", "").split(";")[0]), (403, "text/html"),
                 "time per user for a person: an error page")

        # packages, families and objects of an account's, partition's or cluster's jobs, each job
        # prorated to the part of it inside the range
        o = s.get_ok("/api/v1/packages?since=14d&account=p2")
        check_eq((o["grain"], o["total_samples"], [(p["name"], p["samples"], p["share"]) for p in o["packages"]]),
                 ("jobs", 850, [("gromacs", 300, 0.352941)]), "the packages of account p2's jobs")
        o = s.get_ok("/api/v1/packages?since=14d&account=p1")
        check_eq([(p["name"], p["samples"]) for p in o["packages"]], [("gromacs", 0)], "none of it in p1's jobs")
        o = s.get_ok("/api/v1/objects?since=14d&partition=gpu")
        check_eq([(x["object"], x["samples"]) for x in o["objects"]], [(GMX, 300)], "the gpu partition's objects")
        o = s.get_ok(f"/api/v1/objects?since={int(old) + 30}&until={int(old) + 90}&account=p1&cluster=demo")
        check_eq((o["since"], [(x["object"], x["samples"]) for x in o["objects"]]),
                 (int(old) + 30, [("/opt/lammps/bin/lmp", 125)]), "half of a job's minute, half its samples")
        check_eq(s.get_ok("/api/v1/families?since=14d&cluster=elsewhere")["total_samples"], 0, "another cluster")

        # a job whose time is all in a library: named after its command
        check_eq(s.ingest(make_batch(seq=5, start=START + 180, jobs=[job("1005", "erin", "p3", "cpu")],
                                     rows=[row("1005", "/usr/lib/libopenblas.so.0", "lib", 40, user="erin",
                                               comm="blasdrv"),
                                           row("1005", "/usr/lib/libc.so.6", "lib", 2, user="erin", comm="sh")]))[0],
                 200, "a job without executable samples")
        o = s.get_ok("/api/v1/apps?since=14d&app=blasdrv")
        check_eq([(g["name"], g["kind"], g["samples"]) for g in o["groups"]], [("blasdrv", "command", 42)],
                 "a job named after its command")

        # the command
        lmk = [build_path("cli", "lmk"), "--store", s.url(), "--token-file", s.token_file]
        r = subprocess.run(lmk + ["apps", "--since", "14d", "--top", "3"], capture_output=True, text=True)
        if r.returncode != 0 or not all(w in r.stdout for w in ("lammps", "solver", "gromacs", "46.1%",
                                                                "everything else")):
            fail(f"lmk apps: {r.returncode} {r.stdout} {r.stderr}")
        log(r.stdout)
        r = subprocess.run(lmk + ["top", "--packages", "--since", "14d", "--account", "p2"], capture_output=True,
                           text=True)
        if r.returncode != 0 or "gromacs 2023.1" not in r.stdout or "of these jobs" not in r.stdout:
            fail(f"lmk top --packages --account p2: {r.returncode} {r.stdout} {r.stderr}")
        log(r.stdout)
        r = subprocess.run(lmk + ["apps", "--since", "14d", "--by", "account", "--weekly"], capture_output=True,
                           text=True)
        if r.returncode != 0 or "p1" not in r.stdout or "week of" not in r.stdout:
            fail(f"lmk apps --by account --weekly: {r.returncode} {r.stdout} {r.stderr}")
        log(r.stdout)
    log("PASS")


if __name__ == "__main__":
    main()
