# SPDX-License-Identifier: GPL-2.0-or-later
"""A private PostgreSQL server for tests (Python 3 stdlib only), from Debian's
postgresql package: its own cluster in a temporary directory, reached through
a Unix socket in that directory (and, on request, a free TCP port on
127.0.0.1), so a test never touches a site's server or another test's.

    pg = pgserver.start_or_skip()      # exit 77 with the reason if it cannot
    ... pg.uri / pg.dsn / pg.psql("SELECT 1") ...
    pg.restart()                       # or halt() ... resume(): sessions are cut
    pg.stop()                          # also done at exit, even on failure

The server runs as an unprivileged user (the current one, or when the test
runs as root, user postgres, which the package creates, else nobody),
trusts every local connection (role and database "lmk") and does not fsync:
it holds nothing worth keeping. It dies with the test process
(PR_SET_PDEATHSIG), and a test killed by meson's SIGTERM still removes it.

Start-up is dominated by creating the cluster's files: initdb takes about
1 s, and on this VM's disk file creation alone 1.5 s, so the cluster lives
on /dev/shm when that is a roomy tmpfs. Under meson (LMK_BUILD_ROOT set) the
first server keeps its freshly initialised, cleanly stopped cluster as a
template in the build directory and later ones copy it: about 0.3 s from
nothing to a ready database.
"""
import atexit
import ctypes
import glob
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse

import lmktest

USER = "lmk"
DATABASE = "lmk"
START_TIMEOUT = 30.0
# Bump when what the template holds changes, so stale ones are not copied.
TEMPLATE_FORMAT = 1
PR_SET_PDEATHSIG = 1

# Speed over durability; small memory, as several tests may run servers at once.
SETTINGS = {
    "fsync": "off",
    "synchronous_commit": "off",
    "full_page_writes": "off",
    "wal_level": "minimal",
    "max_wal_senders": "0",
    "shared_buffers": "32MB",
    "logging_collector": "off",
    "log_min_messages": "warning",
}


class Unavailable(Exception):
    """PostgreSQL is not installed here or would not start; the message says why."""


def bindir():
    """The directory holding initdb and postgres: $LMK_PG_BINDIR, else the
    newest /usr/lib/postgresql/<major>/bin (Debian's layout), else None."""
    env = os.environ.get("LMK_PG_BINDIR")
    candidates = [env] if env else sorted(
        glob.glob("/usr/lib/postgresql/*/bin"),
        key=lambda d: [int(x) for x in re.findall(r"\d+", d.split("/")[-2])] or [0])[::-1]
    for d in candidates:
        if all(os.access(os.path.join(d, p), os.X_OK) for p in ("initdb", "postgres", "psql")):
            return d
    return None


def _run_as():
    """(uid, gid) the server runs as: postgres refuses to run as root."""
    if os.geteuid() != 0:
        return os.geteuid(), os.getegid()
    for name in ("postgres", "nobody"):
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            continue
        return pw.pw_uid, pw.pw_gid
    raise Unavailable("running as root, and there is neither a user postgres nor nobody to run the server as")


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _default_parent():
    """/dev/shm when it is a roomy tmpfs: creating the cluster's ~1,300
    files costs 1.5 s on this VM's disk and 0.13 s there, and nothing in it
    is meant to outlive the test. $LMK_PG_TMPDIR chooses (e.g. a disk for a
    large benchmark store)."""
    env = os.environ.get("LMK_PG_TMPDIR")
    if env:
        return env
    try:
        st = os.statvfs("/dev/shm")
        with open("/proc/self/mounts") as f:
            tmpfs = any(l.split()[1:3] == ["/dev/shm", "tmpfs"] for l in f)
        if tmpfs and os.access("/dev/shm", os.W_OK) and st.f_bavail * st.f_frsize >= 2 << 30:
            return "/dev/shm"
    except OSError:
        pass
    return None


def _chown_tree(path, uid, gid):
    os.chown(path, uid, gid)
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            os.chown(os.path.join(root, n), uid, gid, follow_symlinks=False)


