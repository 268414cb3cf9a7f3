#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""test-cli-options.py LMK: each subcommand's options become the query its
table says (parameter names, defaults, the order), options that exclude
each other are refused, and `lmk unused --limit` takes a positive number
only. The store is a stand-in that records each request and answers a
fixed JSON; no lmk-store is needed."""
import http.server
import json
import os
import subprocess
import sys
import tempfile
import threading

from lmktest import fail, log

PACKAGES = {"since": 0, "packages": [
    {"name": f"pkg{i}", "version": "1", "manager": "debian", "size_bytes": (i + 1) << 20, "nodes": 1,
     "last_seen": None} for i in range(3)]}


class Recorder(http.server.BaseHTTPRequestHandler):
    requests = []

    def answer(self, body):
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        Recorder.requests.append(("GET", self.path))
        self.answer(PACKAGES if self.path.startswith("/api/v1/packages") else {})

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        Recorder.requests.append(("POST", self.path, json.loads(self.rfile.read(n) or b"null")))
        self.answer({"login": "login/ticket", "expires": 0, "session_seconds": 3600, "user": "alice"})

    def log_message(self, *args):
        pass


def main():
    lmk = sys.argv[1]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    store = f"http://127.0.0.1:{server.server_address[1]}"
    tmp = tempfile.mkdtemp(prefix="lmk-cli-")
    token = os.path.join(tmp, "token")
    with open(token, "w") as f:
        f.write("admin " + "t" * 32 + "\n")
    os.chmod(token, 0o600)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LMK_")}
    env["TZ"] = "UTC"

    def run(*args, expect=0):
        Recorder.requests.clear()
        p = subprocess.run([lmk, "--store", store, "--token-file", token, *args], capture_output=True,
                           text=True, env=env, timeout=30)
        log("+ lmk", " ".join(args), "->", p.returncode)
        if p.returncode != expect:
            fail(f"lmk {' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
        return p, list(Recorder.requests)

    def query(args, want):
        _, reqs = run(*args, "--json")
        got = [r[1] for r in reqs]
        if got != [want]:
            fail(f"lmk {' '.join(args)}: asked {got}, expected [{want!r}]")

    query(["jobs"], "/api/v1/jobs")
    query(["jobs", "-u", "alice", "--cluster", "c1", "--account", "a", "--partition", "p", "--state", "ended",
           "--app", "cp2k", "--name", "n", "--since", "7d", "--until", "1d", "--sort", "cpu_seconds",
           "--order", "asc", "-n", "5", "--offset", "10", "--node-type", "x y"],
          "/api/v1/jobs?user=alice&cluster=c1&account=a&partition=p&state=ended&app=cp2k&name=n&since=7d"
          "&until=1d&sort=cpu_seconds&order=asc&limit=5&offset=10&node_type=x%20y")
    # an option given twice keeps its last value, wherever it stands
    query(["jobs", "--limit", "3", "--user", "bob", "--user", "carol"], "/api/v1/jobs?user=carol&limit=3")
    query(["job", "4711+1", "--cluster", "c1"], "/api/v1/jobs/4711%2B1?cluster=c1")
    query(["top"], "/api/v1/objects?since=7d&limit=20")
    query(["top", "--libs", "--until", "1d", "-n", "3", "--cluster", "c", "--partition", "p", "--account", "a"],
          "/api/v1/objects?kind=lib&since=7d&until=1d&limit=3&cluster=c&partition=p&account=a")
    query(["top", "--exes"], "/api/v1/objects?kind=exe&since=7d&limit=20")
    query(["top", "--kind", "kernel", "--since", "2d"], "/api/v1/objects?kind=kernel&since=2d&limit=20")
    query(["top", "--families", "--account", "a"], "/api/v1/families?since=7d&account=a")
    query(["top", "--packages", "--limit", "4"], "/api/v1/packages?since=7d&limit=4")
    query(["scaling", "cp2k", "--size", "big", "--predict", "64", "--since", "30d", "--until", "1d"],
          "/api/v1/scaling?app=cp2k&size=big&predict=64&since=30d&until=1d")
    query(["apps"], "/api/v1/apps?since=30d")
    query(["apps", "--by", "user", "-n", "3", "--until", "1d", "--user", "u", "--account", "a", "--partition", "p",
           "--app", "x", "--weekly"],
          "/api/v1/apps?by=user&top=3&since=30d&until=1d&user=u&account=a&partition=p&app=x")
    query(["nodes"], "/api/v1/nodes")
    query(["flagged", "-u", "u", "--cluster", "c", "--since", "1d", "--until", "2d", "--rule", "idle",
           "--severity", "warning", "-n", "9"],
          "/api/v1/findings?user=u&cluster=c&since=1d&until=2d&rule=idle&severity=warning&limit=9")
    query(["unused", "--manager", "spack", "--since", "7d"],
          "/api/v1/packages?unused=true&since=7d&manager=spack&limit=100000")
    _, reqs = run("web", "4711", "--cluster", "c1", "--json")
    if reqs != [("POST", "/api/v1/sessions", {"next": "jobs/4711?cluster=c1"})]:
        fail(f"lmk web 4711 --cluster c1: {reqs}")
    _, reqs = run("web", "--site", "--json")
    if reqs != [("POST", "/api/v1/sessions", {"next": "site"})]:
        fail(f"lmk web --site: {reqs}")

    # refused before anything is asked
    for args, msg in [(["top", "--libs", "--exes"], "top: give one of --libs, --exes, --kind"),
                      (["top", "--kind", "lib", "--kind", "exe"], "top: give one of --libs, --exes, --kind"),
                      (["top", "--families", "--libs"], "top: --families and --packages go alone"),
                      (["jobs", "--bogus"], "jobs: unknown option --bogus"),
                      (["apps", "extra"], "apps: unexpected argument extra"),
                      (["nodes", "x"], "nodes: unexpected argument x"),
                      (["web", "4711", "4712"], "web: unexpected argument 4712"),
                      (["scaling", "a", "b"], "scaling: give one application"),
                      (["scaling"], "scaling: give one application"),
                      (["job"], "job: expected one job id"),
                      (["web", "--cluster", "c"], "web: --cluster names a job's cluster")]:
        p, reqs = run(*args, expect=1)
        if msg not in p.stderr or reqs:
            fail(f"lmk {' '.join(args)}: expected \"{msg}\" and no request, got {p.stderr!r}, {reqs}")

    # --limit of unused: the rows shown, a positive number and nothing else
    p, _ = run("unused", "--limit", "2")
    rows = [line for line in p.stdout.splitlines() if line.rstrip().endswith(" 1") and "pkg" in line]
    if len(rows) != 2 or "... and 1 more (--limit)" not in p.stdout:
        fail(f"lmk unused --limit 2: expected two rows and one more:\n{p.stdout}")
    for bad in ["-1", "0", "", "x", "2x", " 2", "+2", "99999999999999999999999"]:
        p, reqs = run("unused", "--limit", bad, expect=1)
        if "unused: --limit takes a positive number" not in p.stderr or reqs:
            fail(f"lmk unused --limit {bad!r}: expected a refusal and no request, got {p.stderr!r}, {reqs}")
    server.shutdown()
    log("ok")


main()
