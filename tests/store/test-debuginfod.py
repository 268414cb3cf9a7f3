#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Names from debuginfod (issue 30): functions lmkd could not name (a
stripped program) named by lmk-store through a real debuginfod by
build-id, and the cases where it must name nothing.

A small C program with a build-id and hot functions is built here; its
debug file is kept (objcopy --only-keep-debug) and it is stripped. A real
`debuginfod -F DIR` serves the folder holding both. A batch sends the
stripped program's unnamed functions as lmkd would: the exact file offsets
of its functions' first bytes (entry, as lmkd finds them in the unwind
table), a page that one function covers whole, a page that holds pieces
of several functions, and a function of a build the server does not
have. The referee is the unstripped build's symbols (nm) and program
headers (readelf). Then:

- a store with --debuginfod: the job's JSON, its functions list (JSON and
  CSV), `lmk job --functions` and the job page show the names once the
  lookup ran (polled with a deadline); the page of several functions and
  the unknown build stay object+0xOFFSET; /metrics counts the lookups;
- a store without debuginfod: everything object+0xOFFSET; on the
  database a lookup named, the names;
- a debuginfod that accepts connections and never answers, and one that
  is down: ingest and answers stay fast, nothing is named, the lookups
  count as failed, and the store stops at once;
- a queue of one build-id: those it drops are looked up all the same,
  found in the database once it drains.

Skips (77) without gcc, objcopy, readelf, nm or debuginfod, or when
debuginfod cannot start."""
import csv
import io
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request

from lmktest import build_path, check, log
from storetest import START, Store, check_eq, function, make_batch, row, workdir

JOB = "7001"
PROG = "/opt/demo/bin/hotprog"
UNKNOWN_ID = "00112233445566778899aabbccddeeff00112233"
PAGE = 4096

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) double hot_alpha(int n) {
        double s = 0;
        for (int i = 0; i < n; i++)
                s += i * 0.5;
        return s;
}

__attribute__((noinline)) double hot_beta(int n) {
        double s = 1;
        for (int i = 0; i < n; i++)
                s *= 1.0000001;
        return s;
}

/* more than two pages of code: one page of it is covered whole */
#define STEP s = s * 1.000001 + n * 0.3; s -= n * 0.1;
#define TEN STEP STEP STEP STEP STEP STEP STEP STEP STEP STEP
#define HUNDRED TEN TEN TEN TEN TEN TEN TEN TEN TEN TEN
__attribute__((noinline, aligned(64))) double big_kernel(int n) {
        volatile double s = n;
        HUNDRED HUNDRED HUNDRED HUNDRED
        return s;
}

int main(int argc, char **argv) {
        int n = argc > 1 ? atoi(argv[1]) : 10;
        printf("%f\n", hot_alpha(n) + hot_beta(n) + big_kernel(n));
        return 0;
}
"""


def skip(why):
    log(f"SKIP: {why}")
    sys.exit(77)


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def build_program(d):
    """The program, its stripped copy and debug file in d/served; the
    unstripped build stays outside (the referee). Returns (build-id,
    {symbol: (file offset, size)}, the executable LOAD segment)."""
    src = os.path.join(d, "hotprog.c")
    full = os.path.join(d, "hotprog")
    served = os.path.join(d, "served")
    os.makedirs(served)
    with open(src, "w") as f:
        f.write(PROGRAM)
    run("gcc", "-O1", "-g", "-Wl,--build-id", "-o", full, src)
    run("objcopy", "--only-keep-debug", full, os.path.join(served, "hotprog.debug"))
    run("objcopy", "--strip-all", full, os.path.join(served, "hotprog"))
    notes = run("readelf", "-n", full)
    build_id = re.search(r"Build ID: ([0-9a-f]+)", notes).group(1)
    loads = []
    for line in run("readelf", "-lW", full).splitlines():
        p = line.split()
        if p and p[0] == "LOAD":
            loads.append((int(p[1], 16), int(p[2], 16), int(p[4], 16), "E" in p[6:-1]))
    text = [l for l in loads if l[3]][0]
    syms = {}
    for line in run("nm", "-S", "--defined-only", full).splitlines():
        p = line.split()
        if len(p) == 4 and p[2] in "tT" and p[3] in ("hot_alpha", "hot_beta", "big_kernel", "main"):
            vaddr, size = int(p[0], 16), int(p[1], 16)
            check(text[1] <= vaddr < text[1] + text[2], f"{p[3]} in the executable segment")
            syms[p[3]] = (vaddr - text[1] + text[0], size)
    check_eq(sorted(syms), ["big_kernel", "hot_alpha", "hot_beta", "main"], "the referee's functions")
    return build_id, syms, text


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class NoServer(Exception):
    """No debuginfod to name from: the checks that need none still run."""


