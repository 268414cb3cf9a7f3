# SPDX-License-Identifier: GPL-2.0-or-later
"""Real people for the access tests: system users made for the test, the
lmk command run as one of them, and MUNGE credentials they make."""
import fcntl
import os
import pwd
import subprocess

import munged
from lmktest import build_path, fail, skip
from storetest import workdir

USERS = ("lmkalice", "lmkbob", "lmkcarol", "lmkdave")


def find(prog):
    for d in ("/usr/bin", "/usr/sbin", "/bin", "/sbin"):
        if os.access(os.path.join(d, prog), os.X_OK):
            return os.path.join(d, prog)
    return None


def make_users():
    """Creates the test users that do not exist yet; returns those it made."""
    made = []
    for u in USERS:
        try:
            pwd.getpwnam(u)
        except KeyError:
            subprocess.run([find("useradd"), "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", u],
                           check=True, capture_output=True)
            made.append(u)
    return made


def as_user(user, argv, env=None):
    pw = pwd.getpwnam(user)

    def drop():
        os.setgid(pw.pw_gid)
        os.setgroups([])
        os.setuid(pw.pw_uid)

    return subprocess.run(argv, preexec_fn=drop, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", **(env or {})}, cwd="/")


def lmk(user, store, sock, *args):
    return as_user(user, [build_path("cli", "lmk"), "--store", store.url(), "--munge-socket", sock, *args])


def credential(user, sock, payload, ttl=None):
    argv = [find("munge"), "-S", sock, "-s", payload]
    if ttl:
        argv += ["-t", str(ttl)]
    r = as_user(user, argv)
    if r.returncode != 0:
        fail(f"munge as {user}: {r.stderr}")
    return r.stdout.strip()


def with_people(run):
    """Runs run(directory, munged socket) with the test users made and a
    private munged started; skips without root or munge."""
    if os.geteuid() != 0:
        skip("needs root: creates users and starts munged as user munge")
    if not find("munged") or not find("munge") or not find("useradd"):
        skip("munge is not installed (apt-get install munge)")
    d = workdir()
    os.chmod(d, 0o755)
    # the tests that use these users run one after the other: one's userdel
    # must not pull them from under another
    with open("/run/lmk-test-people.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = make_users()
        m = munged.Munged(d).start()
        try:
            run(d, m.socket)
        finally:
            m.stop()
            for u in made:
                subprocess.run([find("userdel"), u], capture_output=True)
