#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A full database disk (issue 33, item 13), on a real one: the database
on a small tmpfs of the test's own (a private mount namespace, gone with
the test), filled up by a file beside it: SQLite's file, or with
LMK_TEST_BACKEND=postgresql a private PostgreSQL server's cluster
(tests/lib/pgserver.py), whose disk_full (SQLSTATE 53100) the store takes
as SQLite's SQLITE_FULL.

While the disk is full every push is answered 507 with Retry-After (a 5xx,
so lmkd keeps the batch and pushes it again), /healthz answers 503 saying
why, /metrics shows it, and the log says so once for the whole episode,
not once per push. Once the file is gone, the next push is stored without
anything done to the store, the log says writes resumed, and every batch
answered 200 before, during and after is in the database, which passes
PRAGMA integrity_check (on PostgreSQL, whose pages are checksummed by
the server itself, the rows add up)."""
import ctypes
import os
import re
import sqlite3
import subprocess
import urllib.parse

from lmktest import check, fail, log, skip
from storetest import BACKEND, START, Store, check_eq, make_batch, row, sql_read, workdir

CLONE_NEWNS = 0x00020000
# room for a PostgreSQL cluster (some 40 MB) with its WAL
TMPFS_SIZE = 128 << 20


def private_tmpfs(path):
    """A tmpfs at path, in a mount namespace of this process's own (and its
    children's): nobody else sees it, and it goes when they end."""
    if os.geteuid() != 0:
        skip("needs root: mounts a small tmpfs to fill it")
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNS) != 0:
        skip(f"cannot make a mount namespace: {os.strerror(ctypes.get_errno())}")
    for argv in (["mount", "--make-rprivate", "/"],
                 ["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE},mode=0777", "lmk-test-full", path]):
        p = subprocess.run(argv, capture_output=True, text=True)
        if p.returncode != 0:
            skip(f"{' '.join(argv)}: {p.stderr.strip()}")


def fill(path):
    """Writes path until the file system is full."""
    with open(path, "wb", buffering=0) as f:
        chunk = b"\0" * 65536
        try:
            while True:
                f.write(chunk)
        except OSError as e:
            check(e.errno == 28, f"filling {path}: {e}")
    log(f"filled: {os.path.getsize(path)} bytes")


def batch(seq):
    """A batch that needs room: rows of objects no batch had before."""
    return make_batch(node="cnfull", seq=seq, start=START + 60 * seq, jobs=[{"job": "8800", "user": "alice"}],
                      rows=[row("8800", f"/opt/full/{seq}/lib{k}.so", "lib", 3) for k in range(200)])


def metric(store, name):
    status, _, text = store.request("GET", "/metrics")
    check_eq(status, 200, "/metrics")
    m = re.search(r"^" + re.escape(name) + r" (\S+)$", text, re.M)
    return float(m.group(1)) if m else None


def postgresql_on(mnt):
    """A database on a private PostgreSQL server whose cluster is in mnt."""
    import pgserver
    try:
        pg = pgserver.Server(parent=mnt).start()
    except pgserver.Unavailable as e:
        skip(f"PostgreSQL: {e}")
    return f"postgresql://lmk@{urllib.parse.quote(pg.host, safe='')}:{pg.port}/{pgserver.DATABASE}"


def main():
    d = workdir()
    os.chmod(d, 0o711)  # PostgreSQL's user passes through to its cluster
    mnt = os.path.join(d, "disk")
    os.mkdir(mnt)
    private_tmpfs(mnt)
    store = Store(directory=d, db=postgresql_on(mnt) if BACKEND == "postgresql" else os.path.join(mnt, "lmk.db"))
    accepted = {}
    with store:
        seq = 0
        for _ in range(3):
            seq += 1
            status, _, body = store.ingest(batch(seq))
            check_eq(status, 200, f"push {seq} before the disk fills: {body}")
            accepted[seq] = body["status"]

        filler = os.path.join(mnt, "filler")
        fill(filler)
        # SQLite may still have room in its WAL; the disk runs out soon.
        refused = []
        for _ in range(200):
            seq += 1
            status, headers, body = store.ingest(batch(seq))
            if status == 200:
                accepted[seq] = body["status"]
                continue
            check_eq(status, 507, f"push {seq} on a full disk: {body}")
            check_eq(body["error"], "database disk full, try again later", "the 507's message")
            check_eq(headers.get("retry-after"), "60", "Retry-After of the 507")
            refused.append(seq)
            if len(refused) == 5:
                break
        check_eq(len(refused), 5, "pushes refused once the disk was full")
        log(f"accepted {len(accepted)} batches, then refused {refused}")

        status, _, body = store.request("GET", "/healthz")
        check_eq((status, body["status"]), (503, "database disk full"), f"/healthz on a full disk: {body}")
        check(body.get("disk_full_since", 0) > 0, f"/healthz says since when: {body}")
        check_eq(metric(store, "lmk_store_db_disk_full"), 1, "disk-full gauge")
        check_eq(metric(store, 'lmk_store_ingest_rejected_total{reason="disk-full"}'), 5, "refused, counted")
        check_eq(metric(store, "lmk_store_db_disk_full_episodes_total"), 1, "one episode")
        text = store.read_log()
        check_eq(len(re.findall(r"Database disk full", text)), 1, f"one log line for 5 refused pushes:\n{text}")
        check_eq(len(re.findall(r"ingest: 507", text)), 0, "no line per 507")

        # Room again: nothing is done to the store, the next push is stored.
        os.unlink(filler)
        for s in refused:
            status, _, body = store.ingest(batch(s))
            check_eq((status, body.get("status")), (200, "stored"), f"push {s} again once there is room: {body}")
            accepted[s] = body["status"]
        status, _, body = store.request("GET", "/healthz")
        check_eq((status, body["status"]), (200, "ok"), f"/healthz after: {body}")
        check_eq(metric(store, "lmk_store_db_disk_full"), 0, "disk-full gauge after")
        text = store.read_log()
        check_eq(len(re.findall(r"Database writes resumed after \d+ s of full disk; 5 batches were refused", text)),
                 1, f"one line when writes resumed:\n{text}")

        stored = sorted(s for s, how in accepted.items() if how == "stored")
        check_eq(stored, list(range(1, seq + 1)), "every batch stored once in the end")
        check_eq(store.get_ok("/api/v1/jobs/8800")["samples"], 200 * 3 * seq, "the job's samples")
        check_eq(store.stop(), 0, "exit code")

    check_eq([tuple(r) for r in sql_read(store.db, "SELECT count(*), sum(samples) FROM batches")],
             [(seq, 600 * seq)], "the batches' receipts")
    check_eq(sql_read(store.db, "SELECT count(*) FROM sample_packs"), [(seq,)], "one pack per batch")
    if BACKEND == "sqlite":
        con = sqlite3.connect(store.db)
        try:
            check_eq(con.execute("PRAGMA integrity_check").fetchall(), [("ok",)], "integrity_check")
        finally:
            con.close()


if __name__ == "__main__":
    main()
