#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Functions (issue 30): version 2 and 3 batches with functions[] through the
real lmk-store, then what it stored (functions, job_functions,
job_phase_functions), the job's JSON and its functions list (JSON, CSV,
by phase, truncated) with every number worked out here from what was sent,
`lmk job` and `lmk job --functions` (--json, --csv), the job page in a
real headless Chromium with a hostile C++ name, a job that is not yours
(404), a name found since for an unnamed function, version 1 batches
still taken, duplicates and conflicts, and overflow. Retention of a
job's functions is test-retention's (every table with a job_id).

Job 6001 (alice) ran /opt/app/bin/app and libopenblas on two nodes: the
executable in phases "solve" and "" (outside markers), the library in
"solve". Job 6002 (bob) came from an lmkd of version 1, without
functions."""
import csv
import io
import json
import math
import os
import subprocess

from browser import Browser, browser_available
from lmktest import build_path, check, fail, log, skip
from storetest import ADMIN_TOKEN, START, Store, check_eq, function, make_batch, row, sql_write, version3

HZ = 10
APP, BLAS = "/opt/app/bin/app", "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"
APP_ID, BLAS_ID = "aa11", "bb22"
# What C++ names look like, and what a page must not run: markup, an
# entity, quotes, a comma (CSV) and a formula start.
HOSTILE = "std::vector<int, A&amp;>::operator<(\"x\", 'y') <script>alert(1)</script> & <b>"
FORMULA = "=cmd|' /C calc'!A0"
INT64_MAX = (1 << 63) - 1
# an unnamed function's first byte (lmkd found it in the unwind table)
ENTRY = 0x22a47


def wilson(k, n, z=1.959964):
    """The Wilson score interval, written out here apart from the store's."""
    if n == 0:
        return [0, 1]
    p = k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)
    return [0 if k == 0 else round(max(0.0, min(low, p)), 6), 1 if k == n else round(min(1.0, max(high, p)), 6)]


def frow(job, obj, kind, samples, phase="", comm="app", build_id=None, cycles=None, instructions=None, user="alice"):
    r = row(job, obj, kind, samples, phase=phase, user=user, comm=comm, cycles=cycles, instructions=instructions)
    r["build_id"] = build_id
    return r


def job(jid, user="alice"):
    return {"job": jid, "user": user, "account": "p1", "partition": "batch", "cluster": "demo",
            "first_seen": START, "last_seen": START + 120}


# What each function of job 6001 was sent with: (object, build_id, phase,
# kind of name, name or offset, samples, cycles, instructions) per node.
CN1_ROWS = [
    frow("6001", APP, "exe", 600, phase="solve", build_id=APP_ID, cycles=6 * 10 ** 9, instructions=12 * 10 ** 9),
    frow("6001", APP, "exe", 200, phase="solve", comm="app2", build_id=APP_ID),
    frow("6001", APP, "exe", 100, phase="", build_id=APP_ID),
    frow("6001", BLAS, "lib", 300, phase="solve", build_id=BLAS_ID, cycles=3 * 10 ** 9, instructions=9 * 10 ** 9),
    frow("6001", "[kernel]", "kernel", 50, phase="solve"),
    frow(None, "/usr/sbin/sshd", "exe", 3, user="root", build_id="cc33"),
    frow(None, "[idle]", "idle", 500, user="root"),
]
CN1_FUNCTIONS = [
    function("6001", APP, 500, name="solve_kernel", phase="solve", build_id=APP_ID, cycles=5 * 10 ** 9,
             instructions=11 * 10 ** 9),
    function("6001", APP, 150, name=HOSTILE, phase="solve", build_id=APP_ID),
    function("6001", APP, 120, other=True, phase="solve", build_id=APP_ID),
    function("6001", APP, 30, offset=ENTRY, entry=True, phase="solve", build_id=APP_ID),
    function("6001", APP, 60, name=FORMULA, build_id=APP_ID),
    function("6001", APP, 40, offset=0x21000, build_id=APP_ID),
    function("6001", BLAS, 280, name="dgemm_kernel_HASWELL", phase="solve", build_id=BLAS_ID,
             cycles=2800 * 10 ** 6, instructions=8400 * 10 ** 6),
    function("6001", BLAS, 20, other=True, phase="solve", build_id=BLAS_ID),
    function(None, "/usr/sbin/sshd", 3, name="main", build_id="cc33"),  # outside jobs: not kept
]
CN2_ROWS = [frow("6001", APP, "exe", 100, phase="solve", build_id=APP_ID, cycles=10 ** 9, instructions=2 * 10 ** 9)]
CN2_FUNCTIONS = [function("6001", APP, 100, name="solve_kernel", phase="solve", build_id=APP_ID, cycles=10 ** 9,
                          instructions=3 * 10 ** 9)]

