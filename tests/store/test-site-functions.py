#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The site's functions (issue 31): version 2 batches of three jobs of two
real users (MUNGE credentials, a real munged) through the real lmk-store,
then GET /api/v1/functions (ranked, group=family, filters, CSV) and GET
/api/v1/objects/{object}/functions, every number worked out here from
what was sent; and what each person sees: their own jobs' functions, a
lead their account's, an admin all.

Jobs: 7001 and 7003 are lmkalice's (account chem, /apps/chem/solver,
OpenBLAS's dgemm), 7002 lmkbob's (account phys, /home/lmkbob/zipper with
zlib and OpenBLAS's dgemm); 7003 runs a day after the others."""
import csv
import io
import json
import os
import subprocess
import urllib.parse

from browser import Browser, browser_available
from lmktest import build_path, check, fail, log, skip
from people import credential, with_people
from storetest import ADMIN_TOKEN, START, Store, check_eq, function, make_batch, row

HZ = 10
SOLVER, ZIPPER = "/apps/chem/solver", "/home/lmkbob/zipper"
BLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"
ZLIB = "/usr/lib/x86_64-linux-gnu/libz.so.1.2.13"
BUILD = {SOLVER: "a1", ZIPPER: "b2", BLAS: "c3", ZLIB: "d4"}
HOSTILE = "std::map<int, std::vector<T&>>::operator<(a&b) </script><script>alert(1)</script>"
DAY = 86400


def frow(job, obj, kind, samples, user, cycles=None, instructions=None, phase=""):
    r = row(job, obj, kind, samples, user=user, phase=phase, comm="solver" if user == "lmkalice" else "zipper", cycles=cycles,
            instructions=instructions)
    r["build_id"] = BUILD.get(obj)
    return r


def fn(job, obj, samples, name, cycles=None, instructions=None, phase=""):
    return function(job, obj, samples, name=name, build_id=BUILD[obj], cycles=cycles, instructions=instructions,
                    phase=phase)


def job(jid, user, account, start):
    return {"job": jid, "user": user, "account": account, "partition": "batch", "cluster": "demo",
            "first_seen": start, "last_seen": start + 60}


T1, T3 = START, START + DAY
TYPE_B = {"cpu_model": "AMD EPYC 7763 64-Core Processor", "sockets": 2, "cores": 128, "threads": 256,
          "memory_bytes": 540950220800, "kernel": "6.12.10-cray", "gpus": [], "gpus_other": 0}
BATCHES = [
    make_batch(node="cn1", seq=1, start=T1, frequency=HZ,
               jobs=[job("7001", "lmkalice", "chem", T1), job("7002", "lmkbob", "phys", T1)],
               rows=[frow("7001", SOLVER, "exe", 400, "lmkalice"),
                     frow("7001", BLAS, "lib", 500, "lmkalice", cycles=10 ** 9, instructions=3 * 10 ** 9),
                     frow("7001", "[kernel]", "kernel", 100, "lmkalice"),
                     frow("7002", ZIPPER, "exe", 100, "lmkbob"),
                     frow("7002", ZLIB, "lib", 300, "lmkbob"),
                     frow("7002", BLAS, "lib", 200, "lmkbob")],
               functions=[fn("7001", SOLVER, 300, "solve_kernel"), fn("7001", SOLVER, 100, HOSTILE),
                          fn("7001", BLAS, 450, "dgemm_kernel_HASWELL", 9 * 10 ** 8, 27 * 10 ** 8),
                          fn("7001", BLAS, 50, "dgemm_itcopy_HASWELL"),
                          fn("7002", ZIPPER, 100, "main"),
                          fn("7002", ZLIB, 200, "deflate_slow"), fn("7002", ZLIB, 100, "longest_match"),
                          fn("7002", BLAS, 200, "dgemm_kernel_HASWELL", 10 ** 9, 2 * 10 ** 9)]),
    # the same jobs' next batch: dgemm again (not a new job for it)
    make_batch(node="cn1", seq=2, start=T1 + 60, frequency=HZ,
               jobs=[job("7001", "lmkalice", "chem", T1)],
               rows=[frow("7001", BLAS, "lib", 100, "lmkalice")],
               functions=[fn("7001", BLAS, 100, "dgemm_kernel_HASWELL")]),
    make_batch(node="cn2", seq=1, start=T3, frequency=HZ,
               jobs=[job("7003", "lmkalice", "chem", T3)],
               rows=[frow("7003", SOLVER, "exe", 200, "lmkalice", phase="solve"),
                     frow("7003", BLAS, "lib", 300, "lmkalice", phase="solve")],
               functions=[fn("7003", SOLVER, 200, "solve_kernel", phase="solve"),
                          fn("7003", BLAS, 300, "dgemm_kernel_HASWELL", phase="solve")]),
]
# every kind counts to the jobs' time
TOTAL = 400 + 500 + 100 + 100 + 300 + 200 + 100 + 200 + 300
# (object, function): samples, jobs, users, apps, family
WANT = {
    (BLAS, "dgemm_kernel_HASWELL"): (450 + 200 + 100 + 300, 3, 2, 2, "blas-level3"),
    (SOLVER, "solve_kernel"): (500, 2, 1, 1, None),
    (ZLIB, "deflate_slow"): (200, 1, 1, 1, "compression"),
    (SOLVER, HOSTILE): (100, 1, 1, 1, None),
    (ZLIB, "longest_match"): (100, 1, 1, 1, "compression"),
    (ZIPPER, "main"): (100, 1, 1, 1, None),
    (BLAS, "dgemm_itcopy_HASWELL"): (50, 1, 1, 1, "blas-level3"),
}
BOB = {(ZLIB, "deflate_slow"), (ZLIB, "longest_match"), (ZIPPER, "main"), (BLAS, "dgemm_kernel_HASWELL")}
SINCE = int(START) - DAY


class Person:
    def __init__(self, store, sock, user):
        self.store, self.sock, self.user = store, sock, user

    def get(self, path):
        cred = credential(self.user, self.sock, f"lmk-store GET {path.split('?')[0]}")
        return self.store.request("GET", path, headers={"Authorization": f"MUNGE {cred}"})


def ranking(body):
    return {(e["object"], e["function"]): e for e in body["functions"]}


def check_admin(s):
    o = s.get_ok(f"/api/v1/functions?since={SINCE}")
    check_eq(o["total_samples"], TOTAL, "the jobs' samples, every kind")
    got = ranking(o)
    check_eq(sorted(got), sorted(WANT), "the functions")
    check_eq([e["samples"] for e in o["functions"]], sorted((w[0] for w in WANT.values()), reverse=True),
             "ranked by samples (core-hours)")
    for k, (samples, jobs, users, apps, family) in WANT.items():
        e = got[k]
        check_eq((e["samples"], e["jobs"], e["users"], e["apps"], e["family"]), (samples, jobs, users, apps, family),
                 f"{k[1]}: samples, jobs, users, apps, family")
        check_eq(e["share"], round(samples / TOTAL, 6), f"{k[1]}: share")
        check_eq(e["core_hours"], round(samples / HZ / 3600, 6), f"{k[1]}: core-hours")
        check(e["share_ci95"][0] <= e["share"] <= e["share_ci95"][1], f"{k[1]}: share within its interval")
    dg = got[(BLAS, "dgemm_kernel_HASWELL")]
    # over every job: those of the range, by their samples over all time
    check_eq(dg["top_apps"], [{"app": "solver", "samples": None}, {"app": "zipper", "samples": None}],
             "dgemm's applications")
    o = s.get_ok(f"/api/v1/functions?since={SINCE}&account=chem")
    check_eq(ranking(o)[(BLAS, "dgemm_kernel_HASWELL")]["top_apps"], [{"app": "solver", "samples": 850}],
             "narrowed: the applications' samples in the range")
    check_eq((dg["library"], dg["ipc"]), ("openblas", round((27 + 20) / 19, 3)), "dgemm: library and IPC")
    check_eq(got[(ZLIB, "deflate_slow")]["ipc"], None, "no counters, no IPC")

    o = s.get_ok(f"/api/v1/functions?since={SINCE}&group=family")
    fams = {e["family"]: e for e in o["functions"]}
    check_eq(fams["blas-level3"]["samples"], 1050 + 50, "BLAS level-3 summed")
    check_eq(fams["blas-level3"]["functions"], 2, "BLAS level-3: two functions")
    check_eq(fams["compression"]["samples"], 300, "compression summed")
    check_eq(fams[None]["samples"], 700, "functions of no family")
    o = s.get_ok(f"/api/v1/functions?since={SINCE}&family=compression")
    check_eq(sorted(ranking(o)), [(ZLIB, "deflate_slow"), (ZLIB, "longest_match")], "family=compression")
    o = s.get_ok(f"/api/v1/functions?since={SINCE}&app=zipper")
    check_eq(sorted(ranking(o)), sorted(BOB), "app=zipper")
    check_eq(o["total_samples"], 600, "app=zipper: its jobs' samples")
    o = s.get_ok(f"/api/v1/functions?since={SINCE}&user=lmkalice")
    check_eq(ranking(o)[(BLAS, "dgemm_kernel_HASWELL")]["samples"], 850, "user=lmkalice: her dgemm")
    o = s.get_ok(f"/api/v1/functions?since={SINCE}&account=phys")
    check_eq(sorted(ranking(o)), sorted(BOB), "account=phys")
    # a node type: job 7003's nodes only
    node_type = s.get_ok("/api/v1/jobs/7003")["node_type"]
    check(node_type is not None, "job 7003 has its node's type")
    o = s.get_ok(f"/api/v1/functions?since={SINCE}&node_type={urllib.parse.quote(node_type)}")
    check_eq((sorted((k, e["samples"]) for k, e in ranking(o).items()), o["total_samples"]),
             (sorted([((BLAS, "dgemm_kernel_HASWELL"), 300), ((SOLVER, "solve_kernel"), 200)]), 500),
             "node_type: the jobs on that type of node")
    # a range of the last day only: job 7003
    o = s.get_ok(f"/api/v1/functions?since={int(T3)}")
    check_eq(sorted((k, e["samples"]) for k, e in ranking(o).items()),
             sorted([((BLAS, "dgemm_kernel_HASWELL"), 300), ((SOLVER, "solve_kernel"), 200)]), "the last day")
    o = s.get_ok(f"/api/v1/functions?since={SINCE}&limit=2")
    check_eq((len(o["functions"]), o["truncated"]), (2, True), "limit=2")
    for path, field in (("/api/v1/functions?group=object", "group"), ("/api/v1/functions?limit=0", "limit"),
                        ("/api/v1/functions?node_type=nosuch", "node_type"), ("/api/v1/functions?x=1", None)):
        st, _, body = s.get(path)
        check_eq(st, 400, f"GET {path}: {body}")
        if field:
            check_eq(body.get("field"), field, f"GET {path}: the field")

    st, hdrs, text = s.get(f"/api/v1/functions?since={SINCE}&format=csv")
    check_eq((st, hdrs.get("content-disposition")), (200, 'attachment; filename="lmk-site-functions.csv"'), "CSV")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    check_eq(rows[0][:4], ["family", "function", "object", "kind"], "CSV header")
    check_eq(len(rows) - 1, len(WANT), "CSV rows")
    check(any(r[1] == HOSTILE for r in rows), "the hostile name as sent in the CSV")

    o = s.get_ok(f"/api/v1/objects/{BLAS}/functions?since={SINCE}")
    check_eq(sorted((e["function"], e["samples"]) for e in o["functions"]),
             [("dgemm_itcopy_HASWELL", 50), ("dgemm_kernel_HASWELL", 1050)], "OpenBLAS's functions")
    check_eq(sorted((u["user"], u["samples"]) for u in o["users"]), [("lmkalice", 900), ("lmkbob", 200)],
             "OpenBLAS's users")
    check_eq(sorted((a["app"], a["samples"]) for a in o["apps"]), [("solver", 900), ("zipper", 200)],
             "OpenBLAS's applications")


def check_people(s, sock):
    alice, bob, carol = Person(s, sock, "lmkalice"), Person(s, sock, "lmkbob"), Person(s, sock, "lmkcarol")
    st, _, o = alice.get(f"/api/v1/functions?since={SINCE}")
    check_eq(st, 200, f"alice: {o}")
    check_eq(sorted(ranking(o)), sorted(k for k in WANT if k not in BOB or k[1] == "dgemm_kernel_HASWELL"),
             "alice sees her jobs' functions only")
    check_eq(ranking(o)[(BLAS, "dgemm_kernel_HASWELL")]["samples"], 850, "alice: her dgemm, not bob's")
    check_eq(ranking(o)[(BLAS, "dgemm_kernel_HASWELL")]["users"], 1, "alice: one user")
    check_eq(o["total_samples"], 400 + 500 + 100 + 100 + 200 + 300, "alice: her jobs' samples")
    st, _, o = alice.get(f"/api/v1/functions?since={SINCE}&user=lmkbob")
    check_eq((st, o["functions"]), (200, []), "alice asking for bob's: nothing")
    st, _, o = bob.get(f"/api/v1/functions?since={SINCE}")
    check_eq(sorted(ranking(o)), sorted(BOB), "bob sees his")
    st, _, o = bob.get(f"/api/v1/objects/{BLAS}/functions?since={SINCE}")
    check_eq([(u["user"], u["samples"]) for u in o["users"]], [("lmkbob", 200)], "bob: OpenBLAS's users are him")
    st, _, o = carol.get(f"/api/v1/functions?since={SINCE}")
    check_eq(ranking(o)[(BLAS, "dgemm_kernel_HASWELL")]["samples"], 850, "carol leads chem: alice's")
    check(not any(k in ranking(o) for k in BOB - {(BLAS, "dgemm_kernel_HASWELL")}), "carol: not phys's")
    # narrowed to an account, as the other site views: for its leads (and
    # admins) only, whether the account exists or not; its own member is no lead
    st, _, o = carol.get(f"/api/v1/functions?since={SINCE}&account=chem")
    check_eq((st, sorted(ranking(o))), (200, sorted(k for k in WANT if k not in BOB or k[1] == "dgemm_kernel_HASWELL")),
             "carol narrows to chem, which she leads")
    for who, path in ((alice, f"/api/v1/functions?since={SINCE}&account=chem"),
                      (bob, f"/api/v1/functions?since={SINCE}&account=chem"),
                      (carol, f"/api/v1/functions?since={SINCE}&account=phys&group=family"),
                      (bob, f"/api/v1/functions?since={SINCE}&account=nosuch"),
                      (bob, f"/api/v1/objects/{BLAS}/functions?since={SINCE}&account=chem")):
        st, _, o = who.get(path)
        check_eq((st, o.get("field")), (403, "account"), f"{who.user}: {path}: {o}")


def lmk(s, token, *args, expect=0):
    p = subprocess.run([build_path("cli", "lmk"), "--store", s.url(), "--token-file", token, *args],
                       capture_output=True, timeout=60)
    out = p.stdout.decode()
    if p.returncode != expect:
        fail(f"lmk {' '.join(args)}: exit {p.returncode}, want {expect}\n{out}\n{p.stderr.decode()}")
    return out


def check_cli(s, d):
    token = os.path.join(d, "admin-token")
    with open(token, "w") as f:
        f.write(ADMIN_TOKEN + "\n")
    os.chmod(token, 0o600)
    since = str(SINCE)
    out = lmk(s, token, "top", "--functions", "--since", since)
    log(out)
    lines = [l for l in out.splitlines() if l.rstrip().endswith(")")]
    check("dgemm_kernel_HASWELL" in lines[2] and "blas-level3" in lines[2], f"lmk top --functions: dgemm first: {lines}")
    check(HOSTILE[:50] in out, "the hostile name printed as sent (cut to its column)")
    o = json.loads(lmk(s, token, "--json", "top", "--functions", "--since", since))
    api = s.get_ok(f"/api/v1/functions?since={since}&limit=20")
    # until is "now" at each call: a second may pass between the two
    check(0 <= api["until"] - o["until"] <= 5, f"until: the command's {o['until']}, the API's {api['until']}")
    check_eq({**o, "until": None}, {**api, "until": None}, "--json is the API's answer")
    text = lmk(s, token, "--csv", "top", "--functions", "--since", since)
    check_eq(text.splitlines()[0].split(",")[:2], ["family", "function"], "--csv header")
    out = lmk(s, token, "top", "--functions", "--by-family", "--since", since)
    check("blas-level3" in out and "compression" in out, f"--by-family: {out}")
    lmk(s, token, "top", "--functions", "--kind", "lib", expect=1)
    # dgemm and solve_kernel: 1,050 + 500 of the jobs' 2,200 samples
    out = lmk(s, token, "kernels", "--since", since, "--share", "70")
    log(out)
    check("2 functions cover 70.5%" in out, f"lmk kernels --share 70: {out}")
    check("[solver, zipper]" in out, f"dgemm's applications: {out}")
    out = lmk(s, token, "kernels", "--since", since, "--share", "70", "--account", "chem")
    check("[solver 100%]" in out, f"lmk kernels --account chem: the applications' shares: {out}")
    lmk(s, token, "kernels", "--share", "0", expect=1)


def cells(page, selector):
    return page.evaluate(f"""Array.from(document.querySelectorAll('{selector} tbody tr'), tr =>
        Array.from(tr.querySelectorAll('td'), td => td.innerText.trim()))""")


def check_pages(s):
    """The kernels page, a library's page and a job's functions per phase
    in a real Chromium, as an admin: the API's numbers, the hostile name
    as text, no script, no dialog, no console error. Returns why not,
    when there is no browser to look with."""
    ok, why = browser_available()
    if not ok:
        return why
    shots = build_path("web-screenshots")
    os.makedirs(shots, exist_ok=True)
    st, _, body = s.request("POST", "/api/v1/sessions", body={"next": f"site/kernels?since={SINCE}"},
                            token=ADMIN_TOKEN)
    check_eq(st, 200, f"POST /api/v1/sessions: {body}")
    api = s.get_ok(f"/api/v1/functions?since={SINCE}&limit=50")
    with Browser(screenshot_dir=shots) as b:
        page = b.open(s.url("/") + body["login"])
        page.assert_clean()
        check_eq(page.dialogs, [], "dialogs")
        rows = cells(page, "table.functions")
        check_eq([(r[1], r[2], r[3].split()[0]) for r in rows],
                 [(e["function"], e["object"], "%.1f%%" % (100 * e["share"])) for e in api["functions"]],
                 "the kernels page: names, objects and shares as the API's")
        check(any(r[1] == HOSTILE for r in rows), "the hostile name shown literally")
        check_eq(page.evaluate("document.querySelectorAll('script').length"), 0, "no script on the page")
        fams = cells(page, "table.families")
        check_eq(fams[0][:2], ["blas-level3", "2"], "the families, BLAS level-3 first")
        page.screenshot("site-kernels")
        page = b.open(s.url(f"/site/kernels?since={SINCE}&family=compression&app=zipper"))
        page.assert_clean()
        check_eq([r[1] for r in cells(page, "table.functions")], ["deflate_slow", "longest_match"],
                 "family and application filters")
        page = b.open(s.url(f"/site/library?object={BLAS}&since={SINCE}"))
        page.assert_clean()
        check_eq([r[1] for r in cells(page, "table.functions")], ["dgemm_kernel_HASWELL", "dgemm_itcopy_HASWELL"],
                 "the library page's functions")
        check_eq([r[0] for r in cells(page, "#users + table")], ["lmkalice", "lmkbob"], "the library's users")
        check_eq([r[0] for r in cells(page, "#apps + table")], ["solver", "zipper"], "the library's applications")
        page.screenshot("site-library")
        page = b.open(s.url("/jobs/7003"))
        page.assert_clean()
        heads = page.evaluate("Array.from(document.querySelectorAll('#phase-functions ~ h3'), "
                              "h => h.firstChild.textContent.trim())")
        check_eq(heads, ["solve"], "the job's phases with functions")
        rows = cells(page, "#phase-functions ~ table.phase-functions")
        check_eq([(r[0], r[1], r[2].split()[0]) for r in rows],
                 [("dgemm_kernel_HASWELL", "libopenblas.so.0", "60.0%"), ("solve_kernel", "solver", "40.0%")],
                 "the phase's functions and their shares of the phase")
        page.screenshot("job-phase-functions")
        page = b.open(s.url("/jobs/7001"))
        page.assert_clean()
        check_eq(page.dialogs, [], "dialogs on the job page with the hostile name")


def run(d, sock):
    BATCHES[2]["node"]["type"] = TYPE_B
    leads = os.path.join(d, "leads.conf")
    with open(leads, "w") as f:
        f.write("chem lmkcarol\n")
    with Store(extra=["--munge-socket", sock, "--leads", leads]) as s:
        os.chmod(s.dir, 0o755)
        for b in BATCHES:
            st, _, body = s.ingest(b)
            check_eq(st, 200, f"ingest: {body}")
        check_admin(s)
        # the rollups themselves, which the ranking folded the batches into
        # (schema/0027): two days, one or two weeks
        check_eq(s.sql("SELECT count(DISTINCT day) FROM function_days")[0][0], 2, "function_days: two days")
        check_eq(s.sql("SELECT sum(jobs) FROM function_days")[0][0], 2 + 2 + 1 + 1 + 1 + 1 + 1 + 1,
                 "function_days: each job once per function")
        check_people(s, sock)
        check_cli(s, d)
        no_browser = check_pages(s)
        check_eq(s.stop(), 0, "exit code")
    if no_browser:
        # everything else held: say that the pages were not looked at
        skip(f"all but the pages checked; no browser: {no_browser}")
    log("PASS")


def main():
    with_people(run)


if __name__ == "__main__":
    main()
