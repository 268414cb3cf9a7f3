#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Slow clients cannot lock others out (docs/lmk-store.md, "Limits").

200 sockets from 127.0.0.1 trickle request headers, a byte every 2.5 s, and
reconnect when cut, against a per-address limit of 64: a client on the same
address that sends its requests promptly keeps getting right answers fast,
every trickling socket is closed within the header deadline (with 408 if it
timed out, 503 if it made room for a newer one), a body trickled below the
minimum rate is cut with 408 while one above it is stored, and an idle
keep-alive connection is left alone until it starts a slow request. The
deadlines are shortened by options so that this takes seconds."""
import json
import select
import socket
import threading
import time

from lmktest import fail, log
from storetest import ADMIN_TOKEN, NODE_TOKEN, Store, check_eq, make_batch, row

HEADER_TIMEOUT = 2
BODY_TIMEOUT = 1
BODY_MIN_RATE = 1000
PER_IP = 64
# Deadlines are checked four times a second; the rest is scheduling (more
# under sanitizers).
SLACK = 1.5
SOCKETS = 200
TRICKLE_INTERVAL = 2.5  # a little over the deadline, so that some reach it before the next wave
ATTACK_SECONDS = 10
ANSWER_BOUND = 2.0

OPTIONS = ["--header-timeout", str(HEADER_TIMEOUT), "--body-timeout", str(BODY_TIMEOUT),
           "--body-min-rate", str(BODY_MIN_RATE), "--max-connections-per-ip", str(PER_IP)]

TRICKLED = (b"GET /api/v1/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 1000)


def connect(store):
    return socket.create_connection(("127.0.0.1", store.port), timeout=5)


def read_answer(sock, timeout):
    """What came back before the connection closed: (status or None, bytes)."""
    data = b""
    sock.settimeout(timeout)
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except (ConnectionResetError, socket.timeout):
        pass
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else None
    return status, data


class Trickler:
    """SOCKETS connections sending one byte each every TRICKLE_INTERVAL; a
    cut one is replaced on the next round, as an attacker would."""

    def __init__(self, store):
        self.store = store
        self.stop = threading.Event()
        self.conns = {}    # socket -> [opened at, bytes sent]
        self.closed = []   # (lifetime, bytes sent, what came back)
        self.thread = threading.Thread(target=self.run)

    def open_one(self):
        try:
            s = connect(self.store)
        except OSError as e:
            self.closed.append((0.0, 0, repr(e).encode()))
            return
        s.setblocking(False)
        self.conns[s] = [time.monotonic(), 0]

    def reap(self, s, data):
        opened, sent = self.conns.pop(s)
        self.closed.append((time.monotonic() - opened, sent, data))
        s.close()

    def run(self):
        while not self.stop.is_set():
            while len(self.conns) < SOCKETS:
                self.open_one()
            for s, st in list(self.conns.items()):
                try:
                    s.send(TRICKLED[st[1]:st[1] + 1])
                    st[1] += 1
                except OSError as e:
                    self.reap(s, repr(e).encode())
            end = time.monotonic() + TRICKLE_INTERVAL
            while not self.stop.is_set() and time.monotonic() < end:
                ready, _, _ = select.select(list(self.conns), [], [], 0.05)
                for s in ready:
                    try:
                        data = s.recv(65536)
                    except OSError as e:
                        data = repr(e).encode()
                    # An answer and the close may come apart: wait for the close.
                    if data.startswith(b"HTTP/"):
                        s.setblocking(True)
                        _, rest = read_answer(s, 2)
                        data += rest
                    self.reap(s, data)

    def finish(self):
        self.stop.set()
        self.thread.join()
        now = time.monotonic()
        still = [now - opened for opened, _ in self.conns.values()]
        for s in list(self.conns):
            s.close()
        return still


def timed(what, fn):
    t0 = time.monotonic()
    status, _, body = fn()
    dt = time.monotonic() - t0
    if dt > ANSWER_BOUND:
        fail(f"{what} took {dt:.2f}s with {SOCKETS} slow sockets open from the same address")
    return status, body, dt


def test_slow_headers(store):
    t = Trickler(store)
    t.thread.start()
    time.sleep(1)
    latencies = []
    seq = 0
    try:
        end = time.monotonic() + ATTACK_SECONDS
        while time.monotonic() < end:
            status, body, dt = timed("GET /healthz", lambda: store.request("GET", "/healthz"))
            check_eq((status, body["status"]), (200, "ok"), "healthz during the attack")
            latencies.append(dt)
            status, body, dt = timed("ingest", lambda: store.ingest(
                make_batch(node="cn700", seq=seq, rows=[row("700", "/bin/ok", "exe", 3)])))
            check_eq((status, body["status"]), (200, "stored"), f"ingest {seq} during the attack")
            latencies.append(dt)
            seq += 1
            status, body, dt = timed("GET /api/v1/jobs/700", lambda: store.get("/api/v1/jobs/700"))
            check_eq((status, body.get("samples") if isinstance(body, dict) else body), (200, 3 * seq),
                     f"query during the attack: {body}")
            latencies.append(dt)
            time.sleep(0.2)
    finally:
        still = t.finish()

    log(f"{len(latencies)} answers to the good client, slowest {max(latencies) * 1000:.0f} ms, "
        f"mean {sum(latencies) / len(latencies) * 1000:.1f} ms; {len(t.closed)} slow sockets cut")
    check_eq(store.get_ok("/api/v1/jobs/700")["samples"], 3 * seq, "every batch of the good client stored")

    # Every slow socket went within the header deadline: at the deadline
    # with 408, or earlier to make room for a new connection, with 503 if it
    # had begun its request (a socket cut before its first byte arrived gets
    # no answer: there is no request to answer).
    statuses = {}
    for lifetime, sent, data in t.closed:
        if lifetime > HEADER_TIMEOUT + SLACK:
            fail(f"a socket trickling headers was closed only after {lifetime:.1f}s")
        code = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else None
        if code not in (408, 503, None):
            fail(f"a socket that never finished its headers got {data[:80]!r}")
        if code is None and lifetime >= HEADER_TIMEOUT:
            fail(f"a socket that sent {sent} bytes was closed after {lifetime:.1f}s without an answer")
        if code is not None and not data.rstrip().endswith(b"}"):
            fail(f"incomplete answer to a slow socket: {data!r}")
        statuses[code] = statuses.get(code, 0) + 1
    if max(still, default=0) > HEADER_TIMEOUT + SLACK:
        fail(f"a socket trickling headers has been open for {max(still):.1f}s")
    log(f"answers to the slow sockets: {statuses}")
    if statuses.get(408, 0) < PER_IP:
        fail(f"only {statuses.get(408, 0)} slow sockets were answered 408: {statuses}")
    if statuses.get(503, 0) < 1:
        fail(f"no slow socket made room for a new connection at the per-address limit: {statuses}")


def post_slowly(store, body, chunk, interval, headers=None):
    """Sends a POST whose body arrives chunk bytes every interval seconds;
    returns (status, seconds from the headers to the answer, answer)."""
    s = connect(store)
    h = {"Host": "127.0.0.1", "Authorization": f"Bearer {NODE_TOKEN}", "Content-Type": "application/json",
         "Content-Length": str(len(body)), "Connection": "close"}
    h.update(headers or {})
    s.sendall(("POST /api/v1/ingest HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in h.items()) +
               "\r\n").encode())
    t0 = time.monotonic()
    try:
        for i in range(0, len(body), chunk):
            if select.select([s], [], [], 0)[0]:
                break  # answered (or cut) before the body was in
            s.sendall(body[i:i + chunk])
            if i + chunk < len(body):
                time.sleep(interval)
        status, data = read_answer(s, 10)
    except (BrokenPipeError, ConnectionResetError):
        status, data = None, b""
    finally:
        s.close()
    return status, time.monotonic() - t0, data


def test_slow_body(store):
    # 50 bytes every 0.5 s is 100 bytes/s, a tenth of the minimum: cut once
    # the grace time and the little that came are used up.
    body = json.dumps(make_batch(node="cn701", seq=1, rows=[row("701", "/bin/slow", "exe", 1)])).encode()
    body += b" " * (20000 - len(body))
    status, dt, data = post_slowly(store, body, 50, 0.5)
    check_eq(status, 408, f"body at 100 bytes/s: {data[:200]!r}")
    if dt > BODY_TIMEOUT + 1 + SLACK:
        fail(f"body at 100 bytes/s cut only after {dt:.1f}s")
    if b"bytes/s" not in data:
        fail(f"408 does not say why: {data!r}")
    log(f"body at 100 bytes/s: 408 after {dt:.2f}s")
    check_eq(store.get("/api/v1/jobs/701")[0], 404, "nothing stored of the cut body")

    # 400 bytes every 0.2 s is 2,000 bytes/s: slower than the grace time
    # allows for the whole body, but above the rate, so it is stored.
    rows = [row("702", f"/bin/app{i}", "exe", 1) for i in range(40)]
    body = json.dumps(make_batch(node="cn702", seq=1, rows=rows)).encode()
    status, dt, data = post_slowly(store, body, 400, 0.2)
    check_eq(status, 200, f"body at 2,000 bytes/s ({len(body)} bytes): {data[-300:]!r}")
    if dt < BODY_TIMEOUT:
        fail(f"the body took only {dt:.1f}s, the test proves nothing")
    check_eq(store.get_ok("/api/v1/jobs/702")["samples"], 40, "batch sent slowly but above the rate")
    log(f"body of {len(body)} bytes at 2,000 bytes/s: stored after {dt:.2f}s")


def test_keepalive(store):
    """An idle keep-alive connection is governed by --connection-timeout, not
    the header deadline; the header deadline starts with its next request."""
    s = connect(store)
    req = f"GET /api/v1/jobs/700 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {ADMIN_TOKEN}\r\n\r\n"

    def ask():
        s.sendall(req.encode())
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(65536)
        head, _, rest = data.partition(b"\r\n\r\n")
        length = int([line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")][0])
        while len(rest) < length:
            rest += s.recv(65536)
        return int(head.split(b" ")[1])

    check_eq(ask(), 200, "first request on a keep-alive connection")
    time.sleep(HEADER_TIMEOUT + 1)
    check_eq(ask(), 200, "request after idling longer than the header deadline")

    t0 = time.monotonic()
    for c in req[:-4].encode():
        try:
            s.send(bytes([c]))
        except OSError:
            break
        if select.select([s], [], [], 0.3)[0]:
            break
        if time.monotonic() - t0 > HEADER_TIMEOUT + SLACK + 1:
            break
    status, data = read_answer(s, 5)
    dt = time.monotonic() - t0
    s.close()
    check_eq(status, 408, f"a request trickled on a keep-alive connection: {data!r}")
    if dt > HEADER_TIMEOUT + SLACK:
        fail(f"a request trickled on a keep-alive connection was cut only after {dt:.1f}s")
    log(f"request trickled on a keep-alive connection: 408 after {dt:.2f}s")


def test_metrics(store):
    status, _, text = store.request("GET", "/metrics")
    check_eq(status, 200, "metrics")
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            k, v = line.rsplit(" ", 1)
            values[k] = float(v)
    for key in ('lmk_store_slow_requests_closed_total{phase="headers"}',
                'lmk_store_slow_requests_closed_total{phase="body"}',
                "lmk_store_connections_evicted_total",
                'lmk_store_http_requests_total{code="408"}',
                'lmk_store_http_requests_total{code="503"}'):
        if values.get(key, 0) < 1:
            fail(f"{key} is {values.get(key)}")
    log("slow connections in /metrics: " + ", ".join(
        f"{k}={v:.0f}" for k, v in values.items() if "slow" in k or "evicted" in k))


def main():
    with Store(extra=OPTIONS) as store:
        for t in (test_slow_headers, test_slow_body, test_keepalive, test_metrics):
            log(f"== {t.__name__}")
            t(store)
        check_eq(store.stop(), 0, "exit code after SIGTERM")


if __name__ == "__main__":
    main()