def start_debuginfod(d, served):
    exe = shutil.which("debuginfod")
    if not exe:
        raise NoServer("no debuginfod (Debian package debuginfod)")
    port = free_port()
    logf = open(os.path.join(d, "debuginfod.log"), "wb")
    proc = subprocess.Popen([exe, "-F", served, "-p", str(port), "-d", os.path.join(d, "debuginfod.sqlite"),
                             "-t", "1", "-g", "0", "-v"], stdout=logf, stderr=logf)
    return proc, port


def wait_served(proc, port, build_id, timeout=60):
    """Until debuginfod has scanned the folder and serves both files."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise NoServer(f"debuginfod exited with {proc.returncode} (see debuginfod.log)")
        try:
            for kind in ("debuginfo", "executable"):
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/buildid/{build_id}/{kind}", timeout=5) as r:
                    r.read()
            return
        except OSError:
            time.sleep(0.3)
    raise NoServer(f"debuginfod did not serve build {build_id} within {timeout} s")


def batch(build_id, offsets, seq=1):
    """Job 7001's row of the stripped program and one of a build the server
    does not know, and their unnamed functions: (offset, entry, samples)."""
    other = "/opt/demo/lib/libunknown.so"
    rows = [dict(row(JOB, PROG, "exe", 1000), build_id=build_id),
            dict(row(JOB, other, "lib", 50), build_id=UNKNOWN_ID)]
    fns = [function(JOB, PROG, samples, offset=off, entry=entry, build_id=build_id)
           for off, entry, samples in offsets]
    fns.append(function(JOB, other, 50, offset=0x3000, build_id=UNKNOWN_ID))
    job = {"job": JOB, "user": "alice", "account": "p1", "partition": "batch", "cluster": "demo",
           "first_seen": START, "last_seen": START + 60}
    return make_batch(node="cn001", seq=seq, rows=rows, jobs=[job], frequency=10, functions=fns)


def texts(store):
    """The job's functions as (offset, entry) -> (function, named_by)."""
    return {(e["offset"], e["entry"]): (e["function"], e["named_by"])
            for e in store.get_ok(f"/api/v1/jobs/{JOB}")["functions"]}


def timed(what, fn, limit):
    t0 = time.monotonic()
    out = fn()
    took = time.monotonic() - t0
    check(took < limit, f"{what} took {took:.2f} s (at most {limit})")
    return out


def metric(store, name):
    st, _, body = store.request("GET", "/metrics")
    check_eq(st, 200, "/metrics")
    text = body if isinstance(body, str) else body.decode() if isinstance(body, bytes) else str(body)
    m = re.search("^" + re.escape(name) + r" (\d+)$", text, re.M)
    return int(m.group(1)) if m else None


def lmk_out(store, *args):
    return subprocess.run([build_path("cli", "lmk"), "--store", store.url(), "--token-file", store.token_file,
                           *args], check=True, capture_output=True, text=True).stdout


