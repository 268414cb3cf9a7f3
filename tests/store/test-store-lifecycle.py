#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmk-store's life: migrations on a fresh database and none on restart, a
database from the future refused, token file permissions and reload
(SIGHUP), the config file, sd_notify, SIGTERM finishing a request that
is still uploading, and SIGTERM amid pushes waiting for the writer, some of
their clients gone."""
import json
import os
import signal
import socket
import subprocess
import threading
import time

from lmktest import fail, log
from storetest import (ADMIN_TOKEN, NODE_TOKEN, Store, check_eq, is_postgresql, make_batch, row, sql_read, sql_write,
                       store_binary, workdir, write_tokens)


def schema_versions(db):
    return [tuple(r) for r in sql_read(db, "SELECT version, name FROM schema_version ORDER BY version")]


def test_migrations():
    d = workdir()
    store = Store(directory=d).start()
    if "Migrated database" not in store.read_log():
        fail("no migration logged on a fresh database")
    check_eq(store.ingest(make_batch(seq=1, rows=[row("1", "/bin/a", "exe", 3)]))[0], 200, "ingest")
    check_eq(store.stop(), 0, "exit code")
    first = schema_versions(store.db)
    if not first or first[0] != (1, "0001-initial"):
        fail(f"schema_version after the first start: {first}")
    # A stopped store leaves one file: the WAL was folded back.
    if not is_postgresql(store.db) and os.path.exists(store.db + "-wal") and os.path.getsize(store.db + "-wal") > 0:
        fail("WAL not checkpointed at shutdown")

    again = Store(directory=d, db=store.db)
    again.start()
    if "Migrated database" in again.read_log().split("Stopped.")[-1]:
        fail("migrations ran again on restart")
    check_eq(again.get_ok("/api/v1/jobs/1")["samples"], 3, "data kept over restart")
    check_eq(again.stop(), 0, "exit code")
    check_eq(schema_versions(again.db), first, "schema_version after restart")

    # A database that a newer lmk-store migrated further is not ours to touch.
    sql_write(again.db, [("INSERT INTO schema_version VALUES (?, '9999-future', 0)", (len(first) + 1,))])
    future = Store(directory=d, db=again.db)
    proc = subprocess.run([store_binary(), "--db", future.db, "--listen", "127.0.0.1:0",
                           "--token-file", future.token_file], capture_output=True, text=True, timeout=30)
    if proc.returncode == 0 or "schema" not in proc.stderr:
        fail(f"store started on a database from the future: {proc.returncode} {proc.stderr}")


def test_token_file_modes():
    d = workdir()
    tokens = os.path.join(d, "tokens")
    write_tokens(tokens, mode=0o644)
    cmd = [store_binary(), "--db", os.path.join(d, "db"), "--listen", "127.0.0.1:0", "--token-file", tokens]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if proc.returncode == 0 or f"chmod 600 {tokens}" not in proc.stderr:
        fail(f"world-readable token file accepted: {proc.returncode} {proc.stderr}")
    if os.path.exists(os.path.join(d, "db")):
        fail("database created although the token file was refused")

    write_tokens(tokens, lines=["admin short"], mode=0o600)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if proc.returncode == 0 or f"{tokens}:2:" not in proc.stderr:
        fail(f"bad token line not reported with its line: {proc.stderr}")

    # One policy with lmkd and lmk: group-readable is refused too, not warned about.
    write_tokens(tokens, mode=0o640)
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    if proc.returncode == 0 or "read by its group" not in proc.stderr or f"chmod 600 {tokens}" not in proc.stderr:
        fail(f"group-readable token file accepted: {proc.returncode} {proc.stderr}")


def test_reload_tokens():
    new_token = "rotated-node-token-5a5a5a5a"
    with Store() as store:
        check_eq(store.ingest(make_batch(seq=1), token=new_token)[0], 401, "unknown token")
        write_tokens(store.token_file, lines=[f"node {new_token}", f"admin {ADMIN_TOKEN}"])
        store.proc.send_signal(signal.SIGHUP)
        end = time.monotonic() + 10
        while "Reloaded tokens" not in store.read_log():
            if time.monotonic() > end:
                fail("tokens not reloaded after SIGHUP")
            time.sleep(0.05)
        check_eq(store.ingest(make_batch(seq=1), token=new_token)[0], 200, "rotated token")
        check_eq(store.ingest(make_batch(seq=2), token=NODE_TOKEN)[0], 401, "revoked token")

        # A broken file on reload keeps the tokens in force.
        write_tokens(store.token_file, lines=["nonsense"])
        store.proc.send_signal(signal.SIGHUP)
        end = time.monotonic() + 10
        while "Keeping the previous tokens" not in store.read_log():
            if time.monotonic() > end:
                fail("no message about a broken token file on reload")
            time.sleep(0.05)
        check_eq(store.ingest(make_batch(seq=3), token=new_token)[0], 200, "tokens after a failed reload")


def test_config_file():
    d = workdir()
    write_tokens(os.path.join(d, "tokens"))
    conf = os.path.join(d, "lmk-store.conf")
    with open(conf, "w") as f:
        f.write(f"[lmk-store]\ndb = {d}/from-config.db\nlisten = 127.0.0.1:0\n"
                f"token-file = {d}/tokens\nmax-body = 2K\nthreads = 2\n")
    store = Store(directory=d, tokens=False, extra=["--config", conf])
    # The command line's --db wins over the file's.
    store.start()
    big = make_batch(seq=1, rows=[row("1", "/" + "x" * 100, "exe", 1)] * 30)
    check_eq(store.ingest(big)[0], 413, "max-body from the config file")
    check_eq(store.stop(), 0, "exit code")
    if os.path.exists(f"{d}/from-config.db") or \
            (not is_postgresql(store.db) and not os.path.exists(store.db)) or not schema_versions(store.db):
        fail("--db on the command line did not win over the config file")

    with open(conf, "w") as f:
        f.write("[lmk-store]\nthreads = 2\nthread = 3\n")
    proc = subprocess.run([store_binary(), "--config", conf], capture_output=True, text=True, timeout=30)
    if proc.returncode == 0 or f"{conf}:3:" not in proc.stderr:
        fail(f"unknown setting not reported with its line: {proc.stderr}")
    proc = subprocess.run([store_binary(), "--db", "x"], capture_output=True, text=True, timeout=30)
    if proc.returncode == 0 or "required" not in proc.stderr:
        fail(f"missing settings not reported: {proc.stderr}")


def test_sd_notify():
    d = workdir()
    path = os.path.join(d, "notify")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(path)
    sock.settimeout(20)
    store = Store(directory=d)
    os.environ["NOTIFY_SOCKET"] = path
    os.environ["WATCHDOG_USEC"] = "400000"
    try:
        cmd = [store_binary(), "--db", store.db, "--listen", "127.0.0.1:0", "--token-file", store.token_file]
        env = dict(os.environ)
        proc = subprocess.Popen(cmd, env=env, stderr=subprocess.DEVNULL)
        messages = []
        end = time.monotonic() + 20
        while time.monotonic() < end and not any("WATCHDOG=1" in m for m in messages):
            messages.append(sock.recv(4096).decode())
        if not any("READY=1" in m for m in messages):
            fail(f"no READY=1 from lmk-store: {messages}")
        proc.send_signal(signal.SIGTERM)
        while not any("STOPPING=1" in m for m in messages):
            messages.append(sock.recv(4096).decode())
        check_eq(proc.wait(20), 0, "exit code")
    finally:
        del os.environ["NOTIFY_SOCKET"]
        del os.environ["WATCHDOG_USEC"]
        sock.close()


def test_graceful_stop():
    store = Store().start()
    body = json.dumps(make_batch(node="cn900", seq=1, rows=[row("9", "/bin/slow", "exe", 11)])).encode()
    sock = socket.create_connection(("127.0.0.1", store.port), timeout=30)
    sock.sendall((f"POST /api/v1/ingest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {NODE_TOKEN}\r\n"
                  f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode())
    sock.sendall(body[:50])
    time.sleep(0.2)
    store.proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    if store.proc.poll() is not None:
        fail("lmk-store exited with a request still uploading")
    # No new connections once stopping ...
    try:
        socket.create_connection(("127.0.0.1", store.port), timeout=2).close()
        fail("lmk-store accepted a connection after SIGTERM")
    except OSError:
        pass
    # ... but the one in flight is finished.
    sock.sendall(body[50:])
    answer = sock.recv(4096).decode()
    sock.close()
    if not answer.startswith("HTTP/1.1 200"):
        fail(f"request in flight at SIGTERM: {answer[:300]!r}")
    check_eq(store.proc.wait(20), 0, "exit code after SIGTERM")
    check_eq(store.sql("SELECT samples FROM jobs WHERE job = '9'"), [(11,)], "batch stored")


def send_push(sock, body):
    """A whole push, in one piece, on sock."""
    sock.sendall((f"POST /api/v1/ingest HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {NODE_TOKEN}\r\n"
                  f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body)


def push_raw(port, body):
    """One push on a connection of its own; the status, or None."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        send_push(sock, body)
        answer = sock.recv(4096).decode()
    return int(answer.split()[1]) if answer.startswith("HTTP/1.1 ") else None


