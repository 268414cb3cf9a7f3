# SPDX-License-Identifier: GPL-2.0-or-later
"""Helpers for the lmk-store tests: start the real lmk-store on 127.0.0.1
with a free port (it binds port 0 and logs the one it got) and a temporary
database, talk HTTP to it with the standard library, build batches.

LMK_TEST_BACKEND=postgresql runs the same tests on PostgreSQL: each Store
without a database of its own gets a fresh database in one private server
per test (tests/lib/pgserver.py; the test skips with 77 where none can
start), and Store.sql() reads it through psycopg2."""
import atexit
import copy
import gzip
import json
import os
import re
import shutil
import signal
import socket
import sqlite3
import struct
import subprocess
import time
import urllib.parse

import lmktest
from lmktest import build_path, check, fail, log, skip, tmpdir

BACKEND = os.environ.get("LMK_TEST_BACKEND", "sqlite")
if BACKEND not in ("sqlite", "postgresql"):
    fail(f"LMK_TEST_BACKEND={BACKEND}: not sqlite or postgresql")

# Under -Db_sanitize=undefined, a finding in lmk-store or lmk fails the test
# instead of scrolling by in a log.
os.environ.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")

NODE_TOKEN = "node-token-6f1c2a9e0b7d4e35"
ADMIN_TOKEN = "admin-token-93be55d1c0a84f27"
BOUND_TOKEN = "cn042-token-41d8cd98f00b204e"

