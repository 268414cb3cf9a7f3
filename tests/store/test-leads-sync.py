#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""slurm/lmk-leads-sync: the leads file from Slurm's account coordinators.

There is no slurmdbd on the test machine (it needs a MariaDB server), so
sacctmgr here is a stand-in that prints what `sacctmgr --noheader
--parsable2 list account withcoord format=Account,Coordinators` prints
("account|coord1,coord2"), and fails when asked for anything else. What is
real: the script, the file it writes, the store that reads it on SIGHUP,
and who then sees which job. The script must never replace a file it did
not write (a site's own file, /dev/null, a FIFO)."""
import os
import signal
import stat
import subprocess
import time

from lmktest import SOURCE_ROOT, fail, log
from storetest import START, Store, check_eq, make_batch, row, workdir

SCRIPT = os.path.join(SOURCE_ROOT, "slurm", "lmk-leads-sync")
WANT = "--noheader --parsable2 list account withcoord format=Account,Coordinators"


def fake_sacctmgr(d, output):
    path = os.path.join(d, "bin", "sacctmgr")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\n[ "$*" = "{WANT}" ] || {{ echo "sacctmgr: unexpected: $*" >&2; exit 1; }}\n'
                f"cat <<'EOF'\n{output}EOF\n")
    os.chmod(path, 0o755)


def sync(d, *args):
    env = {**os.environ, "PATH": os.path.join(d, "bin") + ":" + os.environ["PATH"]}
    return subprocess.run([SCRIPT, *args], env=env, capture_output=True, text=True, timeout=30)


def job(jid, user, account):
    return {"job": jid, "user": user, "account": account, "first_seen": START, "last_seen": START + 60}


def main():
    d = workdir()
    out = os.path.join(d, "leads.conf")
    fake_sacctmgr(d, "chem|carol,dave\nphys|\nbad name|eve\nbio|frank,x y\n")
    r = sync(d, "-o", out)
    check_eq(r.returncode, 0, f"lmk-leads-sync: {r.stderr}")
    with open(out) as f:
        lines = [ln for ln in f.read().splitlines() if not ln.startswith("#")]
    check_eq(lines, ["chem carol dave", "bio frank"], "the leads file from the coordinators")
    for warning in ("skipping account bad name", "skipping coordinator x y of bio"):
        if warning not in r.stderr:
            fail(f"no warning {warning!r}: {r.stderr}")

    b = make_batch(jobs=[job("701", "alice", "chem"), job("702", "bob", "phys")],
                   rows=[row("701", "/apps/a", "exe", 10, user="alice"),
                         row("702", "/apps/b", "exe", 10, user="bob")])
    hdr = "X-Remote-User"
    with Store(extra=["--user-header", hdr, "--trusted-proxies", "127.0.0.1", "--leads", out]) as s:
        check_eq(s.ingest(b)[0], 200, "ingest")

        def jobs_of(user):
            status, _, body = s.request("GET", "/api/v1/jobs", headers={hdr: user})
            check_eq(status, 200, f"jobs of {user}")
            return [j["job"] for j in body["jobs"]]

        check_eq(jobs_of("dave"), ["701"], "a coordinator of chem")
        check_eq(jobs_of("frank"), [], "a coordinator of an account without jobs")

        # a new coordinator, and the site's own file added; then SIGHUP
        site = os.path.join(d, "site-leads.conf")
        with open(site, "w") as f:
            f.write("phys  grace\n")
        fake_sacctmgr(d, "chem|carol\nphys|heidi\n")
        r = sync(d, "-o", out, "-a", site, "-r", f"kill -HUP {s.proc.pid}")
        check_eq(r.returncode, 0, f"lmk-leads-sync again: {r.stderr}")
        end = time.monotonic() + 10
        while jobs_of("heidi") != ["702"]:  # the script's -r sent SIGHUP
            if time.monotonic() > end:
                fail(f"heidi does not see phys's job after the reload:\n{s.read_log()}")
            time.sleep(0.1)
        check_eq(jobs_of("grace"), ["702"], "a lead from the site's own file")
        check_eq(jobs_of("dave"), [], "dave no longer coordinates chem")

    # sacctmgr fails: the file stays as it was
    before = open(out).read()
    os.unlink(os.path.join(d, "bin", "sacctmgr"))
    with open(os.path.join(d, "bin", "sacctmgr"), "w") as f:
        f.write("#!/bin/sh\necho 'slurmdbd: connection refused' >&2\nexit 1\n")
    os.chmod(os.path.join(d, "bin", "sacctmgr"), 0o755)
    r = sync(d, "-o", out)
    check_eq((r.returncode != 0, open(out).read() == before), (True, True), "a failing sacctmgr")

    # files it did not write are left alone
    fake_sacctmgr(d, "chem|carol\n")
    own = os.path.join(d, "own.conf")
    with open(own, "w") as f:
        f.write("chem alice\n")
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    for path in (own, fifo, "/dev/null"):
        st = os.lstat(path)
        r = sync(d, "-o", path)
        if r.returncode == 0 or "not written by lmk-leads-sync" not in r.stderr:
            fail(f"lmk-leads-sync -o {path}: {r.returncode} {r.stderr}")
        check_eq(stat.S_IFMT(os.lstat(path).st_mode), stat.S_IFMT(st.st_mode), f"{path} kept its type")
    check_eq(open(own).read(), "chem alice\n", "the site's own file")
    check_eq(sorted(f for f in os.listdir(d) if f.startswith(".lmk-leads")), [], "no temporary file left")
    log("PASS")


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main()