JOB_SAMPLES = 600 + 200 + 100 + 300 + 50 + 100
SOLVE_SAMPLES = 600 + 200 + 300 + 50 + 100
OUTSIDE_SAMPLES = 100

# Per (object, function text, phase or None): samples, cycles, instructions.
WANT_FUNCTIONS = {
    (APP, "solve_kernel"): (600, 6 * 10 ** 9, 14 * 10 ** 9),
    (APP, HOSTILE): (150, None, None),
    (APP, "(other functions)"): (120, None, None),
    (BLAS, "dgemm_kernel_HASWELL"): (280, 2800 * 10 ** 6, 8400 * 10 ** 6),
    (APP, FORMULA): (60, None, None),
    (APP, "app+0x21000"): (40, None, None),
    (APP, "app+0x22a47"): (30, None, None),
    (BLAS, "(other functions)"): (20, None, None),
}


def batches():
    return [
        # as lmkd writes it (version 3); the other node's as lmkd of issue 30 did
        version3(make_batch(node="cn001", seq=1, rows=CN1_ROWS, jobs=[job("6001")], frequency=HZ,
                            functions=CN1_FUNCTIONS)),
        make_batch(node="cn002", seq=1, rows=CN2_ROWS, jobs=[job("6001")], frequency=HZ, functions=CN2_FUNCTIONS),
        # an lmkd of version 1: no functions
        make_batch(node="cn003", seq=1, rows=[frow("6002", APP, "exe", 70, user="bob", build_id=APP_ID)],
                   jobs=[job("6002", user="bob")], frequency=HZ),
    ]


def check_entry(e, obj, text, phase, samples, total, cycles, instructions, what):
    check_eq(e["object"], obj, f"{what}: object")
    check_eq(e["function"], text, f"{what}: function")
    check_eq(e["phase"], phase, f"{what}: phase")
    check_eq(e["samples"], samples, f"{what}: samples")
    check_eq(e["share"], round(samples / total, 6), f"{what}: share")
    check_eq(e["share_ci95"], wilson(samples, total), f"{what}: share_ci95")
    check_eq(e["share_of_samples"], total, f"{what}: share_of_samples")
    check_eq(e["share_reliable"], total >= 30, f"{what}: share_reliable")
    check_eq(e["cpu_seconds"], samples / HZ, f"{what}: cpu_seconds")
    check_eq((e["cycles"], e["instructions"]), (cycles, instructions), f"{what}: counters")
    check_eq(e["ipc"], round(instructions / cycles, 3) if cycles and instructions is not None else None,
             f"{what}: ipc")
    other = text == "(other functions)"
    unnamed = "+0x" in text
    check_eq(e["other"], other, f"{what}: other")
    check_eq(e["named_by"], None if other or unnamed else "lmkd", f"{what}: named_by")
    check_eq(e["offset"], int(text.split("+0x")[1], 16) if unnamed else None, f"{what}: offset")
    check_eq(e["entry"], e["offset"] == ENTRY, f"{what}: entry")
    check_eq(e["build_id"], APP_ID if obj == APP else BLAS_ID, f"{what}: build_id")
    check_eq(e["kind"], "exe" if obj == APP else "lib", f"{what}: kind")


