#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Findings through the real store: each rule fires on a job built to
trigger it and stays quiet on its control, with the exact core-hours at
stake; the site list ranks them; a site's findings and families files
change thresholds, advice and what counts as communication, also on SIGHUP;
bad files and bad parameters are refused with the reason.

The rules see what lmkd would push (docs/findings.md); tests/jobs/
test-findings-jobs.py checks the same rules on real Slurm jobs."""
import os
import subprocess

from lmktest import build_path, fail, log
from storetest import START, Store, check_eq, make_batch, row, workdir

T = 600  # seconds every job here runs on each node
MPI = "/usr/lib/x86_64-linux-gnu/openmpi/lib/libmpi.so.40.30.5"
REF_BLAS = "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"


def job(jid, cpus, user="alice", elapsed=T):
    return {"job": jid, "user": user, "account": "p1", "cpus_allocated": cpus,
            "first_seen": START, "last_seen": START + elapsed, "ended": True}


def batches():
    """Ten jobs at 1 Hz on cn001 (and cn002 for the two-node one)."""
    cn1_jobs = [job("100", 16), job("101", 4), job("102", 4), job("103", 4), job("104", 8),
                job("105", 8), job("106", 8), job("107", 8), job("109", 8, elapsed=10),
                job("110", 8, user="bob")]
    cn1_rows = [
        row("100", "/apps/a.out", "exe", int(1.2 * T)),          # 1.2 of 16 cores
        row("101", "/apps/serial", "exe", T),                     # one thread on 4 cores
        row("102", "/apps/par", "exe", 4 * T),                    # control: all 4 busy
        row("103", "/apps/par", "exe", 4 * T),                    # two nodes, see cn002
        row("104", "/apps/mpi", "exe", 5 * T), row("104", MPI, "lib", 3 * T),   # 37.5% in MPI
        row("105", "/apps/io", "exe", 5 * T), row("105", "[kernel]", "kernel", 3 * T),
        row("106", "/apps/slow", "exe", 8 * T, cycles=10**12, instructions=3 * 10**11),
        row("107", "/apps/dgemm", "exe", 4 * T), row("107", REF_BLAS, "lib", 4 * T),
        row("109", "/apps/short", "exe", 1),                       # 10 s: too short to judge
        row("110", "/apps/par2", "exe", 8 * T, cycles=10**12, instructions=2 * 10**12),
    ]
    b1 = make_batch(node="cn001", seq=0, jobs=cn1_jobs, rows=cn1_rows,
                    markers=[{"job": "110", "comm": "par2", "phase": "inner", "state": "off-rate"},
                             {"job": "110", "comm": "par2", "phase": "io", "state": "off-env"}])
    b1["node"]["installed"] = [{"purpose": "blas", "family": "openblas"},
                               {"purpose": "blas-reference", "family": "netlib"}]
    b2 = make_batch(node="cn002", seq=0, jobs=[job("103", 4), job("108", 8)],
                    rows=[row("103", "/apps/par", "exe", 2 * T),
                          # the reference BLAS where nothing better is installed: no finding
                          row("108", "/apps/dgemm", "exe", 4 * T), row("108", REF_BLAS, "lib", 4 * T)])
    b2["node"]["installed"] = [{"purpose": "blas-reference", "family": "netlib"}]
    return [b1, b2]


def findings_of(store, jid):
    return {f["rule"]: f for f in store.get_ok(f"/api/v1/jobs/{jid}")["findings"]}


def close(got, want, what, tol=0.01):
    if abs(got - want) > tol:
        fail(f"{what}: expected {want}, got {got}")


def check_rules(s):
    f = findings_of(s, "100")
    check_eq(set(f), {"idle-cores"}, "job 100's findings")
    check_eq(f["idle-cores"]["message"], "uses 1.2 of 16 allocated cores on cn001", "idle-cores message")
    close(f["idle-cores"]["core_hours"], (16 - 1.2) * T / 3600, "idle-cores stake")
    check_eq(f["idle-cores"]["node"], "cn001", "idle-cores node")
    check_eq(f["idle-cores"]["severity"], "warning", "idle-cores severity")

    f = findings_of(s, "101")
    check_eq(set(f), {"single-thread"}, "job 101's findings")
    close(f["single-thread"]["core_hours"], 3 * T / 3600, "single-thread stake")

    check_eq(findings_of(s, "102"), {}, "job 102 (all cores busy)")

    f = findings_of(s, "103")
    check_eq(set(f), {"unbalanced-nodes"}, "job 103's findings")
    check_eq(f["unbalanced-nodes"]["message"], "busy cores per node range from 2.0 to 4.0 over 2 nodes",
             "unbalanced message")
    close(f["unbalanced-nodes"]["core_hours"], 2 * T / 3600, "unbalanced stake")

    f = findings_of(s, "104")
    check_eq(set(f), {"communication"}, "job 104's findings")
    if "38% of its CPU time is in communication libraries (most in libmpi.so.40.30.5)" != f["communication"]["message"]:
        fail(f"communication message: {f['communication']['message']}")
    close(f["communication"]["core_hours"], 0.375 * 8 * T / 3600, "communication stake")

    f = findings_of(s, "105")
    check_eq(set(f), {"kernel-time"}, "job 105's findings")

    f = findings_of(s, "106")
    check_eq(set(f), {"low-ipc"}, "job 106's findings")
    check_eq(f["low-ipc"]["message"], "runs at 0.30 instructions per cycle (below 0.50)", "low-ipc message")
    check_eq(f["low-ipc"]["severity"], "info", "low-ipc severity")

    f = findings_of(s, "107")
    check_eq(set(f), {"reference-blas"}, "job 107's findings")
    if "openblas is installed on cn001" not in f["reference-blas"]["message"] or \
       REF_BLAS not in f["reference-blas"]["message"]:
        fail(f"reference-blas message: {f['reference-blas']['message']}")
    check_eq(f["reference-blas"]["severity"], "critical", "reference-blas severity")
    check_eq(findings_of(s, "108"), {}, "job 108 (no optimised BLAS on its node)")

    check_eq(findings_of(s, "109"), {}, "job 109 (10 s, too short to judge)")

    f = s.get_ok("/api/v1/jobs/110")["findings"]
    check_eq([x["rule"] for x in f], ["markers-off"], "job 110: off-rate reported, off-env not")
    check_eq(f[0]["message"], "the marker \"inner\" in par2 was switched off: it was entered too often",
             "markers-off message")

    # the job's nodes carry what the rules read
    nodes = s.get_ok("/api/v1/jobs/100")["nodes"]
    check_eq((nodes[0]["cpus_allocated"], nodes[0]["cpu_seconds"]), (16, 1.2 * T), "job 100's node")


def check_site_list(s):
    o = s.get_ok("/api/v1/findings?since=7d")
    stakes = [f["core_hours"] for f in o["findings"]]
    check_eq(stakes, sorted(stakes, reverse=True), "site findings ranked by core-hours")
    check_eq(o["findings"][0]["job"], "100", "largest stake first (idle cores, 2.5 core-hours)")
    check_eq(o["jobs_scanned"], 11, "jobs scanned")
    check_eq(o["jobs_flagged"], 8, "jobs flagged")
    check_eq(o["truncated"], False, "truncated")
    got = s.get_ok("/api/v1/findings?since=7d&rule=idle-cores")["findings"]
    check_eq([(f["job"], f["user"]) for f in got], [("100", "alice")], "rule filter")
    got = s.get_ok("/api/v1/findings?since=7d&severity=critical")["findings"]
    check_eq([f["job"] for f in got], ["107"], "severity filter")
    got = s.get_ok("/api/v1/findings?since=7d&user=bob")["findings"]
    check_eq([f["rule"] for f in got], ["markers-off"], "user filter")
    check_eq(len(s.get_ok("/api/v1/findings?since=7d&limit=2")["findings"]), 2, "limit")
    check_eq(s.get_ok("/api/v1/findings?since=1h")["findings"], [], "a range without jobs")
    for q, field in (("rule=idle", "rule"), ("severity=high", "severity"), ("limit=0", "limit"),
                     ("since=yesterday", "since"), ("usr=alice", None)):
        status, _, body = s.get(f"/api/v1/findings?{q}")
        check_eq(status, 400, f"GET /api/v1/findings?{q}: {body}")
        if field:
            check_eq(body.get("field"), field, f"?{q}'s field")


def check_site_list_follows_jobs(s):
    """The site list keeps each job's findings from one request to the next
    only while the job is the same: a batch that changes it counts at once."""
    def idle():
        return [f["job"] for f in s.get_ok("/api/v1/findings?since=7d&rule=idle-cores")["findings"]]

    check_eq(idle(), ["100"], "job 100 idle, asked twice")
    check_eq(idle(), ["100"], "job 100 idle, asked twice")
    # job 100 now keeps its 16 cores busy: no longer idle
    b = make_batch(node="cn001", seq=1, jobs=[job("100", 16)],
                   rows=[row("100", "/apps/a.out", "exe", int(7.4 * T)), row("100", "/apps/b.out", "exe", int(7.4 * T))])
    check_eq(s.ingest(b)[0], 200, "ingest more of job 100")
    check_eq(idle(), [], "job 100 after its new samples")
    check_eq(s.get_ok("/api/v1/findings?since=7d")["jobs_flagged"], 7, "jobs flagged after job 100 changed")


def check_cli(s):
    env = dict(os.environ, LMK_STORE=s.url(), LMK_TOKEN_FILE=token_file(s))
    out = subprocess.run([build_path("cli", "lmk"), "flagged", "--since", "7d"], env=env,
                         capture_output=True, text=True, check=True).stdout
    log(out)
    lines = out.splitlines()
    if not lines[0].startswith("JOB") or not lines[1].startswith("100 ") or "idle-cores" not in lines[1]:
        fail(f"lmk flagged: unexpected table:\n{out}")
    if "(8 of 11 jobs flagged" not in out:
        fail(f"lmk flagged lacks its summary line:\n{out}")
    out = subprocess.run([build_path("cli", "lmk"), "job", "100"], env=env, capture_output=True, text=True,
                         check=True).stdout
    if "uses 1.2 of 16 allocated cores on cn001 (2.5 core-hours)" not in out or "Ask for the cores" not in out:
        fail(f"lmk job 100 lacks its finding and advice:\n{out}")


def token_file(s):
    path = os.path.join(s.dir, "admin.token")
    with open(path, "w") as f:
        from storetest import ADMIN_TOKEN
        f.write(ADMIN_TOKEN + "\n")
    os.chmod(path, 0o600)
    return path


def check_site_files():
    d = workdir()
    findings = os.path.join(d, "findings.conf")
    families = os.path.join(d, "families.conf")
    with open(findings, "w") as f:
        f.write("# a site that tolerates more idle cores, and words its advice itself\n"
                "[general]\nmin-elapsed = 30\n\n"
                "[idle-cores]\nthreshold = 0.05\n\n"
                "[single-thread]\nadvice = Please see https://hpc.example/serial\n\n"
                "[kernel-time]\nenabled = no\n")
    with open(families, "w") as f:
        f.write("comm site-comm /apps/io\n")   # the site says /apps/io is its communication layer
    with Store(extra=["--findings", findings, "--families", families]) as s:
        for b in batches():
            check_eq(s.ingest(b)[0], 200, "ingest")
        check_eq(findings_of(s, "100"), {}, "job 100 under threshold 0.05 (1.2/16 = 0.075)")
        check_eq(findings_of(s, "101")["single-thread"]["advice"], "Please see https://hpc.example/serial",
                 "the site's advice")
        check_eq(set(findings_of(s, "105")), {"communication"}, "job 105: kernel-time off, /apps/io is comm")
        check_eq(s.get_ok("/api/v1/findings?since=7d&rule=idle-cores")["findings"], [],
                 "the site list under threshold 0.05")

        # SIGHUP: new rules apply to stored jobs at once; a bad file keeps the old ones
        s.reload(findings, "[idle-cores]\nthreshold = 0.5\nseverity = critical\n",
                 lambda: findings_of(s, "100").get("idle-cores", {}).get("severity") == "critical",
                 "the new findings apply")
        s.reload(findings, "[idle-cores]\nthreshold = 2\n",
                 lambda: "Keeping the previous findings" in s.read_log(), "a bad findings file is reported")
        check_eq(findings_of(s, "100")["idle-cores"]["severity"], "critical", "old rules kept")
        # the site list judged job 100 by the first rules; the new ones count there too
        got = s.get_ok("/api/v1/findings?since=7d&rule=idle-cores")["findings"]
        check_eq([(f["job"], f["severity"]) for f in got], [("100", "critical")], "the site list after SIGHUP")
        if "findings.conf:2: threshold = 2: expected a number from 0 to 1" not in s.read_log():
            fail(f"the log does not say what is wrong, and where:\n{s.read_log()}")

    # a bad file at start is an error that names the line
    for text, want in (("[idle-cores]\nthreshold = lots\n", "findings.conf:2: threshold = lots"),
                       ("[idle-core]\nenabled = yes\n", "unknown section [idle-core]"),
                       ("[kernel-time]\nseverity = severe\n", "expected info, warning or critical"),
                       ("[general]\nmin-samples = -1\n", "min-samples = -1")):
        with open(findings, "w") as f:
            f.write(text)
        s = Store(extra=["--findings", findings])
        r = subprocess.run([build_path("store", "lmk-store"), "--db", os.path.join(d, "x.db"), "--listen",
                            "127.0.0.1:0", "--token-file", s.token_file, "--findings", findings],
                           capture_output=True, text=True, timeout=30)
        if r.returncode == 0 or want not in r.stderr:
            fail(f"lmk-store with a bad findings file ({text!r}): exit {r.returncode}, expected {want!r}:\n{r.stderr}")
    with open(families, "w") as f:
        f.write("comm\n")
    r = subprocess.run([build_path("store", "lmk-store"), "--db", os.path.join(d, "x.db"), "--listen",
                        "127.0.0.1:0", "--token-file", s.token_file, "--families", families],
                       capture_output=True, text=True, timeout=30)
    if r.returncode == 0 or "families.conf: site table, line 1" not in r.stderr:
        fail(f"lmk-store with a bad families file: exit {r.returncode}:\n{r.stderr}")


def check_refused(s):
    b = make_batch(node="cn009", jobs=[job("200", 65)], rows=[row("200", "/apps/x", "exe", 1)])
    status, _, body = s.ingest(b)
    check_eq((status, body.get("field")), (400, "jobs[0].cpus_allocated"), f"more CPUs than the node: {body}")
    for bad in ([{"purpose": "BLAS", "family": "x"}], [{"purpose": "blas"}], "openblas",
                [{"purpose": "blas", "family": "a" * 33}]):
        b = make_batch(node="cn009", rows=[])
        b["node"]["installed"] = bad
        status, _, body = s.ingest(b)
        check_eq(status, 400, f"node.installed = {bad!r}: {body}")
        if not body.get("field", "").startswith("node.installed"):
            fail(f"node.installed = {bad!r}: field {body.get('field')}")
    check_eq(s.sql("SELECT count(*) FROM nodes WHERE name = 'cn009'")[0][0], 0, "nothing of them stored")


def main():
    with Store() as s:
        for b in batches():
            status, _, body = s.ingest(b)
            check_eq(status, 200, f"ingest: {body}")
        check_eq(s.sql("SELECT installed FROM nodes WHERE name = 'cn001'")[0][0],
                 "blas:openblas blas-reference:netlib", "node.installed stored")
        check_rules(s)
        check_site_list(s)
        check_cli(s)
        check_site_list_follows_jobs(s)
        check_refused(s)
    check_site_files()
    log("PASS")


if __name__ == "__main__":
    main()
