# SPDX-License-Identifier: GPL-2.0-or-later
"""Shared helpers for lmk's integration tests (run by meson test).

Conventions: a test that cannot run here (not root, no BPF, a server it
cannot start) calls skip() with the reason: exit code 77, which meson reports
as SKIP. A failed check raises/exit 1 with what was expected and what came.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 77

BUILD_ROOT = os.environ.get("LMK_BUILD_ROOT", os.getcwd())
SOURCE_ROOT = os.environ.get("LMK_SOURCE_ROOT",
                             os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def skip(reason):
    log(f"SKIP: {reason}")
    sys.exit(SKIP)


# Called with no arguments before a failing test exits: helpers that run
# servers add one that shows the servers' logs, where the cause often is.
on_fail = []


def fail(msg):
    log(f"FAIL: {msg}")
    for hook in on_fail:
        hook()
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def build_path(*parts):
    return os.path.join(BUILD_ROOT, *parts)


def require_root():
    if os.geteuid() != 0:
        skip("needs root (perf_event_open system-wide and BPF)")


def require_bpf():
    require_root()
    if not os.path.exists(build_path("daemon", "lmkd")):
        skip("lmkd was not built (the build has no BPF toolchain: -Dbpf=disabled or clang/bpftool missing)")
    if not os.path.exists("/sys/kernel/btf/vmlinux"):
        skip("kernel has no BTF (/sys/kernel/btf/vmlinux), the CO-RE sampler cannot load")


def tmpdir(prefix="lmk-test-"):
    d = tempfile.mkdtemp(prefix=prefix)
    return d


def ncpus():
    with open("/sys/devices/system/cpu/online") as f:
        n = 0
        for part in f.read().strip().split(","):
            if "-" in part:
                a, b = part.split("-")
                n += int(b) - int(a) + 1
            elif part:
                n += 1
        return n


def lmkd_oneshot(frequency, duration, output, extra=(), env=None):
    """Starts lmkd in one-shot mode (until SIGINT when duration is None); returns the Popen."""
    cmd = [build_path("daemon", "lmkd"), "--foreground", "--frequency", str(frequency),
           "--output", output, *extra]
    if duration:
        cmd += ["--duration", str(duration)]
    log("+", " ".join(cmd))
    return subprocess.Popen(cmd, env=env)


def job_notice(sock, event, job, uid=None):
    """Tells lmkd (on its --notify-socket) that a job starts or ends on
    this node, as root's Prolog and Epilog do at a site: with lmk-notify
    and the job's id, uid (default: ours) and user name in its environment
    (slurm/lmk-prolog). lmkd takes a job id from a process's environment
    only for the uid such a notice (or Slurm's cgroups and process tree)
    names as the job's (docs/slurm.md, "Trust"). Run as root."""
    import pwd
    pw = pwd.getpwuid(os.getuid() if uid is None else uid)
    env = {"PATH": "/usr/bin:/bin", "SLURM_JOB_ID": str(job), "SLURM_JOB_UID": str(pw.pw_uid),
           "SLURM_JOB_USER": pw.pw_name}
    r = subprocess.run([build_path("slurm", "lmk-notify"), "--socket", sock, event], env=env,
                       capture_output=True, text=True, timeout=10)
    check(r.returncode == 0, f"lmk-notify {event} of job {job} to {sock}: {r.returncode} {r.stderr}")


def wait_ready(path, timeout=20.0, proc=None):
    """lmkd writes --ready-file once sampling runs; wait for it."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.path.exists(path):
            return
        if proc is not None and proc.poll() is not None:
            fail(f"process exited with {proc.returncode} before it was ready")
        time.sleep(0.05)
    fail(f"{path} did not appear within {timeout}s")


def load_json(path):
    with open(path) as f:
        return json.load(f)


def report_functions(rep):
    """The functions[] of lmkd's report or batch, each with the (job,
    step, object, phase) and build_id of the rows[] entry it names
    (version 3 names it by index, docs/batch-format.md) and the members
    lmkd leaves out at their defaults, as version 2 spelled them out."""
    rows = rep["rows"]
    out = []
    for f in rep["functions"]:
        row = rows[f["row"]]
        e = {k: row[k] for k in ("job", "step", "object", "phase", "build_id")}
        e.update({"function": None, "offset": None, "entry": False, "other": False})
        e.update((k, v) for k, v in f.items() if k != "row")
        out.append(e)
    return out


def which(prog):
    return shutil.which(prog)


def require_mpi(prog):
    """Skips the calling test (exit 77) unless the MPI program prog was
    built ('' when meson found no MPI) and mpirun is installed; returns
    mpirun's path."""
    if not prog or not os.path.exists(prog):
        skip("built without MPI (meson found no 'mpi' dependency: install openmpi-bin libopenmpi-dev)")
    mpirun = which("mpirun")
    if not mpirun:
        skip("mpirun not installed (Debian package openmpi-bin)")
    return mpirun


class StealMeter:
    """Share of all CPU time a hypervisor stole between start() and share()
    (/proc/stat): task-clock counts stolen time, the kernel's CPU time and
    rusage leave it out (PARAVIRT_TIME_ACCOUNTING), so a referee comparing
    the two must allow for it."""

    @staticmethod
    def _read():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        return v[7], sum(v)

    def start(self):
        self.s0, self.t0 = self._read()
        return self

    def share(self):
        s1, t1 = self._read()
        return (s1 - self.s0) / max(t1 - self.t0, 1)