def _exit_on_sigterm():
    """meson test stops a test that runs too long with SIGTERM, whose default
    action skips atexit: turn it into SystemExit so the server goes too."""
    if threading.current_thread() is threading.main_thread() and \
            signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _raise_exit)


def _raise_exit(*_):
    raise SystemExit(128 + signal.SIGTERM)


class Server:
    def __init__(self, tcp=False, template=True, parent=None):
        self.bindir = bindir()
        if not self.bindir and os.environ.get("LMK_PG_BINDIR"):
            raise Unavailable(f"LMK_PG_BINDIR={os.environ['LMK_PG_BINDIR']} lacks initdb, postgres or psql")
        if not self.bindir:
            raise Unavailable("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin with initdb, "
                              "postgres and psql; apt-get install postgresql, or set LMK_PG_BINDIR)")
        self.major = os.path.basename(os.path.dirname(self.bindir))
        self.uid, self.gid = _run_as()
        self.tcp = tcp
        self.use_template = template
        self.parent = parent or _default_parent()
        self.dir = None
        self.proc = None
        self.port = None
        self.start_seconds = None

    # -- where it is ---------------------------------------------------------

    @property
    def host(self):
        """The Unix socket directory (libpq's host for a socket)."""
        return os.path.join(self.dir, "sock")

    @property
    def uri(self):
        """A libpq URI through the socket, e.g. postgresql://lmk@%2Ftmp%2F...%2Fsock:5432/lmk."""
        return f"postgresql://{USER}@{urllib.parse.quote(self.host, safe='')}:{self.port}/{DATABASE}"

    @property
    def tcp_uri(self):
        if not self.tcp:
            raise ValueError("server was started without tcp=True")
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{DATABASE}"

    @property
    def dsn(self):
        """The same as a libpq keyword/value string."""
        return f"host={self.host} port={self.port} user={USER} dbname={DATABASE}"

    def dsn_for(self, dbname):
        return f"host={self.host} port={self.port} user={USER} dbname={dbname}"

    # -- running -------------------------------------------------------------

    def _demote(self):
        if os.geteuid() == 0:
            os.setgid(self.gid)
            os.setgroups([])
            os.setuid(self.uid)

    def _demote_and_tie(self):
        self._demote()
        # After setuid: a change of credentials clears the death signal.
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGQUIT, 0, 0, 0)

    def _log_tail(self, n=30):
        try:
            with open(os.path.join(self.dir, "server.log"), errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def _tool(self, argv):
        with open(os.path.join(self.dir, "server.log"), "ab") as log:
            p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                               preexec_fn=self._demote, cwd=self.dir)
        if p.returncode != 0:
            raise Unavailable(f"{os.path.basename(argv[0])} failed ({p.returncode}):\n{self._log_tail()}")

    def _template_path(self):
        root = os.environ.get("LMK_BUILD_ROOT")
        if not self.use_template or not root or not os.path.isdir(root):
            return None
        path = os.path.join(root, "tests", f"pg-template-{self.major}-{TEMPLATE_FORMAT}-uid{self.uid}")
        if not os.path.isdir(path) and not os.access(os.path.dirname(path), os.W_OK):
            return None  # nowhere to keep one (another user's build directory)
        return path

    def start(self):
        t0 = time.monotonic()
        _exit_on_sigterm()
        self.dir = tempfile.mkdtemp(prefix="lmk-pg-", dir=self.parent)
        atexit.register(self.stop)
        os.mkdir(self.host)
        _chown_tree(self.dir, self.uid, self.gid)
        self.port = _free_port() if self.tcp else 5432
        data = os.path.join(self.dir, "data")

        template = self._template_path()
        if template and os.path.isdir(template):
            subprocess.run(["cp", "-a", template, data], check=True)
            self._postmaster()
        else:
            self._tool([os.path.join(self.bindir, "initdb"), "-D", data, "-A", "trust", "-U", USER,
                        "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions"])
            self._postmaster()
            self.psql(f"CREATE DATABASE {DATABASE}", dbname="postgres")
            if template:
                self._save_template(data, template)
        self.start_seconds = time.monotonic() - t0
        return self

    def _postmaster(self):
        data = os.path.join(self.dir, "data")
        argv = [os.path.join(self.bindir, "postgres"), "-D", data, "-k", self.host, "-p", str(self.port),
                "-c", "listen_addresses=" + ("127.0.0.1" if self.tcp else "")]
        for k, v in SETTINGS.items():
            argv += ["-c", f"{k}={v}"]
        with open(os.path.join(self.dir, "server.log"), "ab") as log:
            self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                         preexec_fn=self._demote_and_tie, cwd=self.dir)
        # postmaster.pid's eighth line turns "ready" once connections are
        # accepted (what pg_ctl -w waits for).
        pidfile = os.path.join(data, "postmaster.pid")
        end = time.monotonic() + START_TIMEOUT
        while True:
            try:
                with open(pidfile) as f:
                    lines = f.read().splitlines()
                if len(lines) >= 8 and lines[7].strip() == "ready":
                    return
            except FileNotFoundError:
                pass
            if self.proc.poll() is not None:
                raise Unavailable(f"postgres exited with {self.proc.returncode} while starting:\n{self._log_tail()}")
            if time.monotonic() > end:
                raise Unavailable(f"postgres was not ready within {START_TIMEOUT:.0f}s:\n{self._log_tail()}")
            time.sleep(0.02)

    def _save_template(self, data, template):
        """A cleanly stopped copy of this fresh cluster for the next tests:
        copied aside, then renamed into place, so that tests starting at
        once never see half a template."""
        self._signal_and_wait(signal.SIGINT)  # fast shutdown: a clean checkpoint, no recovery on copy
        tmp = f"{template}.tmp-{os.getpid()}"
        try:
            os.makedirs(os.path.dirname(template), exist_ok=True)
            subprocess.run(["cp", "-a", data, tmp], check=True)
            os.rename(tmp, template)
        except (OSError, subprocess.CalledProcessError) as e:
            if not os.path.isdir(template):  # else a test started at the same time kept one
                lmktest.log(f"pgserver: template not kept ({e}); the next server runs initdb again")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        self._postmaster()

    def _signal_and_wait(self, sig):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def stop(self):
        """Stops the server (immediate shutdown: nothing in it is kept) and
        removes its directory. Safe to call twice."""
        self._signal_and_wait(signal.SIGQUIT)
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)
            self.dir = None
        atexit.unregister(self.stop)

    def halt(self):
        """Stops the server as an administrator would (fast shutdown: its
        sessions end with SQLSTATE 57P01), keeping the cluster for resume()."""
        self._signal_and_wait(signal.SIGINT)

    def resume(self):
        """Starts the halted server again, on the same socket and port."""
        self._postmaster()

    def restart(self):
        """halt() and resume(): what a client sees of a server restart."""
        self.halt()
        self.resume()

    # -- talking to it -------------------------------------------------------

    def psql(self, sql=None, files=(), dbname=DATABASE, single_transaction=False):
        """Runs SQL (and/or files) with psql, stopping at the first error;
        returns the rows as lists of strings (NULL as None)."""
        argv = [os.path.join(self.bindir, "psql"), "-X", "-q", "-A", "-t", "-F", "\t",
                "-P", "null=\\N", "-v", "ON_ERROR_STOP=1", "-d", self.dsn_for(dbname)]
        if single_transaction:
            argv.append("--single-transaction")
        if sql is not None:
            argv += ["-c", sql]
        for f in files:
            argv += ["-f", f]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env)
        if p.returncode != 0:
            raise RuntimeError(f"psql failed ({p.returncode}): {p.stderr.strip()}")
        return [[None if c == "\\N" else c for c in line.split("\t")]
                for line in p.stdout.splitlines() if line]


def start_or_skip(**kw):
    """A started Server, or exit 77 saying why PostgreSQL cannot run here."""
    try:
        return Server(**kw).start()
    except Unavailable as e:
        lmktest.skip(f"no private PostgreSQL server: {e}")
