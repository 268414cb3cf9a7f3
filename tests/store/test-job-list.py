#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The job list as the web pages and `lmk jobs` read it: GET /api/v1/jobs
with each filter (user, account, partition, state, app, name, cluster,
since, until), each sort and order, pages with their total, 400 for a bad
value naming its parameter, and people who see only their own jobs and
their accounts' with every filter (a user and an account lead named by a
trusted proxy). A job's application is its app= note, else the file name of
its executable with the most samples, and follows that executable while the
job runs; a store of a schema before the app column gets it filled in. The
total is exact up to a page count ahead and says so beyond."""
import glob
import json
import os
import sqlite3
import subprocess
import urllib.parse

from lmktest import SOURCE_ROOT, build_path, fail, log
from storetest import ADMIN_TOKEN, START, Store, check_eq, make_batch, row, workdir

# job, user, account, partition, name, app= note, executables (path, samples),
# first and last seen (seconds after START), ended
JOBS = [
    ("101", "alice", "chem", "batch", "relax", "vasp", [("/sw/vasp/bin/vasp_std", 500)], 0, 3600, True),
    ("102", "alice", "chem", "gpu", "md", None,
     [("/sw/gromacs/bin/gmx_mpi", 300), ("/usr/bin/python3.11", 50)], 600, 7200, False),
    ("103", "bob", "phys", "batch", "relax", None, [("/home/bob/a.out", 200)], 1200, 4000, True),
    ("104", "bob", "chem", "debug", "test", "lulesh", [("/opt/lulesh/lulesh2.0", 100)], 1800, 2400, True),
    ("105", "carol", "bio", "batch", "align", None, [("/usr/bin/bowtie2", 800)], 2400, 9000, False),
    ("106", "dave", "phys", "gpu", "md", "gromacs", [("/sw/gromacs/bin/gmx_mpi", 700)], 3000, 5000, True),
    ("107", "alice", "bio", "batch", "relax-2", None, [("/sw/vasp/bin/vasp_std", 50)], 3600, 8000, False),
    # the lead's own job in the account she leads: listed once
    ("108", "carol", "chem", "long", "scan", None, [("/usr/bin/python3.11", 150)], 4200, 6000, True),
]
APPS = {"101": "vasp", "102": "gmx_mpi", "103": "a.out", "104": "lulesh", "105": "bowtie2", "106": "gromacs",
        "107": "vasp_std", "108": "python3.11"}
# erin leads more accounts than the store merges SELECTs for (16)
LEADS = {"carol": ["chem"], "erin": [f"x{i}" for i in range(30)] + ["phys"]}
HEADER = "X-Remote-User"


def job_meta(j):
    jid, user, account, partition, name, app, _, first, last, ended = j
    m = {"job": jid, "user": user, "account": account, "partition": partition, "name": name,
         "first_seen": START + first, "last_seen": START + last, "ended": ended, "cluster": "demo"}
    if app:
        m["notes"] = {"app": app, "size": "64"}
    return m


def ingest_jobs(store):
    for seq, j in enumerate(JOBS):
        rows = [row(j[0], path, "exe", n, user=j[1]) for path, n in j[6]]
        rows.append(row(j[0], "/usr/lib/x86_64-linux-gnu/libc.so.6", "lib", 1, user=j[1]))
        b = make_batch(node=f"cn{seq:03d}", seq=seq, rows=rows, jobs=[job_meta(j)])
        check_eq(store.ingest(b)[0], 200, f"ingest job {j[0]}")


def info(jid):
    j = next(x for x in JOBS if x[0] == jid)
    return {"job": jid, "user": j[1], "account": j[2], "partition": j[3], "name": j[4], "app": APPS[jid],
            "first": START + j[7], "last": START + j[8], "ended": j[9],
            "cpu": sum(n for _, n in j[6]) + 1}


def expected(args, viewer=None):
    """The jobs args select, in their order, worked out from JOBS."""
    jobs = [info(j[0]) for j in JOBS]
    keep = []
    for j in jobs:
        if any(k in args and args[k] != j[k] for k in ("user", "account", "partition", "name", "app")):
            continue
        if args.get("cluster", "demo") != "demo":
            continue
        if "state" in args and j["ended"] != (args["state"] == "ended"):
            continue
        if "since" in args and j["last"] < float(args["since"]):
            continue
        if "until" in args and j["first"] > float(args["until"]):
            continue
        if viewer and j["user"] != viewer and j["account"] not in LEADS.get(viewer, []):
            continue
        keep.append(j)
    keys = {"last_seen": ("last", "first", "cpu"), "first_seen": ("first", "last", "cpu"),
            "cpu_seconds": ("cpu", "last", "first")}[args.get("sort", "last_seen")]
    # ties are broken by the job's row, which is the order of ingest here
    keep.sort(key=lambda j: tuple(j[k] for k in keys) + (int(j["job"]),), reverse=args.get("order") != "asc")
    return [j["job"] for j in keep]


def listing(store, args, viewer=None):
    path = "/api/v1/jobs?" + urllib.parse.urlencode(args)
    if viewer:
        status, _, body = store.request("GET", path, headers={HEADER: viewer})
    else:
        status, _, body = store.request("GET", path, token=ADMIN_TOKEN)
    check_eq(status, 200, f"GET {path} as {viewer or 'admin'}: {body}")
    return body


def check_list(store, args, viewer=None, want=None):
    """The list, its total and its pages of 2 against expected()."""
    want = expected(args, viewer) if want is None else want
    what = f"{args} as {viewer or 'admin'}"
    body = listing(store, args, viewer)
    check_eq([j["job"] for j in body["jobs"]], want, what)
    check_eq((body["total"], body["total_exact"], body["more"]), (len(want), True, False), f"{what}: total")
    pages = []
    for offset in range(0, len(want) + 1, 2):
        page = listing(store, {**args, "limit": 2, "offset": offset}, viewer)
        check_eq((page["total"], page["more"], page["offset"], page["limit"]), (len(want), offset + 2 < len(want),
                 offset, 2), f"{what}: page at {offset}")
        pages += [j["job"] for j in page["jobs"]]
    check_eq(pages, want, f"{what}: pages of 2")
    return body


def test_filters(store):
    everything = check_list(store, {})
    check_eq(everything["jobs"][0]["job"], "105", "most recently seen first")
    check_eq((everything["sort"], everything["order"]), ("last_seen", "desc"), "default order")
    check_eq({j["job"]: j["app"] for j in everything["jobs"]}, APPS, "each job's application")
    # spot checks written out, beside the ones worked out from JOBS
    check_list(store, {"user": "alice"}, want=["107", "102", "101"])
    check_list(store, {"account": "chem"}, want=["102", "108", "101", "104"])
    check_list(store, {"partition": "gpu"}, want=["102", "106"])
    check_list(store, {"state": "running"}, want=["105", "107", "102"])
    check_list(store, {"state": "ended"}, want=["108", "106", "103", "101", "104"])
    check_list(store, {"app": "vasp"}, want=["101"])          # the note, not the executable
    check_list(store, {"app": "gmx_mpi"}, want=["102"])       # the executable with the most samples
    check_list(store, {"name": "relax"}, want=["103", "101"])  # exact: relax-2 is another name
    check_list(store, {"cluster": "elsewhere"}, want=[])
    check_list(store, {"since": int(START) + 4500}, want=["105", "107", "102", "108", "106"])
    check_list(store, {"until": int(START) + 1000}, want=["102", "101"])
    for args in ({"user": "alice", "state": "running"}, {"partition": "batch", "name": "relax"},
                 {"account": "phys", "app": "gromacs"}, {"user": "bob", "partition": "debug", "app": "lulesh"},
                 {"since": int(START) + 3000, "until": int(START) + 3000}, {"name": "nothing"},
                 {"cluster": "demo", "state": "ended", "account": "chem"}):
        check_list(store, args)


def test_sorts(store):
    check_list(store, {"sort": "cpu_seconds"}, want=["105", "106", "101", "102", "103", "108", "104", "107"])
    check_list(store, {"sort": "first_seen", "order": "asc"},
               want=["101", "102", "103", "104", "105", "106", "107", "108"])
    for sort in ("last_seen", "first_seen", "cpu_seconds"):
        for order in ("asc", "desc"):
            for extra in ({}, {"user": "alice"}, {"state": "ended"}, {"account": "chem", "since": int(START) + 3000}):
                body = check_list(store, {"sort": sort, "order": order, **extra})
                check_eq((body["sort"], body["order"]), (sort, order), "sort and order echoed")
    # a tie on every key is broken by the job's row, in the same direction
    b = make_batch(node="cn100", seq=0, jobs=[{"job": f"t{i}", "user": "tie", "first_seen": START,
                                              "last_seen": START + 60, "ended": True} for i in (1, 2)])
    check_eq(store.ingest(b)[0], 200, "ingest ties")
    check_eq([j["job"] for j in listing(store, {"user": "tie"})["jobs"]], ["t2", "t1"], "ties, descending")
    check_eq([j["job"] for j in listing(store, {"user": "tie", "order": "asc", "sort": "cpu_seconds"})["jobs"]],
             ["t1", "t2"], "ties, ascending")


def test_bad_values(store):
    for query, field in (("state=done", "state"), ("state=RUNNING", "state"), ("sort=user", "sort"),
                         ("sort=samples", "sort"), ("order=up", "order"), ("limit=0", "limit"),
                         ("limit=1001", "limit"), ("offset=x", "offset"), ("since=yesterday", "since"),
                         ("until=7q", "until"), ("apps=vasp", None), ("account=chem&queue=gpu", None)):
        status, _, body = store.request("GET", "/api/v1/jobs?" + query, token=ADMIN_TOKEN)
        if status != 400 or not isinstance(body, dict) or "error" not in body:
            fail(f"?{query}: expected 400 with an error, got {status} {body}")
        if field:
            check_eq(body.get("field"), field, f"?{query}: the field named")
            if field not in body["error"]:
                fail(f"?{query}: the error does not name {field}: {body['error']}")


def test_viewers(store):
    # alice: her own jobs only, whatever she asks
    for args in ({}, {"partition": "gpu"}, {"user": "bob"}, {"account": "chem"}, {"state": "running"},
                 {"sort": "cpu_seconds"}, {"app": "vasp_std"}, {"name": "md"}, {"since": int(START) + 5000}):
        check_list(store, args, "alice")
    check_list(store, {"account": "chem"}, "alice", want=["102", "101"])
    check_list(store, {"user": "bob"}, "alice", want=[])
    # carol leads chem: her own jobs and chem's, each once
    check_list(store, {}, "carol", want=["105", "102", "108", "101", "104"])
    check_list(store, {"user": "bob"}, "carol", want=["104"])
    check_list(store, {"account": "phys"}, "carol", want=[])
    check_list(store, {"account": "bio"}, "carol", want=["105"])
    for args in ({"sort": "cpu_seconds"}, {"sort": "first_seen", "order": "asc"}, {"order": "asc"},
                 {"state": "running"}, {"app": "lulesh"}, {"partition": "batch"}, {"user": "carol"},
                 {"account": "chem", "sort": "cpu_seconds"}, {"until": int(START) + 2000}, {"name": "md"}):
        check_list(store, args, "carol")
    # a lead of many accounts
    check_list(store, {}, "erin", want=["106", "103"])
    for args in ({"sort": "cpu_seconds"}, {"state": "ended"}, {"account": "phys"}, {"account": "chem"}):
        check_list(store, args, "erin")
    # someone with no jobs and no accounts
    check_list(store, {}, "mallory", want=[])


def test_app_follows_the_executable(store):
    # job 102's python part overtakes gmx_mpi; job 101 keeps its note
    b = make_batch(node="cn001", seq=50, start=START + 3600,
                   rows=[row("102", "/usr/bin/python3.11", "exe", 400, user="alice"),
                         row("101", "/usr/bin/python3.11", "exe", 900, user="alice")])
    check_eq(store.ingest(b)[0], 200, "ingest more of 102")
    check_eq([j["job"] for j in listing(store, {"app": "python3.11"})["jobs"]], ["102", "108"], "app=python3.11")
    check_eq(listing(store, {"app": "gmx_mpi"})["jobs"], [], "app=gmx_mpi once python leads")
    check_eq([j["job"] for j in listing(store, {"app": "vasp"})["jobs"]], ["101"], "a note stays")
    check_eq(store.get_ok("/api/v1/jobs/102")["app"], "python3.11", "the job summary's app")


def test_cli(store):
    tokens = os.path.join(store.dir, "admin-token")
    with open(tokens, "w") as f:
        f.write(ADMIN_TOKEN + "\n")
    os.chmod(tokens, 0o600)
    base = [build_path("cli", "lmk"), "--store", store.url(), "--token-file", tokens]
    opts = ["--account", "chem", "--state", "ended", "--partition", "long", "--app", "python3.11",
            "--name", "scan", "--user", "carol", "--sort", "cpu_seconds", "--order", "asc", "--since", "30d",
            "--cluster", "demo"]
    r = subprocess.run(base + ["--json", "jobs", *opts], capture_output=True, text=True, timeout=60)
    check_eq(r.returncode, 0, f"lmk jobs {opts}: {r.stderr}")
    check_eq([j["job"] for j in json.loads(r.stdout)["jobs"]], ["108"], "lmk jobs with every filter")
    r = subprocess.run(base + ["jobs", "--limit", "3", "--offset", "3", "--sort", "first_seen"],
                       capture_output=True, text=True, timeout=60)
    check_eq(r.returncode, 0, f"lmk jobs --limit 3 --offset 3: {r.stderr}")
    lines = r.stdout.splitlines()
    check_eq([l.split()[0] for l in lines[1:4]], expected({"sort": "first_seen"})[3:6], "lmk jobs page 2")
    want = "jobs 4-6 of 8; next: --offset 6"
    if lines[-1] != want:
        fail(f"lmk jobs page 2: expected the last line {want!r}:\n{r.stdout}")
    for opt, value in (("--state", "done"), ("--sort", "size"), ("--order", "up")):
        r = subprocess.run(base + ["jobs", opt, value], capture_output=True, text=True, timeout=60)
        if r.returncode == 0 or opt[2:] not in r.stderr:
            fail(f"lmk jobs {opt} {value}: exit {r.returncode}, expected an error naming {opt[2:]}: {r.stderr}")


def test_capped_total():
    """Past offset + limit + 10,000 the count stops: total is then a lower
    bound, and total_exact says so."""
    n = 10002
    with Store() as store:
        for seq, first in enumerate(range(0, n, 5000)):
            jobs = [{"job": str(i), "user": "many" if i % 2 else "half", "first_seen": START,
                     "last_seen": START + 60, "ended": True} for i in range(first, min(first + 5000, n))]
            check_eq(store.ingest(make_batch(node="cn001", seq=seq, jobs=jobs))[0], 200, "ingest many jobs")
        body = listing(store, {"limit": 1})
        check_eq((body["total"], body["total_exact"], body["more"]), (10001, False, True), "capped total")
        body = listing(store, {"limit": 100, "offset": 5000})
        check_eq((body["total"], body["total_exact"]), (n, True), "exact total further on")
        body = listing(store, {"limit": 1, "user": "many"})
        check_eq((body["total"], body["total_exact"]), (n // 2, True), "exact total of a filter")
        body = listing(store, {"limit": 1000, "offset": 9500})
        check_eq((len(body["jobs"]), body["total"], body["total_exact"], body["more"]), (502, n, True, False),
                 "the last page")


def test_migration():
    """A store made before the app column (schema 5) gets it filled in."""
    d = workdir()
    db = os.path.join(d, "old.db")
    con = sqlite3.connect(db)
    for path in sorted(glob.glob(os.path.join(SOURCE_ROOT, "schema", "sqlite", "000[1-5]-*.sql"))):
        name = os.path.basename(path)[:-4]
        with open(path) as f:
            con.executescript(f.read())
        con.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                    "applied_at INTEGER NOT NULL)")
        con.execute("INSERT INTO schema_version VALUES (?, ?, 0)", (int(name[:4]), name))
    con.executescript("""
        INSERT INTO objects VALUES (1, '/sw/vasp/bin/vasp_std', 'exe', ''), (2, '/usr/bin/python3.11', 'exe', ''),
                                   (3, '/usr/lib/libm.so.6', 'lib', '');
        INSERT INTO jobs (id, cluster, job, user_name, first_seen, last_seen, samples, cpu_seconds)
            VALUES (1, 'demo', '1', 'alice', 100, 200, 30, 30), (2, 'demo', '2', 'bob', 100, 300, 50, 50),
                   (3, 'demo', '3', 'carol', 100, 400, 5, 5);
        INSERT INTO job_objects (job_id, object_id, samples, cpu_seconds) VALUES
            (1, 1, 10, 10), (1, 2, 20, 20), (2, 1, 40, 40), (2, 3, 10, 10), (3, 3, 5, 5);
        INSERT INTO job_notes VALUES (2, 'app', 'vasp-6.4');
    """)
    con.commit()
    con.close()
    with Store(directory=d, db=db) as store:
        apps = {j["job"]: j["app"] for j in store.get_ok("/api/v1/jobs")["jobs"]}
        check_eq(apps, {"1": "python3.11", "2": "vasp-6.4", "3": None}, "apps after the migration")
        check_eq([j["job"] for j in store.get_ok("/api/v1/jobs?app=vasp-6.4")["jobs"]], ["2"], "app filter")


def main():
    leads = os.path.join(workdir(), "leads.conf")
    with open(leads, "w") as f:
        f.write("".join(f"{a} {lead}\n" for lead, accounts in LEADS.items() for a in accounts))
    with Store(extra=["--user-header", HEADER, "--trusted-proxies", "127.0.0.1", "--leads", leads]) as store:
        ingest_jobs(store)
        for t in (test_filters, test_bad_values, test_viewers, test_cli, test_sorts,
                  test_app_follows_the_executable):  # the last two add jobs and samples
            log(f"== {t.__name__}")
            t(store)
    for t in (test_capped_total, test_migration):
        log(f"== {t.__name__}")
        t()
    log("PASS")


if __name__ == "__main__":
    main()