def check_served(d, build_id, offsets, want, unnamed, mixed):
    """Named through a real debuginfod serving the debug file."""
    served = os.path.join(d, "served")
    proc, port = start_debuginfod(d, served)
    try:
        wait_served(proc, port, build_id)
        cache = os.path.join(d, "client-cache")
        with proxy_store("--debuginfod", f"http://127.0.0.1:{port}", "--debuginfod-cache", cache,
                         "--debuginfod-timeout", "20") as store:
            st, _, body = timed("ingest with debuginfod", lambda: store.ingest(batch(build_id, offsets)), 2.0)
            check_eq(st, 200, f"ingest: {body}")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                got = texts(store)
                if all(got[k][1] == "store" for k, v in want.items() if v):
                    break
                time.sleep(0.2)
            for k, name in want.items():
                check_eq(got[k], (name, "store") if name else (unnamed(k[0]), None),
                         f"offset 0x{k[0]:x} entry {k[1]}")
            check_eq(got[(0x3000, False)], ("libunknown.so+0x3000", None), "a build the server does not have")
            # what the store keeps: the names, and that the mixed page names nothing
            rows = {(r[0], bool(r[1])): r[2] for r in store.sql(
                "SELECT file_offset, entry, name FROM function_names WHERE build_id = ?", (build_id,))}
            check_eq(rows, {k: v or "" for k, v in want.items()}, "function_names")
            check(os.path.isdir(cache) and any(files for _, _, files in os.walk(cache)),
                  "the client's cache is in --debuginfod-cache")
            # the answers: list JSON and CSV, lmk job, the page
            fl = store.get_ok(f"/api/v1/jobs/{JOB}/functions")["functions"]
            check_eq(sorted(e["function"] for e in fl if e["named_by"] == "store"),
                     sorted(v for v in want.values() if v), "the functions list")
            st, _, csv_text = store.get(f"/api/v1/jobs/{JOB}/functions?format=csv")
            rows = list(csv.DictReader(io.StringIO(csv_text, newline="")))
            check_eq(sorted((r["function"], r["named_by"], r["entry"]) for r in rows if r["object"] == PROG),
                     sorted([("big_kernel", "store", "false"), ("big_kernel", "store", "true"),
                             ("hot_alpha", "store", "true"), ("hot_beta", "store", "true"),
                             (unnamed(mixed), "", "false")]), "CSV")
            out = lmk_out(store, "job", JOB, "--functions")
            check("hot_alpha" in out and "hot_beta" in out and unnamed(mixed) in out, f"lmk job --functions:\n{out}")
            html = page(store)
            check("hot_alpha" in html and "big_kernel" in html, "the job page shows the names")
            check_eq(metric(store, 'lmk_store_debuginfod_lookups_total{result="found"}'), 1, "lookups found")
            check_eq(metric(store, 'lmk_store_debuginfod_lookups_total{result="missing"}'), 1, "lookups missing")
            check_eq(metric(store, 'lmk_store_debuginfod_lookups_total{result="failed"}'), 0, "lookups failed")
            check_eq(metric(store, 'lmk_store_debuginfod_functions_total{named="yes"}'), 4, "functions named")
            check_eq(metric(store, 'lmk_store_debuginfod_functions_total{named="no"}'), 1, "functions not named")
            check(metric(store, "lmk_store_debuginfod_queued_total") >= 2, "build-ids queued")
            # the same build again: the names are stored, nothing fetched again
            st, _, body = store.ingest(batch(build_id, offsets, seq=2))
            check_eq(st, 200, f"ingest again: {body}")
            time.sleep(1)
            check_eq(metric(store, 'lmk_store_debuginfod_lookups_total{result="found"}'), 1, "no lookup again")
            named = texts(store)
            db = store.db
        # the names are the database's: a store started on it without
        # debuginfod shows them at once
        with proxy_store(db=db) as store:
            check_eq(texts(store), named, "the names after a restart without debuginfod")
    finally:
        proc.terminate()
        proc.wait(timeout=20)



def page(store):
    st, _, body = store.request("GET", f"/jobs/{JOB}", headers={"X-Remote-User": "alice"})
    check_eq(st, 200, f"the job page: {body!r:.200}")
    return body if isinstance(body, str) else body.decode()


def proxy_store(*extra, env=None, db=None):
    return Store(extra=["--user-header", "X-Remote-User", "--trusted-proxies", "127.0.0.1 ::1", *extra], env=env,
                 db=db)


