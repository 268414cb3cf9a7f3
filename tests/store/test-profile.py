#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Profiles (issue 31, item 3): a job's functions as pprof's profile.proto
and as folded stacks, through the real lmk-store, read by the real
clients: `go tool pprof -raw` and `-top` (Debian's golang-go) must find
the totals, the functions, their phases and the mappings' build-ids of
the job's JSON; the folded lines, split as FlameGraph and speedscope
split them, must add up to the same. A hostile C++ name with spaces and
';' and an object path with both stay one frame. `lmk job --pprof` and
`--folded` write what the API answers, refuse to replace a file unless
--force, and write into a FIFO in place. Visibility as every job route:
someone else's job is 404 like one nobody ran; a range's profile holds
a person's own jobs only.

Job 7001 (alice) ran /opt/app/bin/app, libopenblas and a solver in a
directory with ';' and a space in its name; job 7002 (bob) ran the
same app."""
import gzip
import os
import shutil
import stat
import subprocess
import tempfile
import threading
import urllib.parse

from lmktest import build_path, check, fail, skip
from profiletest import (FULLWIDTH_SEMICOLON, check_folded, check_pprof, folded_frame, go_pprof, parse_folded, pprof,
                         pprof_env)
from storetest import (ADMIN_TOKEN, START, Store, check_eq, function, make_batch, pack_functions, row, sql_read,
                       sql_write, unpack_functions)

HZ = 10
APP, BLAS = "/opt/app/bin/app", "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"
ODD = "/scratch/alice/my;build dir/solver"
# a job id that a header's file name must not hold as it is
QUOTED = 'x"; filename=y.sh'
HOSTILE = "std::map<int, std::vector<double> >::operator[](int const&) ;a;b"


def frow(job, obj, kind, samples, phase="", build_id=None, user="alice"):
    r = row(job, obj, kind, samples, phase=phase, user=user)
    r["build_id"] = build_id
    return r


def job(jid, user):
    return {"job": jid, "user": user, "account": "p1", "partition": "batch", "cluster": "demo",
            "first_seen": START, "last_seen": START + 120}


ROWS = [
    frow("7001", APP, "exe", 700, phase="solve", build_id="aa11"),
    frow("7001", APP, "exe", 100, build_id="aa11"),
    frow("7001", BLAS, "lib", 300, phase="solve", build_id="bb22"),
    frow("7001", ODD, "exe", 50, phase="solve", build_id="dd44"),
    frow("7001", "[kernel]", "kernel", 50, phase="solve"),
    frow("7002", APP, "exe", 80, build_id="aa11", user="bob"),
    frow(QUOTED, APP, "exe", 5, build_id="aa11", user="carol"),
]
FUNCTIONS = [
    function("7001", APP, 500, name="solve_kernel", phase="solve", build_id="aa11"),
    function("7001", APP, 150, name=HOSTILE, phase="solve", build_id="aa11"),
    function("7001", APP, 50, other=True, phase="solve", build_id="aa11"),
    function("7001", APP, 60, offset=0x21000, build_id="aa11"),
    function("7001", APP, 30, name="main", build_id="aa11"),
    function("7001", APP, 10, offset=0x25000, build_id="aa11"),
    function("7001", BLAS, 280, name="dgemm_kernel_HASWELL", phase="solve", build_id="bb22"),
    function("7001", BLAS, 20, other=True, phase="solve", build_id="bb22"),
    function("7001", ODD, 50, name="odd_fn", phase="solve", build_id="dd44"),
    function("7002", APP, 80, name="bob_kernel", build_id="aa11"),
    function(QUOTED, APP, 5, name="quoted", build_id="aa11"),
]


def save(store, data, what):
    path = os.path.join(store.dir, f"{what}.pb.gz")
    with open(path, "wb") as f:
        f.write(data)
    return path


def check_job(store, cmd, env):
    by_phase = store.get_ok("/api/v1/jobs/7001/functions?by=phase&limit=100000")["functions"]
    functions = store.get_ok("/api/v1/jobs/7001/functions?limit=100000")["functions"]
    job_json = store.get_ok("/api/v1/jobs/7001")
    check_eq(sum(e["samples"] for e in functions), sum(f["samples"] for f in FUNCTIONS if f["job"] == "7001"),
             "the job's functions in its JSON")
    check_eq(job_json["samples"], 1200, "the job's samples")

    st, hdrs, body = store.get("/api/v1/jobs/7001/profile")
    check_eq((st, hdrs.get("content-type"), hdrs.get("content-disposition")),
             (200, "application/octet-stream", 'attachment; filename="lmk-job-7001.pb.gz"'), "the profile's headers")
    check(isinstance(body, bytes) and body[:2] == b"\x1f\x8b", "the profile is gzip")
    raw = gzip.decompress(body)
    in_functions = sum(f["samples"] for f in FUNCTIONS if f["job"] == "7001")
    check(b"lmk job 7001 on demo, user alice" in raw and
          f"{in_functions} of the job's 1200 samples are in functions".encode() in raw, "the profile's comments")
    if cmd:
        check_pprof(cmd, env, save(store, body, "job"), by_phase, HZ, "job")

    st, hdrs, text = store.get("/api/v1/jobs/7001/profile?format=folded&cluster=demo")
    check_eq((st, hdrs.get("content-type"), hdrs.get("content-disposition")),
             (200, "text/plain; charset=utf-8", 'attachment; filename="lmk-job-7001.folded"'), "folded's headers")
    stacks = check_folded(text, functions, "job")
    # the hostile name and the odd path: one frame each, ';' shown as U+FF1B
    check_eq(stacks.get(("app", folded_frame(HOSTILE))), 150, "the hostile name's frame")
    check_eq(stacks.get(("solver", "odd_fn")), 50, "the odd path's object frame (its file name)")
    check(FULLWIDTH_SEMICOLON + "a" + FULLWIDTH_SEMICOLON + "b" in text, "';' in a name as U+FF1B")

    st, hdrs, _ = store.get(f"/api/v1/jobs/{urllib.parse.quote(QUOTED)}/profile?format=folded")
    check_eq((st, hdrs.get("content-disposition")), (200, 'attachment; filename="lmk-job-x___filename_y.sh.folded"'),
             "a job id with a quote in the file name")

    for path, field in (("/api/v1/jobs/7001/profile?format=xml", "format"),
                        ("/api/v1/jobs/7001/profile?by=phase", None),
                        ("/api/v1/profile?limit=0", "limit"), ("/api/v1/profile?format=csv", "format")):
        st, _, body = store.get(path)
        check_eq(st, 400, f"GET {path}: {body}")
        if field:
            check_eq(body.get("field"), field, f"GET {path}: the field named")


def lmk(store, *args, expect=0):
    p = subprocess.run([build_path("cli", "lmk"), "--store", store.url(), "--token-file", store.token_file, *args],
                       capture_output=True, timeout=60)
    if p.returncode != expect:
        fail(f"lmk {' '.join(args)}: exit {p.returncode}, want {expect}\n{p.stdout}\n{p.stderr}")
    return p


def check_cli(store):
    token = os.path.join(store.dir, "admin-token")
    with open(token, "w") as f:
        f.write(ADMIN_TOKEN + "\n")
    os.chmod(token, 0o600)
    store.token_file = token
    _, _, body = store.get("/api/v1/jobs/7001/profile")
    _, _, text = store.get("/api/v1/jobs/7001/profile?format=folded")
    out = os.path.join(store.dir, "out")
    os.mkdir(out)
    pb, fd = os.path.join(out, "job.pb.gz"), os.path.join(out, "job.folded")

    old = os.umask(0o027)
    try:
        lmk(store, "job", "7001", "--pprof", pb, "--folded", fd)
    finally:
        os.umask(old)
    check_eq(stat.S_IMODE(os.stat(pb).st_mode), 0o640, "the file's mode as the umask says")
    with open(pb, "rb") as f:
        check_eq(f.read(), body, "lmk job --pprof wrote the API's profile")
    with open(fd, encoding="utf-8") as f:
        check_eq(f.read(), text, "lmk job --folded wrote the API's folded stacks")
    check_eq(sorted(os.listdir(out)), ["job.folded", "job.pb.gz"], "no temporary file left")

    # a file that is there is not replaced, unless --force
    with open(pb, "wb") as f:
        f.write(b"mine")
    p = lmk(store, "job", "7001", "--pprof", pb, expect=1)
    check(b"exists" in p.stderr and b"--force" in p.stderr, f"the refusal says why: {p.stderr}")
    with open(pb, "rb") as f:
        check_eq(f.read(), b"mine", "the file is as it was")
    lmk(store, "job", "7001", "--pprof", pb, "--force")
    with open(pb, "rb") as f:
        check_eq(f.read(), body, "--force replaced it")
    # a symlink to a file is that file
    link = os.path.join(out, "link")
    os.symlink(pb, link)
    lmk(store, "job", "7001", "--folded", link, expect=1)
    check(os.path.islink(link), "the link stays")

    # a FIFO and /dev/null, named on purpose, are written into, not replaced
    fifo = os.path.join(out, "fifo")
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    lmk(store, "job", "7001", "--folded", fifo)
    reader.join(30)
    check_eq(got, [text.encode()], "the folded stacks through the FIFO")
    check(stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO is still a FIFO")
    lmk(store, "job", "7001", "--pprof", "/dev/null")
    check(stat.S_ISCHR(os.stat("/dev/null").st_mode), "/dev/null is still a device")

    p = lmk(store, "job", "7099", "--pprof", os.path.join(out, "none.pb.gz"), expect=1)
    check(not os.path.exists(os.path.join(out, "none.pb.gz")), "no file for a job that is not there")
    for bad in (["--pprof", pb, "--functions"], ["--pprof", pb, "--folded", pb], ["--force"],
                ["--pprof", out]):
        lmk(store, "job", "7001", *bad, expect=1)
    lmk(store, "--json", "job", "7001", "--pprof", os.path.join(out, "x"), expect=1)


def check_visibility(store, cmd, env):
    def as_user(user, path):
        return store.request("GET", path, headers={"X-Remote-User": user})

    st, _, body = as_user("alice", "/api/v1/jobs/7001/profile?format=folded")
    check_eq(st, 200, f"alice's own job's profile: {body}")
    for path in ("/api/v1/jobs/7001/profile", "/api/v1/jobs/7001/profile?format=folded"):
        got = as_user("bob", path)
        nobody = as_user("bob", path.replace("7001", "7099"))
        check_eq((got[0], got[2]), (404, {"error": "no such job: 7001"}), f"bob asks for alice's job: {path}")
        check_eq(nobody[0], 404, f"bob asks for a job nobody ran: {path}")

    since = f"since={int(START) - 60}&until={int(START) + 600}"
    everyone = [e for j in ("7001", "7002", urllib.parse.quote(QUOTED))
                for e in store.get_ok(f"/api/v1/jobs/{j}/functions?limit=100000")["functions"]]
    st, _, text = store.get(f"/api/v1/profile?{since}&format=folded")
    check_eq(st, 200, f"the range's profile: {text}")
    check_folded(text, everyone, "the range (admin)")
    st, _, text = as_user("bob", f"/api/v1/profile?{since}&format=folded")
    check_eq(parse_folded(text, "bob's range"), {("app", "bob_kernel"): 80}, "bob's range: his own job only")
    st, _, text = as_user("alice", f"/api/v1/profile?{since}&format=folded&user=bob")
    check_eq((st, text), (200, ""), "alice asks for bob's jobs: none")
    st, _, text = store.get(f"/api/v1/profile?since={int(START) + 3600}&format=folded")
    check_eq((st, text), (200, ""), "a range without jobs")
    st, hdrs, body = store.get(f"/api/v1/profile?{since}&user=alice")
    check_eq((st, hdrs.get("content-type")), (200, "application/octet-stream"), "the range's pprof")
    # its comment counts the jobs summed (the page count of the job list's SQL)
    check(b"the functions of 1 jobs seen" in gzip.decompress(body), "alice's range: one job counted")
    st, _, every = store.get(f"/api/v1/profile?{since}")
    check(st == 200 and b"the functions of 3 jobs seen" in gzip.decompress(every), "the range: three jobs counted")
    if cmd:
        by_phase = store.get_ok("/api/v1/jobs/7001/functions?by=phase&limit=100000")["functions"]
        check_pprof(cmd, env, save(store, body, "range"), by_phase, HZ, "range")


def check_large(store, cmd, env):
    """More CPU time than 64 bits of nanoseconds hold (a big site's month):
    the profile counts milliseconds instead, and pprof reads them."""
    seconds = 10 ** 10  # 2.8 million core-hours in one function
    # each of the job's function sums, over its phases and per phase
    # (job_function_packs, schema/0025)
    packs = sql_read(store.db, "SELECT p.job_id, p.object_id, p.packed FROM job_function_packs p "
                     "JOIN jobs j ON j.id = p.job_id WHERE j.job = '7002'")
    sql_write(store.db, [("UPDATE job_function_packs SET packed = ? WHERE job_id = ? AND object_id = ?",
                          (pack_functions([(e[0], e[1], e[2], seconds, e[4], e[5]) for e in unpack_functions(packed)]),
                           job_id, object_id)) for job_id, object_id, packed in packs])
    st, _, body = store.get("/api/v1/profile?since=30d&user=bob")
    check_eq(st, 200, "the range's profile")
    raw = gzip.decompress(body)
    check(b"milliseconds" in raw and b"nanoseconds" not in raw, "CPU time in milliseconds")
    if cmd:
        text = pprof(cmd, env, "-raw", save(store, body, "large"))
        check("PeriodType: cpu milliseconds" in text and f"80 {seconds * 1000}: 1" in text,
              f"pprof reads the milliseconds: {text}")


def main():
    cmd = go_pprof()
    tmp = tempfile.mkdtemp(prefix="lmk-pprof-")
    env = pprof_env(tmp)
    try:
        with Store(extra=["--user-header", "X-Remote-User", "--trusted-proxies", "127.0.0.1 ::1"]) as store:
            b = make_batch(node="cn001", seq=1, rows=ROWS, jobs=[job("7001", "alice"), job("7002", "bob"), job(QUOTED, "carol")],
                           frequency=HZ, functions=FUNCTIONS)
            st, _, body = store.ingest(b)
            check_eq(st, 200, f"ingest: {body}")
            check_job(store, cmd, env)
            check_cli(store)
            check_visibility(store, cmd, env)
            check_large(store, cmd, env)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not cmd:
        skip("go (Debian's golang-go) is not installed: the profiles were checked, not read by pprof")


if __name__ == "__main__":
    main()
