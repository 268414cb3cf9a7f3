#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmk's main job on this machine, end to end, with its embedded defaults:
lmk-store on SQLite, lmkd sampling this node and pushing to it, a marked
example workload run as a Slurm job (a private single-node Slurm when the
Slurm packages are installed, else directly), and at the end the job's
summary as the store has it (`lmk job ID`) and the address of its web page
with a login link (`lmk web ID`). Run by tools/lmk-demo."""
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.abspath(os.environ.get("BUILD_DIR", os.path.join(ROOT, "build")))
sys.path.insert(0, os.path.join(ROOT, "tests", "lib"))
os.environ.setdefault("LMK_BUILD_ROOT", BUILD)
os.environ.setdefault("LMK_SOURCE_ROOT", ROOT)

SECONDS = 10


def say(*a):
    print("lmk-demo:", *a, flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_file(path, proc, what, timeout=30):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path):
            return
        if proc.poll() is not None:
            sys.exit(f"lmk-demo: {what} exited with {proc.returncode}")
        time.sleep(0.1)
    sys.exit(f"lmk-demo: {what} did not start")


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None


def web_page(lmk, url, job):
    """The job's page: its address, a login link made by `lmk web`, and a
    check that the link signs in and the page answers."""
    r = subprocess.run(lmk + ["--json", "web", job], capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        return r.returncode
    link = json.loads(r.stdout)["url"]
    try:
        urllib.request.build_opener(NoRedirect).open(link, timeout=10)
        sys.exit("lmk-demo: the login link did not redirect to the job page")
    except urllib.error.HTTPError as e:
        cookie = e.headers.get("Set-Cookie", "").split(";")[0]
        if e.code != 303 or not cookie:
            sys.exit(f"lmk-demo: the login link answered {e.code}")
    page = urllib.request.urlopen(urllib.request.Request(f"{url}/jobs/{job}", headers={"Cookie": cookie}),
                                  timeout=10)
    size = len(page.read())
    # a fresh link: the one above was used to check that it works
    r = subprocess.run(lmk + ["--json", "web", job], capture_output=True, text=True)
    link = json.loads(r.stdout)["url"]
    print(flush=True)
    say(f"the job's web page: {url}/jobs/{job} (answered {page.status}, {size // 1024} KB)")
    say(f"sign in with this link (it works once, for two minutes): {link}")
    port = url.rsplit(":", 1)[1]
    say(f"from another machine: ssh -L {port}:127.0.0.1:{port} to this one first; "
        "users get their own link with `lmk web` (MUNGE)")
    if sys.stdin.isatty():
        try:
            input("lmk-demo: lmk-store serves the page until you press Enter. ")
        except EOFError:
            pass
    return 0


def main():
    if os.geteuid() != 0:
        sys.exit("lmk-demo: run as root: lmkd needs perf events and BPF")
    d = tempfile.mkdtemp(prefix="lmk-demo-")
    os.chmod(d, 0o755)
    procs = []
    try:
        admin, node = secrets.token_hex(16), secrets.token_hex(16)
        tokens, node_token = os.path.join(d, "tokens"), os.path.join(d, "node.token")
        with open(tokens, "w") as f:
            f.write(f"node {node}\nadmin {admin}\n")
        with open(node_token, "w") as f:
            f.write(node + "\n")
        os.chmod(tokens, 0o600)
        os.chmod(node_token, 0o600)

        port = free_port()
        url = f"http://127.0.0.1:{port}"
        store_log = open(os.path.join(d, "lmk-store.log"), "w")
        store = subprocess.Popen([os.path.join(BUILD, "store", "lmk-store"), "--db", os.path.join(d, "lmk.db"),
                                  "--listen", f"127.0.0.1:{port}", "--token-file", tokens],
                                 stdout=store_log, stderr=store_log)
        procs.append(store)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        say(f"lmk-store on {url}, SQLite database {d}/lmk.db")

        sock = os.path.join(d, "lmkd.sock")
        ready = os.path.join(d, "lmkd.ready")
        lmkd = subprocess.Popen([os.path.join(BUILD, "daemon", "lmkd"), "--frequency", "99", "--store", url,
                                 "--token-file", node_token, "--push-interval", "5",
                                 "--spool", os.path.join(d, "spool"), "--notify-socket", sock,
                                 "--liblmk", os.path.join(BUILD, "liblmk", "liblmk.so.1"),
                                 "--ready-file", ready])
        procs.append(lmkd)
        wait_file(ready, lmkd, "lmkd")
        say("lmkd samples this node at 99 Hz and pushes every 5 s")

        example = os.path.join(BUILD, "liblmk", "example-c")
        env = {"LD_LIBRARY_PATH": os.path.join(BUILD, "liblmk"), "LMK_NOTES": "app=example-c:size=demo"}
        job = None
        try:
            import slurm
            have_slurm = not slurm.missing_programs()
        except ImportError:
            have_slurm = False
        if have_slurm:
            mode = "linuxproc" if slurm.cgroup_v1_missing() else "cgroup"
            with slurm.Slurm(mode=mode, prolog=os.path.join(ROOT, "slurm", "lmk-prolog"),
                             epilog=os.path.join(ROOT, "slurm", "lmk-epilog"),
                             script_env={"LMK_NOTIFY": os.path.join(BUILD, "slurm", "lmk-notify"),
                                         "LMK_SOCKET": sock}) as s:
                say(f"a private single-node Slurm runs ({mode} mode); submitting the marked example")
                job = s.sbatch(f"#!/bin/sh\nexec {example} {SECONDS} 2\n", env=env, args=["--job-name=lmk-demo"])
                say(f"job {job} runs example-c ({SECONDS} s, 2 threads, phases timestep/compute and timestep/io)")
                s.wait_done(job, timeout=SECONDS + 120)
                time.sleep(2)
        else:
            say("Slurm is not installed: running the marked example outside a job")
            subprocess.run([example, str(SECONDS), "2"], env={**os.environ, **env}, check=True,
                           stdout=subprocess.DEVNULL)

        say("stopping lmkd: it pushes its last interval to the store")
        lmkd.send_signal(signal.SIGTERM)
        lmkd.wait(timeout=60)
        lmk = [os.path.join(BUILD, "cli", "lmk"), "--store", url, "--token-file", tokens]
        print(flush=True)
        if not job:
            return subprocess.run(lmk + ["top", "--exes", "--since", "1h"]).returncode
        r = subprocess.run(lmk + ["job", job])
        if r.returncode != 0:
            return r.returncode
        return web_page(lmk, url, job)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    p.kill()
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