def check_stored(store):
    """The rows themselves: one function row per (object, name, offset),
    the job's sums per function and per phase."""
    got = sorted(store.sql(
        "SELECT o.path, o.build_id, f.name, f.file_offset, jf.samples, jf.cpu_seconds, jf.cycles, jf.instructions "
        "FROM job_functions jf JOIN functions f ON f.id = jf.function_id JOIN objects o ON o.id = f.object_id "
        "JOIN jobs j ON j.id = jf.job_id WHERE j.job = '6001'"))
    want = sorted([
        (APP, APP_ID, "solve_kernel", -1, 600, 60.0, 6 * 10 ** 9, 14 * 10 ** 9),
        (APP, APP_ID, HOSTILE, -1, 150, 15.0, None, None),
        (APP, APP_ID, "", -1, 120, 12.0, None, None),
        (APP, APP_ID, "", ENTRY, 30, 3.0, None, None),
        (APP, APP_ID, FORMULA, -1, 60, 6.0, None, None),
        (APP, APP_ID, "", 0x21000, 40, 4.0, None, None),
        (BLAS, BLAS_ID, "dgemm_kernel_HASWELL", -1, 280, 28.0, 2800 * 10 ** 6, 8400 * 10 ** 6),
        (BLAS, BLAS_ID, "", -1, 20, 2.0, None, None),
    ])
    check_eq([tuple(r) for r in got], want, "job_functions of job 6001")
    got = sorted(tuple(r) for r in store.sql(
        "SELECT p.path, f.name, f.file_offset, x.samples, x.cycles FROM job_phase_functions x "
        "JOIN functions f ON f.id = x.function_id JOIN phases p ON p.id = x.phase_id"))
    check_eq(got, sorted([("solve", "solve_kernel", -1, 600, 6 * 10 ** 9), ("solve", HOSTILE, -1, 150, None),
                          ("solve", "", -1, 120, None), ("solve", "", ENTRY, 30, None),
                          ("", FORMULA, -1, 60, None), ("", "", 0x21000, 40, None),
                          ("solve", "dgemm_kernel_HASWELL", -1, 280, 2800 * 10 ** 6), ("solve", "", -1, 20, None)]),
             "job_phase_functions")
    # sshd's main, outside jobs, is not kept; each function is one row
    check_eq(store.sql("SELECT count(*) FROM functions")[0][0], 8, "functions")
    check_eq(sorted(tuple(r) for r in store.sql("SELECT file_offset, entry FROM functions WHERE file_offset >= 0")),
             [(0x21000, 0), (ENTRY, 1)], "an unnamed page and an unnamed function's first byte")
    check_eq(store.sql("SELECT count(*) FROM functions f JOIN objects o ON o.id = f.object_id "
                       "WHERE o.path = '/usr/sbin/sshd'")[0][0], 0, "functions of work outside jobs")


def check_job_json(store):
    o = store.get_ok("/api/v1/jobs/6001")
    check_eq(o["samples"], JOB_SAMPLES, "the job's samples")
    fs = o["functions"]
    check_eq([(e["object"], e["function"]) for e in fs],
             [(APP, "solve_kernel"), (BLAS, "dgemm_kernel_HASWELL"), (APP, HOSTILE), (APP, "(other functions)"),
              (APP, FORMULA), (APP, "app+0x21000"), (APP, "app+0x22a47"), (BLAS, "(other functions)")],
             "the job's functions, the most samples first (ties by object, then name)")
    for e in fs:
        samples, cycles, instructions = WANT_FUNCTIONS[(e["object"], e["function"])]
        check_entry(e, e["object"], e["function"], None, samples, JOB_SAMPLES, cycles, instructions,
                    f"functions: {e['function']}")
    check_eq(o["functions_truncated"], False, "functions_truncated")
    ps = o["phase_functions"]
    check_eq([(e["phase"], e["function"]) for e in ps],
             [("solve", "solve_kernel"), ("solve", "dgemm_kernel_HASWELL"), ("solve", HOSTILE),
              ("solve", "(other functions)"), ("", FORMULA), ("", "app+0x21000"), ("solve", "app+0x22a47"),
              ("solve", "(other functions)")],
             "phase_functions")
    for e in ps:
        samples, cycles, instructions = WANT_FUNCTIONS[(e["object"], e["function"])]
        check_entry(e, e["object"], e["function"], e["phase"], samples,
                    SOLVE_SAMPLES if e["phase"] == "solve" else OUTSIDE_SAMPLES, cycles, instructions,
                    f"phase_functions: {e['phase']}/{e['function']}")
    check_eq(o["phase_functions_truncated"], False, "phase_functions_truncated")
    # the version 1 job has none
    o2 = store.get_ok("/api/v1/jobs/6002")
    check_eq((o2["samples"], o2["functions"], o2["phase_functions"]), (70, [], []), "a version 1 job")
    return o


