#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmkd's HTTP client (daemon/http-post.c) against real servers started
here: what it sends, the status and the start of the body it keeps from
Content-Length, chunked and close-delimited answers, and how it fails:
refused, silent and trickling servers (a deadline, not a stall), garbage,
an endless header block; https:// with a CA made here, trusted through the
CA file only, and a certificate for another name refused.

    test-http-post.py CLIENT   (tests/unit/http-post-client.c)
"""
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
import time

from lmktest import check, fail, log, skip, tmpdir

CLIENT = sys.argv[1]

JSON_409 = b'{"error":"batch 7 of spool abc is stored already with other content"}'
LONG = bytes(ord("a") + i % 26 for i in range(2000))
CANNED = {
    "/ok": b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: text/plain\r\n\r\nok",
    "/409": b"HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
            % (len(JSON_409), JSON_409),
    "/413": b"HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\nbatch over 64 MiB",
    "/long": b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(LONG), LONG),
    # chunks with an extension, a trailer, and bytes after the end that are not the answer's
    "/chunked": b"HTTP/1.1 500 Internal Server Error\r\nTransfer-Encoding: gzip, chunked\r\n\r\n"
                b"5;ext=1\r\nstore\r\n1\r\n \r\n9\r\nis broken\r\n0\r\nX-Trailer: 1\r\n\r\nJUNK",
    "/continue": b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 4\r\n\r\ndone",
    "/no-reason": b"HTTP/1.0 503\r\n\r\nbusy",
    "/garbage": b"SSH-2.0-OpenSSH_9.2p1\r\n",
    "/bad-header": b"HTTP/1.1 200 OK\r\nthis is no header\r\n\r\n",
    "/bad-length": b"HTTP/1.1 200 OK\r\nContent-Length: 12x\r\n\r\n",
    "/bad-chunk": b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    "/short": b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this",
    "/long-line": b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n",
    "/long-head": b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-H%d: %s\r\n" % (i, b"b" * 4000) for i in range(10)) + b"\r\n",
    "/empty": b"",
}


class Server:
    """Answers each request by its path: CANNED, or a behaviour."""

    def __init__(self, family=socket.AF_INET, host="127.0.0.1", context=None):
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((host, 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.context = context
        self.requests = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            conn, _ = self.sock.accept()
            threading.Thread(target=self.handle, args=(conn,), daemon=True).start()

    def handle(self, conn):
        try:
            if self.context:
                conn = self.context.wrap_socket(conn, server_side=True)
            data = b""
            while b"\r\n\r\n" not in data:
                more = conn.recv(65536)
                if not more:
                    return
                data += more
            head, body = data.split(b"\r\n\r\n", 1)
            lines = head.decode().split("\r\n")
            path = lines[0].split(" ")[1]
            headers = {}
            for line in lines[1:]:
                name, value = line.split(":", 1)
                headers[name.strip().lower()] = value.strip()
            if path in ("/early-413", "/expect-413"):
                # refuses the body by its Content-Length, as a server that
                # limits sizes does: at once (it heeds Expect), or once the
                # client is stuck sending (it does not)
                if path == "/early-413":
                    time.sleep(1.5)
                conn.sendall(b"HTTP/1.1 413 Payload Too Large\r\nContent-Length: 8\r\nConnection: close\r\n\r\ntoo big!")
                conn.shutdown(socket.SHUT_WR)
                n = len(body)
                while more := conn.recv(1 << 20):
                    n += len(more)
                self.requests.append((lines[0], headers, n))
                return
            if path == "/expect":
                check(headers.get("expect") == "100-continue", f"no Expect: 100-continue for a big body: {headers}")
                conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            while len(body) < int(headers.get("content-length", "0")):
                more = conn.recv(65536)
                if not more:
                    break
                body += more
            self.requests.append((lines[0], headers, body))
            if path == "/silent":
                while conn.recv(65536):
                    pass
            elif path == "/trickle":
                for b in b"HTTP/1.1 200 OK\r\nContent-Length: 10000\r\n\r\n" + b"x" * 10000:
                    conn.sendall(bytes([b]))
                    time.sleep(0.05)
            elif path == "/expect":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%d" % (len(str(len(body))), len(body)))
            else:
                conn.sendall(CANNED[path])
        except (OSError, ssl.SSLError, ValueError, IndexError):
            pass
        finally:
            conn.close()


def post(url, *args, body="hello"):
    t0 = time.monotonic()
    out = subprocess.run([CLIENT, url, body, *args], capture_output=True, text=True, timeout=120)
    elapsed = time.monotonic() - t0
    check(out.returncode == 0, f"{url}: client exited {out.returncode}: {out.stderr}")
    r, _, answer = out.stdout.partition("\n")
    return int(r), answer[:-1] if answer.endswith("\n") else answer, elapsed


def expect(url, status, body, *args):
    r, answer, _ = post(url, *args)
    check(r == status and answer == body, f"{url}: expected {status} \"{body}\", got {r} \"{answer}\"")


def expect_error(url, words, *args, body="hello"):
    r, answer, elapsed = post(url, *args, body=body)
    check(r < 0, f"{url}: expected an error, got {r} \"{answer}\"")
    for w in words:
        check(w in answer, f"{url}: the error \"{answer}\" lacks \"{w}\"")
    log(f"{url}: {answer} ({elapsed:.1f} s)")
    return elapsed


def plain():
    s = Server()
    base = f"http://127.0.0.1:{s.port}"
    expect(base + "/ok", 200, "ok", "--header", "Authorization: Bearer t0k3n", "--header", "Lmk-Spool: batches=0 bytes=0")
    line, headers, body = s.requests[-1]
    check(line == "POST /ok HTTP/1.1", f"request line {line}")
    check(headers.get("host") == f"127.0.0.1:{s.port}", f"Host {headers.get('host')}")
    check(headers.get("content-length") == "5" and body == b"hello", f"body {headers} {body}")
    check(headers.get("connection") == "close", "no Connection: close")
    check(headers.get("user-agent", "").startswith("lmkd/"), f"User-Agent {headers.get('user-agent')}")
    check(headers.get("authorization") == "Bearer t0k3n" and headers.get("lmk-spool") == "batches=0 bytes=0",
          f"extra headers {headers}")
    expect(base + "/409", 409, JSON_409.decode())
    expect(base + "/413", 413, "batch over 64 MiB")
    expect(base + "/long", 200, LONG[:511].decode())
    expect(base + "/chunked", 500, "store is broken")
    expect(base + "/continue", 201, "done")
    expect(base + "/no-reason", 503, "busy")
    # a big body asks first: sent after 100 Continue, not sent after a refusal,
    # and a refusal that comes while it is being sent is read
    expect(base + "/expect", 200, str(2 << 20), "--body-size", str(2 << 20))
    check(s.requests[-1][2] == b"x" * (2 << 20), "the body after 100 Continue did not arrive")
    for path, sent in (("/expect-413", lambda n: n == 0), ("/early-413", lambda n: 0 < n < 64 << 20)):
        before = len(s.requests)
        r, answer, _ = post(base + path, "--body-size", str(64 << 20))
        check(r == 413 and answer == "too big!", f"{path}: got {r} \"{answer}\"")
        for _ in range(100):  # the server counts what came until the client closed
            if len(s.requests) > before:
                break
            time.sleep(0.1)
        check(len(s.requests) > before and sent(s.requests[-1][2]),
              f"{path}: the client sent {s.requests[-1][2]} bytes of the body the server refused")

    expect_error(base + "/garbage", ["Weird server reply", f"127.0.0.1 port {s.port}", "HTTP/"])
    expect_error(base + "/bad-header", ["Weird server reply", "Name: value"])
    expect_error(base + "/bad-length", ["Weird server reply", "Content-Length"])
    expect_error(base + "/bad-chunk", ["Weird server reply", "chunk size"])
    expect_error(base + "/short", ["Weird server reply", "before the end of the body"])
    expect_error(base + "/long-line", ["Weird server reply", "longer than 8 KiB"])
    expect_error(base + "/long-head", ["Weird server reply", "longer than 32 KiB"])
    expect_error(base + "/empty", ["Empty reply from server"])

    # the deadline holds for a server that says nothing and one that trickles
    e = expect_error(base + "/silent", ["Timeout was reached", "did not answer"], "--timeout-ms", "1000")
    check(0.9 < e < 5, f"a silent server held the client {e:.1f} s for a 1 s deadline")
    e = expect_error(base + "/trickle", ["Timeout was reached", "did not complete"], "--timeout-ms", "1500")
    check(1.4 < e < 5, f"a trickling server held the client {e:.1f} s for a 1.5 s deadline")

    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    expect_error(f"http://127.0.0.1:{port}/", ["Couldn't connect to server", f"127.0.0.1 port {port}", "refused"])
    expect_error("ftp://127.0.0.1/", ["Unsupported protocol"])
    expect_error("http://127.0.0.1:99999/", ["port"])


def ipv6():
    try:
        s = Server(socket.AF_INET6, "::1")
    except OSError as e:
        log(f"no IPv6 on loopback ({e}): [::1] not tried")
        return
    expect(f"http://[::1]:{s.port}/ok", 200, "ok")
    check(s.requests[-1][1].get("host") == f"[::1]:{s.port}", f"Host {s.requests[-1][1].get('host')}")


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_cert(d, name, sans):
    with open(f"{d}/{name}.ext", "w") as f:
        f.write(f"subjectAltName={sans}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n")
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", f"{d}/{name}.key",
            "-out", f"{d}/{name}.csr", "-subj", f"/CN={name}")
    openssl("x509", "-req", "-in", f"{d}/{name}.csr", "-CA", f"{d}/ca.pem", "-CAkey", f"{d}/ca.key", "-CAcreateserial",
            "-days", "2", "-out", f"{d}/{name}.pem", "-extfile", f"{d}/{name}.ext")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(f"{d}/{name}.pem", f"{d}/{name}.key")
    return ctx


def https():
    if not shutil.which("openssl"):
        skip("no openssl command to make the test CA with (Debian package openssl)")
    d = tmpdir("lmk-http-post-")
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", f"{d}/ca.key", "-out", f"{d}/ca.pem", "-days", "2", "-subj", "/CN=lmk test CA",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")
    good = Server(context=make_cert(d, "localhost", "DNS:localhost,IP:127.0.0.1"))
    other = Server(context=make_cert(d, "other.example", "DNS:other.example"))
    ca = ["--ca-file", f"{d}/ca.pem"]

    # "localhost" may name ::1 first, where nothing listens: the next address is tried
    expect(f"https://localhost:{good.port}/409", 409, JSON_409.decode(), *ca)
    check(good.requests[-1][2] == b"hello", "the body did not arrive over TLS")
    expect(f"https://127.0.0.1:{good.port}/chunked", 500, "store is broken", *ca)
    expect(f"https://localhost:{good.port}/long", 200, LONG[:511].decode(), *ca)
    expect(f"https://localhost:{good.port}/expect", 200, str(2 << 20), *ca, "--body-size", str(2 << 20))
    r, answer, _ = post(f"https://localhost:{good.port}/early-413", *ca, "--body-size", str(64 << 20))
    check(r == 413 and answer == "too big!", f"413 while sending over TLS: got {r} \"{answer}\"")
    e = expect_error(f"https://localhost:{good.port}/silent", ["Timeout was reached"], *ca, "--timeout-ms", "1000")
    check(e < 5, f"a silent TLS server held the client {e:.1f} s")

    expect_error(f"https://localhost:{good.port}/ok", ["SSL certificate problem", "NOT trusted"])
    expect_error(f"https://127.0.0.1:{other.port}/ok", ["SSL certificate problem", "does not match"], *ca)
    expect_error(f"https://localhost:{good.port}/ok", ["CA file", f"{d}/missing.pem"], "--ca-file", f"{d}/missing.pem")
    with open(f"{d}/empty.pem", "w") as f:
        f.write("not a certificate\n")
    expect_error(f"https://localhost:{good.port}/ok", ["CA file", "no PEM certificate"], "--ca-file", f"{d}/empty.pem")
    shutil.rmtree(d)


def main():
    if not os.access(CLIENT, os.X_OK):
        fail(f"no client {CLIENT}")
    plain()
    ipv6()
    https()
    log("ok")


main()
