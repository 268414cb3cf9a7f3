#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Two lmk-store processes on one PostgreSQL database (issue 14).

1. Both start at once (their migrations take turns under the advisory
   lock), and the same batches are pushed through both at the same time:
   each batch is stored exactly once (one answer says stored, the other
   duplicate), and the sums read through either store's API and with SQL
   are those of each batch counted once.
2. PostgreSQL is stopped at once (pg_ctl stop -m immediate: no shutdown
   checkpoint, the next start recovers from its WAL) while nodes push:
   pushes during the outage get 503 with Retry-After, never another error,
   /healthz says 503 and then 200 again once the server is back, and every
   batch that was acknowledged with 200 is stored afterwards, once, as is
   every batch the nodes pushed again after a 503. The store keeps pinging
   the systemd watchdog meanwhile, its STATUS saying why, since a restart
   would not bring the database back.
3. A store started while PostgreSQL is down waits for it (saying so in its
   log and to systemd, not listening meanwhile), then migrates a new
   database and serves; with --db-wait 1 it gives up after about a second
   with a clear error; a stop request ends the wait at once.

Skips (77) where PostgreSQL cannot start."""
import concurrent.futures
import os
import signal
import socket
import subprocess
import threading
import time

import pgserver
from lmktest import check, fail, log

os.environ["LMK_TEST_BACKEND"] = "postgresql"  # whatever the caller said: this one is about PostgreSQL
from storetest import (Store, check_eq, make_batch, new_database, pg_server, raw_rows, row, sql_read,  # noqa: E402
                       workdir)

# An acknowledged batch must survive an immediate stop: the test server's
# default (synchronous_commit off, for speed) may lose the last commits.
pgserver.SETTINGS["synchronous_commit"] = "on"

JOBS = ["9001", "9002", "9003"]
OBJECTS = [("/usr/bin/solver", "exe"), ("/usr/lib/libm.so.6", "lib"), ("/usr/lib/libmpi.so.40", "lib")]


def batch(node, seq, boot="boot-two"):
    """A batch whose rows touch jobs and objects that every other batch
    touches too, so that two writers meet on the same rows."""
    rows = [row(JOBS[(seq + i) % len(JOBS)], path, kind, samples=seq % 7 + i + 1)
            for i, (path, kind) in enumerate(OBJECTS)]
    return make_batch(node=node, seq=seq, boot_id=boot, rows=rows)


def batch_samples(b):
    return sum(r["samples"] for r in b["rows"])


def job_samples(batches):
    out = {j: 0 for j in JOBS}
    for b in batches:
        for r in b["rows"]:
            out[r["job"]] += r["samples"]
    return out


def stored_batches(db):
    return sorted((n, s) for n, s in sql_read(
        db, "SELECT n.name, b.seq FROM batches b JOIN nodes n ON n.id = b.node_id"))


def health(store):
    try:
        return store.request("GET", "/healthz", timeout=10)[0]
    except OSError as e:
        fail(f"/healthz on port {store.port}: {e}")


class Notifications:
    """What a store tells systemd (sd_notify), with a watchdog of 0.4 s:
    it pings every 0.2 s."""

    def __init__(self):
        d = workdir()
        self.path = os.path.join(d, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.sock.settimeout(0.5)
        self.messages = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def env(self):
        return {"NOTIFY_SOCKET": self.path, "WATCHDOG_USEC": "400000"}

    def run(self):
        while not self.done.is_set():
            try:
                self.messages.append(self.sock.recv(4096).decode())
            except socket.timeout:
                pass

    def since(self, n):
        return [line for m in self.messages[n:] for line in m.splitlines()]


def start_both(db, notify):
    a, b = Store(db=db, env=notify.env()), Store(db=db)
    with concurrent.futures.ThreadPoolExecutor(2) as ex:
        list(ex.map(lambda s: s.start(), (a, b)))
    migrated = sum("Migrated database" in s.read_log() for s in (a, b))
    check_eq(migrated, 1, "stores that migrated the new database (the other found it migrated)")
    return a, b


def test_same_batches_through_both(db, a, b):
    batches = [batch(f"cntwo{n}", seq) for n in range(4) for seq in range(1, 9)]
    answers = {}
    lock = threading.Lock()

    def push(store, bt):
        key = (bt["batch"]["node"], bt["batch"]["seq"])
        # a node would push again after a 503 (Retry-After)
        for _ in range(20):
            status, headers, body = store.ingest(bt)
            if status != 503:
                break
            time.sleep(0.2)
        with lock:
            answers.setdefault(key, []).append((status, body.get("duplicate") if isinstance(body, dict) else body))

    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        futures = [ex.submit(push, s, bt) for bt in batches for s in (a, b)]
        for f in futures:
            f.result()

    for key, got in sorted(answers.items()):
        if sorted(got, key=str) != [(200, False), (200, True)]:
            fail(f"batch {key} pushed through both stores at once: expected one 200 stored and one 200 "
                 f"duplicate, got {got}")
    check_eq(stored_batches(db), sorted((bt["batch"]["node"], bt["batch"]["seq"]) for bt in batches),
             "batches stored (psql)")
    want_total = sum(batch_samples(bt) for bt in batches)
    check_eq(sql_read(db, "SELECT count(*), sum(samples) FROM batches")[0], (len(batches), want_total),
             "count and samples of the batches (psql)")
    check_eq(sql_read(db, "SELECT sum(samples) FROM sample_packs")[0][0], want_total, "the packs' samples (psql)")
    check_eq(sum(r[6] for r in raw_rows(db)), want_total, "the raw rows' samples, unpacked (psql)")
    check_eq(sorted(sql_read(db, "SELECT n.name, p.seq, count(*) FROM sample_packs p JOIN nodes n ON n.id = p.node_id "
                                 "GROUP BY n.name, p.seq")),
             sorted((bt["batch"]["node"], bt["batch"]["seq"], len({r["job"] for r in bt["rows"]})) for bt in batches),
             "one pack per batch and job, once (psql)")
    want = job_samples(batches)
    for store in (a, b):
        for job, samples in want.items():
            check_eq(store.get_ok(f"/api/v1/jobs/{job}")["samples"], samples,
                     f"job {job}'s samples through the store on port {store.port}")
    log(f"{len(batches)} batches pushed through both stores at once: each stored once, {want_total} samples")
    return batches


class Load:
    """Nodes pushing new batches through both stores, as fast as they are
    answered, remembering each answer."""

    def __init__(self, stores, nodes=4):
        self.stores = stores
        self.nodes = nodes
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.acked = {}       # (node, seq) -> batch, answered 200
        self.refused = {}     # (node, seq) -> batch, answered 503 (to push again)
        self.statuses = {}    # status -> count
        self.bad = []         # answers other than 200 and 503, or 503 without Retry-After
        self.refused_body = None
        self.threads = [threading.Thread(target=self.run, args=(i,)) for i in range(nodes)]

    def run(self, i):
        node, seq = f"cnload{i}", 0
        while not self.stop.is_set():
            seq += 1
            bt = batch(node, seq, boot="boot-load")
            store = self.stores[seq % len(self.stores)]
            try:
                status, headers, body = store.ingest(bt)
            except OSError as e:
                status, headers, body = 0, {}, str(e)
            with self.lock:
                self.statuses[status] = self.statuses.get(status, 0) + 1
                if status == 200 and isinstance(body, dict) and body.get("duplicate") is False:
                    self.acked[(node, seq)] = bt
                elif status == 503 and headers.get("retry-after"):
                    self.refused[(node, seq)] = bt
                    self.refused_body = body
                else:
                    self.bad.append((node, seq, status, body))
            if status == 503:
                time.sleep(0.05)

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for t in self.threads:
            t.join()

    def count(self, status):
        with self.lock:
            return self.statuses.get(status, 0)


def news(stores):
    """What the stores logged besides answers and the routine wait for
    the server: the errors that tell why."""
    out = []
    for s in stores:
        out.append(f"--- the log of the store on port {s.port}, without its answers and retries:")
        out += [f"    {line}" for line in s.read_log().splitlines()
                if not line.startswith("lmk-store: POST ") and "not connected to PostgreSQL" not in line]
    return "\n".join(out)


def wait_until(cond, timeout, what):
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            fail(f"not within {timeout:g}s: {what}")
        time.sleep(0.1)


def test_outage_under_load(db, pg, stores, earlier, notify):
    with Load(stores) as load:
        wait_until(lambda: load.count(200) >= 20, 30, "20 batches stored before the outage")
        seen = len(notify.messages)
        # pg_ctl stop -m immediate: SIGQUIT to the postmaster
        pg.proc.send_signal(signal.SIGQUIT)
        pg.proc.wait(timeout=20)
        acked_before = load.count(200)
        wait_until(lambda: load.count(503) >= 10, 30, "pushes answered 503 while PostgreSQL is down")
        for s in stores:
            wait_until(lambda: health(s) == 503, 15, f"/healthz of the store on port {s.port} says 503")
        down_pushes = load.count(503)
        # Still alive, only its database is not: a restart by the
        # watchdog would not help.
        down = "STATUS=Database unreachable, reconnecting"
        wait_until(lambda: down in notify.since(seen), 10, f"{down} sent to systemd")
        at = len(notify.messages)
        wait_until(lambda: notify.since(at).count("WATCHDOG=1") >= 3, 10,
                   "the watchdog pinged while PostgreSQL is down")
        at = len(notify.messages)
        pg.resume()
        for s in stores:
            wait_until(lambda: health(s) == 200, 30,
                       f"/healthz of the store on port {s.port} says 200 again after the restart")
        wait_until(lambda: load.count(200) >= acked_before + 20, 30, "batches stored again after the restart")
        wait_until(lambda: "STATUS=Serving" in notify.since(at), 10, "STATUS=Serving after the restart")
    log(f"under load: {load.statuses} ({acked_before} stored before the stop, "
        f"{down_pushes} answered 503 while it was down)")
    if load.bad:
        fail(f"answers other than 200 or 503 with Retry-After: {load.bad[:5]}\n{news(stores)}")

    # the nodes push what was refused again, as their spools would
    pushed_again = 0
    for key, bt in sorted(load.refused.items()):
        if key in load.acked:
            continue
        status, _, body = stores[pushed_again % 2].ingest(bt)
        if status != 200:
            fail(f"batch {key} pushed again after the outage: {status} {body}\n{news(stores)}")
        pushed_again += 1

    stored = set(stored_batches(db))
    lost = sorted(set(load.acked) - stored)
    if lost:
        fail(f"{len(lost)} of {len(load.acked)} batches acknowledged with 200 are not stored: {lost[:10]}")
    everything = {**load.refused, **load.acked}
    want = sorted(set(everything) | {(bt["batch"]["node"], bt["batch"]["seq"]) for bt in earlier})
    check_eq(sorted(stored), want, "batches stored after the outage (psql)")
    all_batches = earlier + list(everything.values())
    check_eq(sql_read(db, "SELECT count(*), sum(samples) FROM batches")[0],
             (len(all_batches), sum(batch_samples(bt) for bt in all_batches)),
             "count and samples of the batches after the outage (psql): each stored once")
    for job, samples in job_samples(all_batches).items():
        check_eq(stores[0].get_ok(f"/api/v1/jobs/{job}")["samples"], samples, f"job {job}'s samples after the outage")
    log(f"all {len(load.acked)} acknowledged batches stored; {pushed_again} pushed again after a 503")
    # the database's own words in the log, a generic answer to the node
    check(any("Database error while storing a batch: " in s.read_log() for s in stores),
          "no store logged the database error of a batch it could not store")
    check_eq(load.refused_body, {"error": "database unavailable, try again"}, "the body of a 503 during the outage")


def test_idle_restart(pg, store):
    """A server restarted while the store is idle: its readers' connections
    are dead without its knowing, and the first query on each must still
    answer (run again on a new connection), not 503."""
    for _ in range(8):  # every reader connection has served a query
        check_eq(store.get(f"/api/v1/jobs/{JOBS[0]}")[0], 200, "a query before the restart")
    pg.restart()
    # a connection that tried while the server was down waits out its
    # backoff (a 503 with Retry-After meanwhile) until another gets through
    wait_until(lambda: health(store) == 200, 30, "/healthz says 200 after the restart")
    statuses = []
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        statuses = list(ex.map(lambda _: store.get(f"/api/v1/jobs/{JOBS[0]}")[0],
                               range(16)))
    check_eq(statuses, [200] * 16, f"queries right after a restart of an idle store's server\n{news([store])}")
    log("an idle store's queries right after its server restarted: 16 of 16 answered 200")


def test_start_while_down(pg, notify):
    db = new_database()  # made while the server is up, migrated once it is back
    pg.halt()
    try:
        # gives up: exit status 1 after --db-wait, with the reason
        quitter = Store(db=db, extra=["--db-wait", "1"]).launch()
        t0 = time.monotonic()
        try:
            rc = quitter.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            quitter.proc.kill()
            fail("lmk-store --db-wait 1 still waiting after 15 s with PostgreSQL down")
        took = time.monotonic() - t0
        check_eq(rc, 1, "exit status of lmk-store --db-wait 1 with PostgreSQL down")
        check("giving up (--db-wait 1)" in quitter.read_log(), f"the reason it gave up:\n{quitter.read_log()}")
        check(0.9 <= took <= 10, f"--db-wait 1 gave up after {took:.1f} s")

        # a stop request ends the wait: exit status 0, promptly
        stopped = Store(db=db).launch()
        wait_until(lambda: "waiting for it" in stopped.read_log(), 10, "the waiting store said so")
        t0 = time.monotonic()
        check_eq(stopped.stop(), 0, "exit status of a store stopped while waiting for the database")
        check(time.monotonic() - t0 < 5, "a store waiting for the database stopped within 5 s of SIGTERM")

        # waits as long as it takes, not listening meanwhile
        waiter = Store(db=db, env=notify.env())
        seen = len(notify.messages)
        waiter.launch()
        wait_until(lambda: "Database server unreachable, waiting for it" in waiter.read_log(), 10,
                   "the store logged that it waits for the database server")
        time.sleep(2.5)
        check(waiter.proc.poll() is None, f"the store exited while waiting:\n{waiter.read_log()}")
        check("Listening on" not in waiter.read_log(), "the store listened before its database was there")
        wait_until(lambda: "STATUS=Waiting for the database server" in notify.since(seen), 10,
                   "STATUS=Waiting for the database server sent to systemd")
        check(any(m.startswith("EXTEND_TIMEOUT_USEC=") for m in notify.since(seen)),
              "the store asked systemd for more start-up time while waiting")
    finally:
        pg.resume()
    waiter.wait_listening(30)
    check("Database server reachable after" in waiter.read_log(), "the store said when the database came")
    check("Migrated database" in waiter.read_log(), "the new database migrated once the server was back")
    status, _, body = waiter.ingest(batch("cnlate", 1, boot="boot-late"))
    check_eq(status, 200, f"a batch pushed to the store that waited: {body}")
    check_eq(sql_read(db, "SELECT count(*) FROM batches")[0][0], 1, "batches stored by the store that waited (psql)")
    check_eq(waiter.stop(), 0, "exit status of the store that waited")
    log("a store started with PostgreSQL down waited for it, then migrated and stored; --db-wait 1 gave up "
        "after %.1f s" % took)


def main():
    pg = pg_server()
    db = new_database()
    notify = Notifications()
    a, b = start_both(db, notify)
    try:
        earlier = test_same_batches_through_both(db, a, b)
        test_outage_under_load(db, pg, [a, b], earlier, notify)
        test_idle_restart(pg, a)
    finally:
        for s in (a, b):
            check_eq(s.stop(), 0, f"exit code of the store on port {s.port}")
    test_start_while_down(pg, notify)
    notify.done.set()


if __name__ == "__main__":
    main()
