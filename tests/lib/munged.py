# SPDX-License-Identifier: GPL-2.0-or-later
"""A private munged for tests (Python 3 stdlib only): its own key, socket and
files in a directory of the test's, running as user munge, so a test never
mints credentials with a real cluster's key.

    m = munged.Munged(directory).start()
    ... m.socket ...
    m.stop()
"""
import os
import pwd
import shutil
import subprocess
import time


def find():
    for p in (shutil.which("munged"), "/usr/sbin/munged", "/sbin/munged"):
        if p and os.access(p, os.X_OK):
            return p
    return None


class Munged:
    def __init__(self, directory, log_path=None):
        self.dir = os.path.join(directory, "munge")
        self.socket = os.path.join(self.dir, "munge.socket")
        self.log_path = log_path or os.path.join(directory, "munged.out")
        self.proc = None

    def start(self, timeout=10):
        munge = pwd.getpwnam("munge")
        os.makedirs(self.dir)
        # Clients of every user reach the socket, so the directory must be
        # searchable by all; munged refuses anything group/other-writable.
        os.chmod(self.dir, 0o755)
        key = os.path.join(self.dir, "munge.key")
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o400)
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(1024))
        for p in (self.dir, key):
            os.chown(p, munge.pw_uid, munge.pw_gid)

        def drop():
            os.setgid(munge.pw_gid)
            os.setgroups([])
            os.setuid(munge.pw_uid)

        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [find(), "-F", "--socket", self.socket, "--key-file", key,
                 "--pid-file", os.path.join(self.dir, "munged.pid"),
                 "--seed-file", os.path.join(self.dir, "munged.seed"),
                 "--log-file", os.path.join(self.dir, "munged.log"), "--num-threads", "2"],
                preexec_fn=drop, stdout=log, stderr=subprocess.STDOUT, close_fds=True)
        end = time.monotonic() + timeout
        while not os.path.exists(self.socket):
            if self.proc.poll() is not None or time.monotonic() > end:
                with open(self.log_path, errors="replace") as f:
                    raise RuntimeError(f"munged did not start:\n{f.read()}")
            time.sleep(0.05)
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