def check_list(store, job_json):
    o = store.get_ok("/api/v1/jobs/6001/functions")
    check_eq(o["by"], "function", "by")
    check_eq((o["job"], o["samples"], o["truncated"]), ("6001", JOB_SAMPLES, False), "the list's job")
    check_eq(o["functions"], job_json["functions"], "the list equals the summary's functions")
    o = store.get_ok("/api/v1/jobs/6001/functions?by=phase&cluster=demo")
    check_eq(o["functions"], job_json["phase_functions"], "by phase equals the summary's phase_functions")
    o = store.get_ok("/api/v1/jobs/6001/functions?limit=2")
    check_eq((len(o["functions"]), o["truncated"]), (2, True), "limit=2")
    check_eq(o["functions"], job_json["functions"][:2], "the first two")
    check_eq(store.get_ok("/api/v1/jobs/6002/functions")["functions"], [], "a job without functions")
    for path, status, field in (("/api/v1/jobs/6001/functions?by=object", 400, "by"),
                                ("/api/v1/jobs/6001/functions?limit=0", 400, "limit"),
                                ("/api/v1/jobs/6001/functions?limit=100001", 400, "limit"),
                                ("/api/v1/jobs/6001/functions?what=1", 400, None),
                                ("/api/v1/jobs/6009/functions", 404, None),
                                ("/api/v1/jobs/6001/functions?cluster=other", 404, None),
                                ("/api/v1/jobs//functions", 404, None),
                                ("/api/v1/jobs/6001/functions?format=xml", 400, "format")):
        st, _, body = store.get(path)
        check_eq(st, status, f"GET {path}: {body}")
        if field:
            check_eq(body.get("field"), field, f"GET {path}: the field named")
    st, hdrs, _ = store.request("POST", "/api/v1/jobs/6001/functions", token=ADMIN_TOKEN)
    check_eq((st, hdrs.get("allow")), (405, "GET, HEAD"), "POST on the list")
    check_eq(store.request("GET", "/api/v1/jobs/6001/functions")[0], 401, "no identity")

    # CSV: the JSON's rows, value by value, in text
    st, hdrs, text = store.get("/api/v1/jobs/6001/functions?format=csv")
    check_eq((st, hdrs.get("content-type"), hdrs.get("content-disposition")),
             (200, "text/csv; charset=utf-8", 'attachment; filename="lmk-functions.csv"'), "CSV answer")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    check_eq(rows[0], ["object", "kind", "build_id", "function", "named_by", "offset", "entry", "other", "phase",
                       "samples",
                       "share", "share_ci95_low", "share_ci95_high", "share_of_samples", "share_reliable",
                       "cpu_seconds", "cycles", "instructions", "ipc"], "CSV header")
    check_eq(len(rows) - 1, len(job_json["functions"]), "CSV rows")
    names = [r[3] for r in rows[1:]]
    check(HOSTILE in names and "'" + FORMULA in names, f"CSV names as sent, a formula defused: {names}")
    first = rows[1]
    check_eq(first[:4] + first[9:11], [APP, "exe", APP_ID, "solve_kernel", "600", str(round(600 / JOB_SAMPLES, 6))],
             "the first CSV row")
    return text


def lmk(store, *args, expect=0):
    # bytes: text mode would turn the CSV's CRLFs into LFs
    p = subprocess.run([build_path("cli", "lmk"), "--store", store.url(), "--token-file", store.token_file, *args],
                       capture_output=True, timeout=60)
    p.stdout, p.stderr = p.stdout.decode(), p.stderr.decode()
    if p.returncode != expect:
        fail(f"lmk {' '.join(args)}: exit {p.returncode}, want {expect}\n{p.stdout}\n{p.stderr}")
    return p