def test_stop_under_load():
    """SIGTERM while batches wait for the writer: each is stored and
    answered, or refused, never answered 200 and lost; clients that hang up
    while theirs waits leave nothing behind, and the store stops cleanly."""
    store = Store().start()
    answered = {}
    stopped = {}    # node: what made its pusher stop, for a failure's message
    lock = threading.Lock()
    stop = threading.Event()
    big = [row(str(j), f"/lib/l{k}.so", "lib", 1 + k) for j in range(20) for k in range(25)]

    def pusher(node):
        """Pushes as lmkd does: the next batch after a 200, the same one
        again after a 503 (the hang-ups below fill the address's
        connections, and the store then turns new ones away), and stops at
        anything else, the store's SIGTERM among it."""
        seq = 1
        while not stop.is_set():
            body = json.dumps(make_batch(node=node, seq=seq, rows=big)).encode()
            try:
                status = push_raw(store.port, body)
            except OSError as e:
                stopped[node] = f"batch {seq}: {e}"
                return
            with lock:
                answered[(node, seq)] = status
            if status == 503:
                time.sleep(0.05)
                continue
            if status != 200:
                stopped[node] = f"batch {seq}: HTTP {status}"
                return
            seq += 1
        stopped[node] = "stopped by the test"

    def hang_up(node):
        """Sends whole batches and closes without reading the answer."""
        for seq in range(1, 10000):
            if stop.is_set():
                return
            body = json.dumps(make_batch(node=node, seq=seq, rows=big)).encode()
            try:
                with socket.create_connection(("127.0.0.1", store.port), timeout=30) as sock:
                    send_push(sock, body)
            except OSError:
                return

    threads = [threading.Thread(target=pusher, args=(f"cn{i:03d}",)) for i in range(12)]
    threads += [threading.Thread(target=hang_up, args=(f"cx{i:03d}",)) for i in range(4)]
    for t in threads:
        t.start()
    # SIGTERM once the writer is busy: some batches stored, more waiting
    end = time.monotonic() + 30
    while time.monotonic() < end:
        with lock:
            if sum(v == 200 for v in answered.values()) >= 8:
                break
        time.sleep(0.05)
    store.proc.send_signal(signal.SIGTERM)
    rc = store.proc.wait(60)
    stop.set()
    for t in threads:
        t.join(60)
    check_eq(rc, 0, "exit code after SIGTERM under load")
    ok = sorted(k for k, v in answered.items() if v == 200)
    if len(ok) < 8:
        fail(f"only {len(ok)} pushes answered 200 in 30 s before SIGTERM; the pushers stopped at {stopped}\n"
             + store.read_log()[-2000:])
    stored = {(n, s) for n, s in store.sql("SELECT n.name, b.seq FROM batches b JOIN nodes n ON n.id = b.node_id")}
    lost = [k for k in ok if k not in stored]
    if lost:
        fail(f"{len(lost)} batches answered 200 but not stored, e.g. {lost[:3]}")
    reasons = {}
    for why in stopped.values():
        key = why.split(": ", 1)[-1]
        reasons[key] = reasons.get(key, 0) + 1
    log(f"{len(ok)} pushes answered 200 and stored, {len(stored)} stored in all; the pushers stopped at {reasons}")


def main():
    for t in (test_migrations, test_token_file_modes, test_reload_tokens, test_config_file, test_sd_notify,
              test_graceful_stop, test_stop_under_load):
        log(f"== {t.__name__}")
        t()


if __name__ == "__main__":
    main()
