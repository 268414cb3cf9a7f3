# SPDX-License-Identifier: GPL-2.0-or-later
"""HTTP/1.1 as the tests of identities need it and storetest.Store.request()
does not give it: headers sent as a list (a name may come twice), every
answer header kept (a reply sets two cookies), and a jar of cookies with
their SameSite attribute, to send what a browser sends for a navigation of
its own or one another site started."""
import socket

from storetest import fail


def request(port, method, path, headers=(), body=b"", timeout=30):
    """(status, [(lower-case name, value)], body text) of one request."""
    head = [("Host", f"127.0.0.1:{port}"), ("Connection", "close"), *headers]
    if body or method == "POST":
        head.append(("Content-Length", str(len(body))))
    data = f"{method} {path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in head) + "\r\n"
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    try:
        sock.sendall(data.encode() + body)
        got = b""
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            got += chunk
    finally:
        sock.close()
    raw_head, _, payload = got.partition(b"\r\n\r\n")
    lines = raw_head.decode("latin-1").split("\r\n")
    if not lines[0].startswith("HTTP/1.1 "):
        fail(f"{method} {path}: no HTTP answer: {got[:200]!r}")
    out = []
    for line in lines[1:]:
        k, _, v = line.partition(":")
        out.append((k.strip().lower(), v.strip()))
    return int(lines[0].split()[1]), out, payload.decode(errors="replace")


def header(headers, name):
    """The value of the one header name, None when absent."""
    values = [v for k, v in headers if k == name]
    if len(values) > 1:
        fail(f"{name} came {len(values)} times: {values}")
    return values[0] if values else None


class Jar:
    """A browser's cookies for the store: name -> (value, SameSite)."""

    def __init__(self):
        self.cookies = {}

    def take(self, headers):
        for k, v in headers:
            if k != "set-cookie":
                continue
            parts = [p.strip() for p in v.split(";")]
            name, _, value = parts[0].partition("=")
            attrs = {p.partition("=")[0].lower(): p.partition("=")[2] for p in parts[1:]}
            if attrs.get("max-age") == "0":
                self.cookies.pop(name, None)
            else:
                self.cookies[name] = (value, attrs.get("samesite", "Lax"))
        return self

    def header(self, cross_site=False):
        """The Cookie header of a navigation: one another site started
        carries only the cookies that are not SameSite=Strict."""
        sent = [f"{n}={v}" for n, (v, same_site) in self.cookies.items()
                if not (cross_site and same_site.lower() == "strict")]
        return [("Cookie", "; ".join(sent))] if sent else []

    def copy(self):
        other = Jar()
        other.cookies = dict(self.cookies)
        return other

    def get(self, name):
        return self.cookies.get(name, (None, None))[0]