def check_cli(store, job_json, csv_text):
    token = os.path.join(store.dir, "admin-token")
    with open(token, "w") as f:
        f.write(ADMIN_TOKEN + "\n")
    os.chmod(token, 0o600)
    store.token_file = token
    out = lmk(store, "job", "6001").stdout
    log(out)
    check("Functions of the busiest objects" in out, "lmk job prints the functions of the busiest objects")
    lines = out.split("Functions of the busiest objects")[1].splitlines()
    check(any(l.strip().startswith("%.1f%%" % (100 * 600 / JOB_SAMPLES)) and l.endswith("solve_kernel")
              for l in lines), f"solve_kernel's line with its share: {lines}")
    check(lines.index(next(l for l in lines if l.strip() == APP)) <
          lines.index(next(l for l in lines if l.endswith("solve_kernel"))) <
          lines.index(next(l for l in lines if l.strip().endswith("libopenblas.so.0"))) <
          lines.index(next(l for l in lines if l.endswith("dgemm_kernel_HASWELL"))),
          f"each object's functions under it: {lines}")
    out = lmk(store, "job", "6001", "--functions").stdout
    for e in job_json["functions"]:
        check(any(e["function"] in l and "%9s" % format(e["samples"], ",") in l for l in out.splitlines()),
              f"lmk job --functions lists {e['function']!r} with its samples:\n{out}")
    out = lmk(store, "job", "6001", "--functions", "--by-phase").stdout
    check("solve: solve_kernel  [app]" in out and "(outside markers): app+0x21000  [app]" in out,
          f"lmk job --functions --by-phase:\n{out}")
    check_eq(json.loads(lmk(store, "--json", "job", "6001", "--functions").stdout)["functions"],
             job_json["functions"], "lmk --json job --functions")
    check_eq(lmk(store, "--csv", "job", "6001", "--functions").stdout, csv_text, "lmk --csv job --functions")
    err = lmk(store, "job", "6001", "--by-phase", expect=1).stderr
    check("--functions" in err, f"--by-phase alone: {err}")
    err = lmk(store, "--csv", "job", "6001", expect=1).stderr
    check("csv" in err.lower(), f"--csv without --functions: {err}")


def check_visibility(store):
    """A person sees their own job's functions; someone else's job is not
    found, on the list and the summary alike."""
    def as_user(user, path):
        return store.request("GET", path, headers={"X-Remote-User": user})
    st, _, body = as_user("alice", "/api/v1/jobs/6001/functions")
    check_eq((st, len(body["functions"])), (200, 8), "alice's own job's functions")
    for path in ("/api/v1/jobs/6001/functions", "/api/v1/jobs/6001/functions?format=csv", "/api/v1/jobs/6001"):
        st, _, body = as_user("bob", path)
        check_eq(st, 404, f"bob asks for alice's job: {path}: {body}")
        st, _, body = as_user("bob", path.replace("6001", "6099"))
        check_eq(st, 404, f"bob asks for a job nobody ran: {path}")


def check_page(store, job_json):
    """The job page in a real Chromium: the functions of the busiest
    objects as the JSON has them, the hostile name as text, no script
    run, no console error. Returns why not, when there is no browser."""
    ok, why = browser_available()
    if not ok:
        return why
    shots = build_path("web-screenshots")
    os.makedirs(shots, exist_ok=True)
    st, _, body = store.request("POST", "/api/v1/sessions", body={"next": "jobs/6001"}, token=ADMIN_TOKEN)
    check_eq(st, 200, f"POST /api/v1/sessions: {body}")
    with Browser(screenshot_dir=shots) as b:
        page = b.open(store.url("/") + body["login"])
        page.assert_clean()
        check_eq(page.dialogs, [], "dialogs")
        heads = page.evaluate("Array.from(document.querySelectorAll('#functions ~ h3.path'), "
                              "h => h.firstChild.textContent.trim())")
        check_eq(heads, [APP, BLAS], "the objects whose functions are shown, busiest first")
        tables = page.evaluate("""Array.from(document.querySelectorAll('table.functions'), t =>
            Array.from(t.querySelectorAll('tbody tr'), tr =>
                Array.from(tr.querySelectorAll('td'), td => td.innerText.trim())))""")
        want = []
        for obj in (APP, BLAS):
            want.append([[e["function"], "%.1f%%" % (100 * e["share"]), str(e["samples"])]
                         for e in job_json["functions"] if e["object"] == obj])
        # a share cell is "48.0% 45.2–50.8": the share, then its interval
        got = [[[r[0], r[1].split()[0], r[4]] for r in t] for t in tables]
        check_eq(got, want, "the functions' names, shares and samples on the page")
        check_eq(page.evaluate("document.querySelectorAll('script').length"), 0, "no script on the page")
        check_eq(page.evaluate("document.querySelectorAll('table.functions b').length"), 0,
                 "the name's markup is text")
        page.screenshot("job-functions")
        # the profile links lead to the job's profile in both formats
        links = {ln["text"]: ln for ln in page.links}
        for text, fmt in (("pprof", "pprof"), ("folded stacks", "folded")):
            check(text in links and links[text]["href"].endswith(f"/api/v1/jobs/6001/profile?format={fmt}")
                  and links[text]["download"], f"the page's {text} link, a download: {links.get(text)}")
            st, hdrs, got = store.request("GET", f"/api/v1/jobs/6001/profile?format={fmt}", token=ADMIN_TOKEN)
            check_eq(st, 200, f"GET the page's {text} link")
            if fmt == "pprof":
                check(isinstance(got, bytes) and got[:2] == b"\x1f\x8b", "the pprof link's answer is gzip")
            else:
                total = sum(int(line.rsplit(" ", 1)[1]) for line in got.splitlines() if line)
                check_eq(total, sum(e["samples"] for e in job_json["functions"]),
                         "the folded link's samples, against the job's functions")