# Interval start of the generated batches: two days ago, on the hour, so that
# relative times ("since 7d") and the default "until now" cover them.
START = float((int(time.time()) - 2 * 86400) // 3600 * 3600)


_dirs = []


def workdir():
    """A temporary directory, removed at exit unless LMK_KEEP_TEST_DIRS=1."""
    d = tmpdir("lmk-store-test-")
    _dirs.append(d)
    return d


@atexit.register
def _cleanup():
    if os.environ.get("LMK_KEEP_TEST_DIRS") != "1":
        for d in _dirs:
            shutil.rmtree(d, ignore_errors=True)


def store_binary():
    path = build_path("store", "lmk-store")
    if not os.path.exists(path):
        skip(f"{path} was not built")
    return path


def write_tokens(path, lines=None, mode=0o600):
    if lines is None:
        lines = [f"node {NODE_TOKEN}", f"admin {ADMIN_TOKEN}", f"node {BOUND_TOKEN} cn042"]
    with open(path, "w") as f:
        f.write("# test tokens\n" + "\n".join(lines) + "\n")
    os.chmod(path, mode)


_pg = None
_pg_databases = 0


def pg_server():
    """The test's private PostgreSQL server, started on first use."""
    global _pg
    if _pg is None:
        import pgserver
        _pg = pgserver.start_or_skip()
    return _pg


def new_database():
    """A --db value for a new, empty database of the test's backend, or None
    for SQLite (a file in the store's directory)."""
    global _pg_databases
    if BACKEND != "postgresql":
        return None
    pg = pg_server()
    _pg_databases += 1
    name = f"lmk_{_pg_databases}"
    # A linguistic default collation, as a site's server likely has (ICU's
    # en-US sorts "alpha" before "Zeta"): the store must sort by bytes as
    # SQLite does all the same (schema/postgresql/0016-byte-order.sql).
    try:
        pg.psql(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C' "
                "LOCALE_PROVIDER icu ICU_LOCALE 'en-US'", dbname="postgres")
    except RuntimeError:  # built without ICU
        pg.psql(f"CREATE DATABASE {name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'", dbname="postgres")
    return f"postgresql://lmk@{urllib.parse.quote(pg.host, safe='')}:{pg.port}/{name}"


def is_postgresql(db):
    return db.startswith(("postgresql://", "postgres://"))


FUNCTION_TABLES = re.compile(r"\bjob_(phase_)?functions\b")


def sql_read(db, query, args=()):
    """Rows of a query on the database of a --db value ('?' placeholders).
    A query of job_functions or job_phase_functions, which schema/0025
    packed into job_function_packs, reads them as they were, decoded
    (function_tables())."""
    if is_postgresql(db):
        import psycopg2
        con = psycopg2.connect(db)
        try:
            with con.cursor() as cur:
                if FUNCTION_TABLES.search(query):
                    function_tables(cur, "%s")
                cur.execute(query.replace("%", "%%").replace("?", "%s"), tuple(args))
                return cur.fetchall() if cur.description else []
        finally:
            con.close()
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        if FUNCTION_TABLES.search(query):
            function_tables(con.cursor(), "?")
        return con.execute(query, args).fetchall()
    finally:
        con.close()


def _varint(data, pos):
    v = shift = 0
    while True:
        b = data[pos]
        pos += 1
        v |= (b & 0x7f) << shift
        shift += 7
        if not b & 0x80:
            return (v - (1 << 64) if v >= 1 << 63 else v), pos


def unpack_functions(packed):
    """The entries of a job_function_packs.packed value
    (store/db/sql/function-pack.h), written here from its header alone: a
    second reader of the format. (phase_id, function_id, samples,
    cpu_seconds, cycles, instructions), None for a NULL counter; phase 0:
    the sums over the job's phases."""
    data = bytes(packed)
    check(len(data) >= 1 and data[0] == 1, f"not a function pack of version 1: {data[:16].hex()}")
    pos, out, phase, function = 1, [], 0, 0
    while pos < len(data):
        dphase, pos = _varint(data, pos)
        f, pos = _varint(data, pos)
        function = function + f if out and dphase == 0 else f
        phase += dphase
        samples, pos = _varint(data, pos)
        cpu = struct.unpack("<d", data[pos:pos + 8])[0]
        which = data[pos + 8]
        pos += 9
        counters = []
        for k in range(2):
            if which & (1 << k):
                c, pos = _varint(data, pos)
                counters.append(c)
            else:
                counters.append(None)
        out.append((phase, function, samples, cpu, *counters))
    return out


def pack_functions(entries):
    """A job_function_packs.packed value of entries as unpack_functions()
    gives them, in (phase_id, function_id) order."""
    def varint(v):
        v &= (1 << 64) - 1
        b = bytearray()
        while v >= 0x80:
            b.append(v & 0x7f | 0x80)
            v >>= 7
        b.append(v)
        return bytes(b)
    out, prev = bytearray([1]), None
    for phase, function, samples, cpu, cycles, instructions in sorted(entries):
        dphase = phase - prev[0] if prev else phase
        out += varint(dphase) + varint(function - prev[1] if prev and dphase == 0 else function)
        out += varint(samples) + struct.pack("<d", cpu)
        out.append((cycles is not None) | (instructions is not None) << 1)
        out += (varint(cycles) if cycles is not None else b"") + (
            varint(instructions) if instructions is not None else b"")
        prev = (phase, function)
    return bytes(out)


def function_tables(cur, mark):
    """job_functions and job_phase_functions as schema/0021 had them, as
    temporary tables of cur's connection decoded from job_function_packs:
    what tests written against them read."""
    cur.execute("SELECT job_id, packed FROM job_function_packs ORDER BY job_id, object_id")
    packs = cur.fetchall()
    cur.execute("CREATE TEMPORARY TABLE job_functions (job_id BIGINT, function_id BIGINT, samples BIGINT, "
                "cpu_seconds DOUBLE PRECISION, cycles BIGINT, instructions BIGINT)")
    cur.execute("CREATE TEMPORARY TABLE job_phase_functions (job_id BIGINT, phase_id BIGINT, function_id BIGINT, "
                "samples BIGINT, cpu_seconds DOUBLE PRECISION, cycles BIGINT, instructions BIGINT)")
    for job_id, packed in packs:
        for phase, *rest in unpack_functions(packed):
            if phase == 0:
                cur.execute(f"INSERT INTO job_functions VALUES ({', '.join([mark] * 6)})", (job_id, *rest))
            else:
                cur.execute(f"INSERT INTO job_phase_functions VALUES ({', '.join([mark] * 7)})",
                            (job_id, phase, *rest))


def unpack_samples(packed):
    """The rows of a sample_packs.packed value (store/db/sql/sample-pack.h), as
    (object_id, phase_id, task_id, samples, cpu_seconds, cpu_time_ns,
    cycles, instructions) with None for a NULL counter."""
    data = bytes(packed)
    check(len(data) >= 9 and data[0] == 1, f"not a pack of version 1: {data[:16].hex()}")
    hz = struct.unpack("<d", data[1:9])[0]
    pos = 9

    def varint():
        nonlocal pos
        v, pos = _varint(data, pos)
        return v

    rows = []
    while pos < len(data):
        ids = [varint() for _ in range(4)]
        which = data[pos]
        pos += 1
        counters = [varint() if which & (1 << k) else None for k in range(3)]
        rows.append((*ids[:3], ids[3], ids[3] * (1.0 / hz), *counters))
    return rows


def raw_rows(db, where="TRUE", args=()):
    """The raw rows stored, unpacked: (job_id, bucket, node_id, object_id,
    phase_id, task_id, samples, cpu_seconds, cpu_time_ns, cycles,
    instructions), one per row of a batch, of the packs that match where
    (SQL on sample_packs p)."""
    out = []
    for job_id, bucket, node_id, n_rows, samples, packed in sql_read(
            db, f"SELECT p.job_id, p.bucket, p.node_id, p.n_rows, p.samples, p.packed FROM sample_packs p "
                f"WHERE {where} ORDER BY p.job_id, p.bucket, p.node_id, p.boot_id, p.seq", args):
        rows = unpack_samples(packed)
        check((len(rows), sum(r[3] for r in rows)) == (n_rows, samples),
              f"a pack's n_rows and samples ({n_rows}, {samples}) differ from its rows {rows}")
        out += [(job_id, bucket, node_id, *r) for r in rows]
    return out


_stores = []


def _show_store_logs():
    for st in _stores:
        try:
            lines = st.read_log().splitlines()[-20:]
        except OSError:
            continue
        log(f"--- last lines of {st.log_path}:")
        for line in lines:
            log(f"    {line}")


lmktest.on_fail.append(_show_store_logs)


def sql_write(db, statements):
    """Runs (query, args) pairs in one transaction on the database of a --db
    value ('?' placeholders), beside a store that is stopped or whose caches
    the change cannot confuse."""
    if is_postgresql(db):
        import psycopg2
        con = psycopg2.connect(db)
        with con, con.cursor() as cur:
            for q, args in statements:
                cur.execute(q.replace("%", "%%").replace("?", "%s"), tuple(args))
    else:
        con = sqlite3.connect(db)
        with con:
            for q, args in statements:
                con.execute(q, args)
    con.close()


def table_names(db):
    """The tables of the database of a --db value."""
    if is_postgresql(db):
        q = "SELECT tablename FROM pg_tables WHERE schemaname = current_schema()"
    else:
        q = "SELECT name FROM sqlite_master WHERE type = 'table'"
    return {r[0] for r in sql_read(db, q)}


def sql_total(db, column):
    """SQL for SQLite's total(column) (a float sum, 0.0 over no rows, never
    an integer overflow) in the dialect of the database of a --db value."""
    if is_postgresql(db):
        return f"coalesce(sum(CAST({column} AS DOUBLE PRECISION)), 0)"
    return f"total({column})"


class Store:
    """A running lmk-store. Use as a context manager."""

    def __init__(self, directory=None, db=None, extra=(), tokens=None, env=None):
        self.dir = directory or workdir()
        self.db = db or new_database() or os.path.join(self.dir, "lmk.db")
        self.token_file = os.path.join(self.dir, "tokens")
        if tokens is not False:
            write_tokens(self.token_file, tokens)
        self.log_path = os.path.join(self.dir, "lmk-store.log")
        _stores.append(self)
        self.extra = list(extra)
        self.env = dict(env or {})
        self.proc = None
        self.port = None

    def start(self, timeout=20.0):
        return self.launch().wait_listening(timeout)

    def launch(self):
        """Starts the process without waiting for it to listen."""
        # a restarted store comes back on the port it had, as a real one would
        cmd = [store_binary(), "--db", self.db, "--listen", f"127.0.0.1:{self.port or 0}",
               "--token-file", self.token_file, *self.extra]
        log("+", " ".join(cmd))
        self.logf = open(self.log_path, "ab")
        self.log_start = self.logf.tell()
        env = dict(os.environ)
        env.pop("NOTIFY_SOCKET", None)
        env.update(self.env)
        self.proc = subprocess.Popen(cmd, stdout=self.logf, stderr=self.logf, env=env)
        return self

    def wait_listening(self, timeout=20.0):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            m = re.search(r"Listening on http://127\.0\.0\.1:(\d+)/", self.read_log()[self.log_start:])
            if m:
                self.port = int(m.group(1))
                return self
            if self.proc.poll() is not None:
                fail(f"lmk-store exited with {self.proc.returncode} before listening:\n{self.read_log()}")
            time.sleep(0.02)
        fail(f"lmk-store did not start within {timeout}s:\n{self.read_log()}")

    def read_log(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("latin-1")

    def stop(self, sig=signal.SIGTERM, timeout=20.0):
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            fail(f"lmk-store did not stop within {timeout}s after signal {sig}")
        self.logf.close()
        for bad in ("runtime error:", "AddressSanitizer", "LeakSanitizer"):
            if bad in self.read_log():
                fail(f"lmk-store reported {bad}:\n{self.read_log()}")
        return self.proc.returncode

    def reload(self, path, text, until, what, timeout=10.0):
        """Writes text to the config file path, sends SIGHUP and waits until
        until() is true (what names it in the failure)."""
        with open(path, "w") as f:
            f.write(text)
        self.proc.send_signal(signal.SIGHUP)
        end = time.monotonic() + timeout
        while not until():
            if time.monotonic() > end:
                fail(f"after SIGHUP: {what}, not within {timeout:g}s:\n{self.read_log()}")
            time.sleep(0.1)

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def url(self, path=""):
        return f"http://127.0.0.1:{self.port}{path}"

    def request(self, method, path, body=None, token=None, headers=None, timeout=30):
        """Returns (status, headers dict with lower-case names, parsed JSON,
        bytes (application/octet-stream) or text).

        A small HTTP/1.1 client on a plain socket: like curl, it sends a large
        body only after "100 Continue", so that an early answer (401, 413)
        is read instead of being lost to a connection reset."""
        h = {"Host": f"127.0.0.1:{self.port}", "Connection": "close"}
        h.update(headers or {})
        if token:
            h["Authorization"] = f"Bearer {token}"
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
            h.setdefault("Content-Type", "application/json")
        body = body or b""
        if body or method == "POST":
            h["Content-Length"] = str(len(body))
        expect = len(body) > 65536
        if expect:
            h["Expect"] = "100-continue"
        head = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) + "\r\n"
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        try:
            sock.sendall(head.encode() + (b"" if expect else body))
            data = b""
            if expect:
                while b"\r\n\r\n" not in data:
                    chunk = sock.recv(65536)
                    if not chunk:
                        break
                    data += chunk
                if data.startswith(b"HTTP/1.1 100"):
                    data = data.split(b"\r\n\r\n", 1)[1]
                    sock.sendall(body)
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                data += chunk
        finally:
            sock.close()
        raw_head, _, payload = data.partition(b"\r\n\r\n")
        lines = raw_head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        hdrs = {}
        for line in lines[1:]:
            k, _, v = line.partition(":")
            hdrs[k.strip().lower()] = v.strip()
        if "content-length" in hdrs:
            payload = payload[:int(hdrs["content-length"])]
        if hdrs.get("content-type", "").startswith("application/octet-stream"):
            return status, hdrs, payload
        if payload and hdrs.get("content-type", "").startswith("application/json"):
            try:
                return status, hdrs, json.loads(payload)
            except ValueError:
                fail(f"{method} {path}: answer is not JSON: {payload[:200]!r}")
        return status, hdrs, payload.decode(errors="replace")

    def ingest(self, batch, token=NODE_TOKEN, gzipped=False, headers=None):
        body = batch if isinstance(batch, bytes) else json.dumps(batch).encode()
        h = {"Content-Type": "application/json"}
        if gzipped:
            body = gzip.compress(body)
            h["Content-Encoding"] = "gzip"
        h.update(headers or {})
        return self.request("POST", "/api/v1/ingest", body=body, token=token, headers=h)

    def get(self, path, token=ADMIN_TOKEN):
        return self.request("GET", path, token=token)

    def get_ok(self, path):
        status, _, body = self.get(path)
        check_eq(status, 200, f"GET {path}: {body}")
        return body

    def sql(self, query, args=()):
        """Reads the database directly, beside the running store."""
        return sql_read(self.db, query, args)

    def counts(self):
        tables = ["batches", "jobs", "sample_packs", "objects", "phases", "job_objects",
                  "job_phases", "job_nodes", "job_notes", "job_markers", "object_hours", "object_days", "nodes",
                  "job_ranks", "functions", "job_functions", "job_phase_functions"]
        return {t: self.sql(f"SELECT count(*) FROM {t}")[0][0] for t in tables}


def check_eq(got, want, what):
    if got != want:
        fail(f"{what}: expected {want!r}, got {got!r}")


EXAMPLE = {
    "format": "lmk-batch",
    "version": 1,
    "batch": {"node": "cn001", "boot_id": "1b4e28ba-2fa1-11d2-883f-0016d3cca427", "seq": 17},
    "node": {"hostname": "cn001", "cpus": 48, "cluster": "demo"},
    "interval": {"start": START, "end": START + 60},
    "sampling": {"event": "cpu-clock", "frequency_hz": 1, "samples_lost": 0},
    "jobs": [
        {"job": "4711", "user": "alice", "account": "p123", "partition": "batch",
         "name": "lulesh", "nodes": 4, "tasks": 192, "cluster": "demo",
         "notes": {"app": "lulesh", "size": "128"},
         "first_seen": START + 1.2, "last_seen": START + 59.9, "ended": False},
    ],
    "rows": [
        {"job": "4711", "step": "0", "user": "alice", "comm": "lulesh2.0",
         "object": "/opt/lulesh/lulesh2.0", "kind": "exe",
         "build_id": "5d1c0f1e9a3b77f0c2d14e8b9a6f0c1d2e3f4a5b",
         "phase": "timestep/solve", "samples": 2051,
         "cpu_time_ns": None, "cycles": None, "instructions": None},
        {"job": None, "step": None, "user": "root", "comm": "swapper",
         "object": "[idle]", "kind": "idle", "build_id": None, "phase": "",
         "samples": 310, "cpu_time_ns": None, "cycles": None, "instructions": None},
    ],
    "markers": [
        {"job": "4711", "comm": "lulesh2.0", "phase": "inner", "state": "off-rate"},
    ],
}


def example(**changes):
    b = copy.deepcopy(EXAMPLE)
    b.update(changes)
    return b


def make_batch(node="cn001", seq=0, boot_id="boot-a", start=START, rows=(), jobs=(), markers=(),
               cluster="demo", frequency=1, ranks=None, functions=None):
    """A batch of version 1, or with functions (a list, maybe empty) of
    version 2."""
    b = {
        "format": "lmk-batch", "version": 1 if functions is None else 2,
        "batch": {"node": node, "boot_id": boot_id, "seq": seq},
        "node": {"hostname": node, "cpus": 64, "cluster": cluster},
        "interval": {"start": start, "end": start + 60},
        "sampling": {"event": "cpu-clock", "frequency_hz": frequency, "samples_lost": 0},
        "jobs": list(jobs), "rows": list(rows), "markers": list(markers),
    }
    if ranks is not None:
        b["ranks"] = list(ranks)
    if functions is not None:
        b["functions"] = list(functions)
    return b


def function(job, obj, samples, name=None, offset=None, other=False, phase="", build_id=None, cycles=None,
             instructions=None, step=None, entry=False):
    """An entry of functions[] (version 2): named (name), unnamed (offset,
    with the object's build_id; entry=True: a function's first byte, else
    a page's) or the other functions (other=True) of
    the rows of (job, step, object, build_id, phase); step "0" in a job,
    as row() makes it."""
    f = {"job": job, "step": step if step is not None else ("0" if job else None), "object": obj,
         "build_id": build_id, "phase": phase, "function": name, "offset": offset, "samples": samples,
         "cycles": cycles, "instructions": instructions}
    if other:
        f["other"] = True
    if entry:
        f["entry"] = True
    return f


def version3(batch):
    """batch (version 2) as lmkd writes it since version 3: each functions[]
    entry names a rows[] entry of its (job, step, object, phase) and build
    by index instead of the five strings, build_id null only where it
    names no build and its row has one, and leaves out null and false
    members. The store must read it as the batch it stands for."""
    rows = batch["rows"]

    def row_of(f):
        for i, r in enumerate(rows):
            if all(r.get(k) == f.get(k) for k in ("job", "step", "object", "phase")) and \
                    (f.get("build_id") is None or r.get("build_id") == f["build_id"]):
                return i
        raise ValueError(f"no row for {f}")

    out = []
    for f in batch["functions"]:
        i = row_of(f)
        e = {"row": i}
        if f.get("build_id") is None and rows[i].get("build_id") is not None:
            e["build_id"] = None
        e.update((k, v) for k, v in f.items()
                 if k not in ("job", "step", "object", "phase", "build_id") and v not in (None, False))
        out.append(e)
    batch = dict(batch, version=3, functions=out)
    return batch


def rank(job, rank_no, samples, comm, phase="", step="0", first=START + 1, last=START + 59):
    """An entry of ranks[]: a rank's samples in one phase, comm of them in
    communication libraries."""
    return {"job": job, "step": step, "rank": rank_no, "phase": phase, "samples": samples,
            "comm_samples": comm, "first": first, "last": last}


def row(job, obj, kind, samples, phase="", user="alice", comm="app", cycles=None, instructions=None):
    return {"job": job, "step": "0" if job else None, "user": user, "comm": comm, "object": obj,
            "kind": kind, "build_id": None, "phase": phase, "samples": samples,
            "cpu_time_ns": None, "cycles": cycles, "instructions": instructions}