def main():
    for tool in ("gcc", "objcopy", "readelf", "nm"):
        if not shutil.which(tool):
            skip(f"no {tool}")
    os.environ.pop("DEBUGINFOD_URLS", None)
    d = workdir()
    build_id, syms, text = build_program(d)
    alpha, beta, big = syms["hot_alpha"], syms["hot_beta"], syms["big_kernel"]
    # a page big_kernel covers whole: the first page boundary past its start
    whole = (big[0] + PAGE - 1) // PAGE * PAGE
    check(whole + PAGE <= big[0] + big[1], f"big_kernel covers a page: {big}")
    # the page of big_kernel's end starts inside it and holds what follows
    # it too: never named after big_kernel, the function at its start
    mixed = (big[0] + big[1] - 1) // PAGE * PAGE
    check(big[0] < mixed and big[0] + big[1] < mixed + PAGE, f"big_kernel ends inside a page: {big}")
    offsets = [(alpha[0], True, 300), (beta[0], True, 200), (whole, False, 250), (mixed, False, 150),
               (big[0], True, 100)]
    want = {(alpha[0], True): "hot_alpha", (beta[0], True): "hot_beta", (whole, False): "big_kernel",
            (big[0], True): "big_kernel", (mixed, False): None}

    def unnamed(off):
        return f"hotprog+0x{off:x}"

    # without debuginfod: object+0xOFFSET, nothing looked up
    with proxy_store() as store:
        st, _, body = store.ingest(batch(build_id, offsets))
        check_eq(st, 200, f"ingest: {body}")
        got = texts(store)
        check_eq(got, {**{k: (unnamed(k[0]), None) for k in want}, (0x3000, False): ("libunknown.so+0x3000", None)},
                 "without debuginfod")
        check_eq(metric(store, "lmk_store_debuginfod_queued_total"), None, "no debuginfod metrics")
        check(f"hotprog+0x{alpha[0]:x}" in page(store), "the page shows the unnamed offset")

    no_server = None
    try:
        check_served(d, build_id, offsets, want, unnamed, mixed)
    except NoServer as e:
        no_server = str(e)
        log(f"not checked against a real debuginfod: {no_server}")

    # a debuginfod that never answers, one that is down: nothing waits on
    # them and nothing is named
    hang = socket.socket()
    hang.bind(("127.0.0.1", 0))
    hang.listen(16)
    held = []
    stop = threading.Event()

    def accept():
        hang.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(hang.accept()[0])
            except OSError:
                pass
    t = threading.Thread(target=accept, daemon=True)
    t.start()
    try:
        for what, url in (("a debuginfod that never answers", f"http://127.0.0.1:{hang.getsockname()[1]}"),
                          ("a debuginfod that is down", f"http://127.0.0.1:{free_port()}")):
            with proxy_store("--debuginfod-timeout", "1", "--debuginfod-retry", "1", "--debuginfod-cache",
                             os.path.join(d, f"cache-{len(held)}-{url.rsplit(':', 1)[1]}"),
                             env={"DEBUGINFOD_URLS": url}) as store:
                st, _, body = timed(f"ingest, {what}", lambda: store.ingest(batch(build_id, offsets)), 2.0)
                check_eq(st, 200, f"ingest: {body}")
                for _ in range(3):
                    got = timed(f"the job's answer, {what}", lambda: texts(store), 2.0)
                    check_eq(got, {**{k: (unnamed(k[0]), None) for k in want},
                                   (0x3000, False): ("libunknown.so+0x3000", None)}, what)
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline and \
                        (metric(store, 'lmk_store_debuginfod_lookups_total{result="failed"}') or 0) < 2:
                    time.sleep(0.2)
                check((metric(store, 'lmk_store_debuginfod_lookups_total{result="failed"}') or 0) >= 2,
                      f"both builds' lookups failed, {what}")
                check_eq(metric(store, 'lmk_store_debuginfod_lookups_total{result="found"}'), 0,
                         f"nothing found, {what}")
                check_eq(texts(store), got, f"still nothing named, {what}")
                check_eq(store.sql("SELECT count(*) FROM function_names")[0][0], 0, f"no names stored, {what}")
                # asked for again after --debuginfod-retry; a lookup in
                # flight is cut short when the store stops
                time.sleep(1.5)
                t0 = time.monotonic()
                store.stop()
                check(time.monotonic() - t0 < 5, f"the store stops at once, {what}")
        # a queue of one: the builds it drops are found in the database
        # once it drains, none hidden by those tried already
        ids = [f"{i:02x}" * 20 for i in (0xa1, 0xb2, 0xc3)]
        rows = [dict(row(JOB, f"/opt/lib{i}.so", "lib", 10), build_id=b) for i, b in enumerate(ids)]
        fns = [function(JOB, f"/opt/lib{i}.so", 10, offset=0x1000, build_id=b) for i, b in enumerate(ids)]
        job = {"job": JOB, "user": "alice"}
        with proxy_store("--debuginfod-queue", "1", "--debuginfod-timeout", "1", "--debuginfod-cache",
                         os.path.join(d, "cache-queue"), env={"DEBUGINFOD_URLS": f"http://127.0.0.1:{free_port()}"}) \
                as store:
            st, _, body = store.ingest(make_batch(node="cn002", seq=1, rows=rows, jobs=[job], functions=fns))
            check_eq(st, 200, f"ingest: {body}")
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and \
                    (metric(store, 'lmk_store_debuginfod_lookups_total{result="failed"}') or 0) < 3:
                time.sleep(0.2)
            check_eq(metric(store, 'lmk_store_debuginfod_lookups_total{result="failed"}'), 3,
                     "every build looked up through a queue of one")
            check_eq(metric(store, "lmk_store_debuginfod_dropped_total"), 2, "build-ids dropped, the queue full")
    finally:
        stop.set()
        t.join()
        for c in held:
            c.close()
        hang.close()
    if no_server:
        skip(f"all but the naming through a real debuginfod checked: {no_server}")


if __name__ == "__main__":
    main()