def check_named_since(store):
    """An unnamed function named since by its build-id and offset (as a
    debuginfod lookup fills function_names): the answers show the name,
    named by the store; a page's name is not an entry's at the same
    offset, nor the other way round, and '' names nothing."""
    def named():
        return {e["offset"]: (e["function"], e["named_by"], e["other"])
                for e in store.get_ok("/api/v1/jobs/6001")["functions"] if e["offset"] is not None}

    sql_write(store.db, [("INSERT INTO function_names (build_id, file_offset, entry, name) VALUES (?, ?, ?, ?)",
                          row) for row in [(APP_ID, 0x21000, 1, "not_a_page"), (APP_ID, ENTRY, 0, "not_an_entry"),
                                           (APP_ID, ENTRY, 1, "")]])
    check_eq(named(), {0x21000: ("app+0x21000", None, False), ENTRY: ("app+0x22a47", None, False)},
             "names of another kind of offset, or none")
    sql_write(store.db, [("INSERT INTO function_names (build_id, file_offset, entry, name) VALUES (?, ?, ?, ?)",
                          (APP_ID, 0x21000, 0, "stripped_helper")),
                         ("UPDATE function_names SET name = ? WHERE build_id = ? AND file_offset = ? AND entry = 1",
                          ("stripped_entry", APP_ID, ENTRY))])
    check_eq(named(), {0x21000: ("stripped_helper", "store", False), ENTRY: ("stripped_entry", "store", False)},
             "functions named since")


def check_duplicates(store):
    """A retried batch adds nothing; the same key with other functions is
    a conflict and stores nothing."""
    before = store.counts()
    sums = store.sql("SELECT sum(samples) FROM job_functions")
    b = batches()[0]
    st, _, body = store.ingest(b)
    check_eq((st, body.get("duplicate")), (200, True), f"the same batch again: {body}")
    b["functions"][0]["samples"] -= 1
    st, _, body = store.ingest(b)
    check_eq((st, body.get("conflict")), (409, True), f"the same key with other functions: {body}")
    check_eq(store.counts(), before, "rows after a retry and a conflict")
    check_eq(store.sql("SELECT sum(samples) FROM job_functions"), sums, "the functions' sums")


def check_refused(store):
    """Bad functions are refused whole (400 naming the field), and a
    batch whose functions would take a job's stored sum past INT64_MAX
    too; nothing of either is stored. Version 1 with functions[] is
    taken, the member ignored."""
    before = store.counts()
    bad = make_batch(node="cn001", seq=50, rows=CN2_ROWS, jobs=[job("6001")], frequency=HZ,
                     functions=[function("6001", APP, 101, name="f", phase="solve", build_id=APP_ID)])
    st, _, body = store.ingest(bad)
    check_eq((st, body.get("field")), (400, "functions[0].samples"), f"more samples than the rows: {body}")
    bad["functions"] = [function("6001", "[kernel]", 1, name="schedule", phase="solve")]
    bad["rows"] = [frow("6001", "[kernel]", "kernel", 5, phase="solve")]
    st, _, body = store.ingest(bad)
    check_eq((st, body.get("field")), (400, "functions[0].object"), f"a function of the kernel: {body}")
    check_eq(store.counts(), before, "rows after refused batches")

    # 2^20 CPUs for two days: a function may count 2^53 cycles; 1000 of
    # them fit a batch, twice that not the job's stored sum
    def big(seq):
        b = make_batch(node="cnbig", seq=seq, start=START, rows=[frow("6003", APP, "exe", 1, build_id=APP_ID)],
                       jobs=[job("6003")], functions=[function("6003", APP, 0, name="hot", build_id=APP_ID,
                                                               cycles=1 << 53) for _ in range(1000)])
        b["node"]["cpus"] = 1 << 20
        b["interval"]["end"] = START + 172800
        return b
    st, _, body = store.ingest(big(1))
    check_eq(st, 200, f"1000 x 2^53 cycles of one function: {body}")
    before = store.counts()
    st, _, body = store.ingest(big(2))
    check_eq((st, body.get("field")), (400, "functions"), f"twice that: {body}")
    check_eq(store.counts(), before, "rows after the overflow")
    check_eq(store.sql("SELECT jf.cycles FROM job_functions jf JOIN jobs j ON j.id = jf.job_id WHERE j.job = '6003'"),
             [(1000 << 53,)], "the stored sum")

    v1 = make_batch(node="cn004", seq=1, rows=[frow("6004", APP, "exe", 5, build_id=APP_ID)], jobs=[job("6004")],
                    frequency=HZ)
    v1["functions"] = [{"not": "a function"}]
    st, _, body = store.ingest(v1)
    check_eq(st, 200, f"version 1 with a functions member: {body}")
    check_eq(store.get_ok("/api/v1/jobs/6004")["functions"], [], "version 1's functions member ignored")
    v4 = make_batch(node="cn004", seq=2, rows=[], functions=[])
    v4["version"] = 4
    st, _, body = store.ingest(v4)
    check_eq((st, body.get("field")), (400, "version"), f"version 4: {body}")


