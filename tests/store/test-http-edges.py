#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The store's HTTP edges (issue 33):

- a route that takes no body (every GET, POST /login) refuses one with 413
  before it arrives and closes the connection: a 200 MiB body sent to
  /healthz is not read (a few MiB at most, what the sockets buffer);
- an identity header sent twice is refused (400), not read as its first
  copy: Authorization, and a trusted proxy's user header;
- the SQLite database, its -wal and its -shm are its owner's only (0600)
  when the store is started by hand under a umask of 022, as under the
  unit's UMask=0077."""
import os
import socket
import stat
import time

import rawhttp
from lmktest import check, log
from storetest import ADMIN_TOKEN, BACKEND, START, Store, check_eq, make_batch, row

BIG = 200 << 20


def send_big(port, head):
    """Sends head, then up to BIG bytes of body while the store reads them:
    (status of the answer or None, bytes of body sent, seconds)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    chunk = b"x" * (1 << 20)
    sent, got, t0 = 0, b"", time.monotonic()
    try:
        sock.sendall(head)
        sock.setblocking(False)
        while sent < BIG and not got:
            try:
                sent += sock.send(chunk)
            except BlockingIOError:
                time.sleep(0.01)
            except (BrokenPipeError, ConnectionResetError):
                break
            try:
                got = sock.recv(65536)
            except BlockingIOError:
                pass
            except ConnectionResetError:
                break
        sock.setblocking(True)
        sock.settimeout(10)
        try:
            while True:
                more = sock.recv(65536)
                if not more:
                    break
                got += more
        except (ConnectionResetError, socket.timeout):
            pass
    finally:
        sock.close()
    status = int(got.split(b" ", 2)[1]) if got.startswith(b"HTTP/1.1 ") else None
    return status, sent, time.monotonic() - t0


def bodies(s):
    for what, method, path, extra in (
            ("GET /healthz", "GET", "/healthz", ""),
            ("GET /api/v1/jobs with a token", "GET", "/api/v1/jobs", f"Authorization: Bearer {ADMIN_TOKEN}\r\n"),
            ("HEAD /jobs with a token", "HEAD", "/jobs", f"Authorization: Bearer {ADMIN_TOKEN}\r\n"),
            ("POST /login", "POST", "/login?ticket=x", "")):
        head = (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Content-Length: {BIG}\r\n\r\n").encode()
        status, sent, took = send_big(s.port, head)
        log(f"{what} with a body of {BIG >> 20} MiB: {status}, {sent >> 20} MiB sent, {took:.2f} s")
        check(status == 413 and sent < 32 << 20,
              f"{what} with a body of {BIG >> 20} MiB: answered {status} after {sent >> 20} MiB")
    # chunked, of any size
    status, _, body = rawhttp.request(s.port, "GET", "/healthz", [("Transfer-Encoding", "chunked")],
                                      body=b"5\r\nhello\r\n0\r\n\r\n")
    check_eq(status, 413, f"a chunked body on GET /healthz: {body}")
    # no body, or an empty one, is fine; a POST that takes one still does
    for headers in ([], [("Content-Length", "0")]):
        status, _, body = rawhttp.request(s.port, "GET", "/healthz", headers)
        check_eq(status, 200, f"GET /healthz with {headers}: {body}")
    check_eq(s.ingest(make_batch(seq=1, rows=[row("7001", "/apps/x", "exe", 10)]))[0], 200, "a batch beside them")


def repeated(s):
    auth = ("Authorization", f"Bearer {ADMIN_TOKEN}")
    check_eq(rawhttp.request(s.port, "GET", "/api/v1/jobs", [auth])[0], 200, "one Authorization")
    for what, headers in (("twice the same", [auth, auth]),
                          ("a token, then MUNGE", [auth, ("Authorization", "MUNGE xyz")]),
                          ("in two spellings", [auth, ("authorization", "Bearer another-token-0123456789")])):
        status, _, body = rawhttp.request(s.port, "GET", "/api/v1/jobs", headers)
        check_eq(status, 400, f"Authorization {what}: {body}")


def proxy_user(s):
    hdr = "X-Remote-User"
    status, _, body = rawhttp.request(s.port, "GET", "/api/v1/jobs", [(hdr, "alice@EXAMPLE.ORG")])
    check_eq(status, 200, f"one {hdr}: {body}")
    for what, headers in (("from the client, then the proxy", [(hdr, "bob@EXAMPLE.ORG"), (hdr, "alice@EXAMPLE.ORG")]),
                          ("twice the same", [(hdr, "alice@EXAMPLE.ORG"), (hdr, "alice@EXAMPLE.ORG")]),
                          ("in two spellings", [(hdr, "alice@EXAMPLE.ORG"), (hdr.lower(), "bob@EXAMPLE.ORG")])):
        status, _, body = rawhttp.request(s.port, "GET", "/api/v1/jobs", headers)
        check_eq(status, 400, f"{hdr} {what}: {body}")
        check("sent 2 times" in body, f"the refusal of {hdr} {what} says why: {body}")


def modes(s):
    for suffix in ("", "-wal", "-shm"):
        path = s.db + suffix
        mode = stat.S_IMODE(os.stat(path).st_mode)
        check(mode & 0o077 == 0, f"{os.path.basename(path)} is {oct(mode)}: others may read the jobs")


def main():
    # what a shell gives a store started by hand
    os.umask(0o022)
    batch = make_batch(jobs=[{"job": "7002", "user": "alice@EXAMPLE.ORG", "account": "chem",
                              "first_seen": START, "last_seen": START + 60}],
                       rows=[row("7002", "/apps/a", "exe", 10, user="alice@EXAMPLE.ORG")])
    with Store(extra=["--user-header", "X-Remote-User", "--trusted-proxies", "127.0.0.1"]) as s:
        check_eq(s.ingest(batch)[0], 200, "ingest")
        bodies(s)
        repeated(s)
        proxy_user(s)
        if BACKEND == "sqlite":
            modes(s)
        else:
            log("no files of the store's own on PostgreSQL")
    log("PASS")


if __name__ == "__main__":
    main()