def check_several_builds(store):
    """A function's object and phase are its rows': of its build when it
    names one, the second build of a path's rows as well as the first; an
    "other" entry over both builds (build_id null) is of the build-less
    object, not of the first row's build."""
    b = make_batch(node="cn005", seq=1, start=START, frequency=HZ,
                   rows=[frow("6005", APP, "exe", 50, phase="solve", build_id=APP_ID),
                         frow("6005", APP, "exe", 30, phase="solve", build_id="dd44")],
                   jobs=[job("6005")],
                   functions=[function("6005", APP, 25, name="k", phase="solve", build_id="dd44"),
                              function("6005", APP, 20, other=True, phase="solve")])
    st, _, body = store.ingest(b)
    check_eq(st, 200, f"two builds of one path: {body}")
    got = sorted(tuple(r) for r in store.sql(
        "SELECT o.path, o.build_id, o.kind, p.path, f.name, x.samples FROM job_phase_functions x "
        "JOIN functions f ON f.id = x.function_id JOIN objects o ON o.id = f.object_id "
        "JOIN phases p ON p.id = x.phase_id JOIN jobs j ON j.id = x.job_id WHERE j.job = '6005'"))
    check_eq(got, [(APP, "", "exe", "solve", "", 20), (APP, "dd44", "exe", "solve", "k", 25)],
             "functions of two builds of one path")

    # version 3: the "other" names the first row and says build_id null
    b3 = version3(make_batch(node="cn006", seq=1, start=START, frequency=HZ,
                             rows=[frow("6006", APP, "exe", 50, phase="solve", build_id=APP_ID),
                                   frow("6006", APP, "exe", 30, phase="solve", build_id="dd44")],
                             jobs=[job("6006")],
                             functions=[function("6006", APP, 25, name="k", phase="solve", build_id="dd44"),
                                        function("6006", APP, 20, other=True, phase="solve")]))
    check_eq([f["row"] for f in b3["functions"]], [1, 0], "version 3 rows")
    check_eq(b3["functions"][1].get("build_id", "absent"), None, "version 3: other names no build")
    st, _, body = store.ingest(b3)
    check_eq(st, 200, f"two builds of one path, version 3: {body}")
    got = sorted((e["object"], e["build_id"] or "", e["phase"], e["function"], e["samples"])
                 for e in store.get_ok("/api/v1/jobs/6006/functions?by=phase")["functions"])
    check_eq(got, [(APP, "", "solve", "(other functions)", 20), (APP, "dd44", "solve", "k", 25)],
             "version 3: functions of two builds of one path")


def main():
    with Store(extra=["--user-header", "X-Remote-User", "--trusted-proxies", "127.0.0.1 ::1"]) as store:
        for b in batches():
            st, _, body = store.ingest(b)
            check_eq(st, 200, f"ingest {b['batch']['node']}: {body}")
        check_stored(store)
        job_json = check_job_json(store)
        csv_text = check_list(store, job_json)
        check_cli(store, job_json, csv_text)
        check_visibility(store)
        no_browser = check_page(store, job_json)
        check_named_since(store)
        check_duplicates(store)
        check_refused(store)
        check_several_builds(store)
    if no_browser:
        # everything else held: say that the page was not looked at
        skip(f"all but the job page checked; no browser: {no_browser}")


if __name__ == "__main__":
    main()
