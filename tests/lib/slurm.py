# SPDX-License-Identifier: GPL-2.0-or-later
"""A real single-node Slurm for lmk's integration tests (Python 3 stdlib only).

    with slurm.Slurm(mode="cgroup") as s:
        job = s.sbatch("#!/bin/sh\nsleep 5\n")
        s.wait_state(job, "RUNNING")
        ...

Everything lives in a private directory: a munged of its own (own key, own
socket, running as user munge), slurm.conf/cgroup.conf with this host as
controller and only node, state/spool/log files, and free TCP ports, so a
run leaves /etc alone and two runs on one machine do not talk to each other.
Job ids start at a random FirstJobId, so two harnesses on one machine never
share a cgroup path either.

Modes:
  "linuxproc"  ProctrackType=proctrack/linuxproc, TaskPlugin=task/none: job
               processes stay in the cgroups slurmd runs in; only their
               environment tells which job they belong to.
  "cgroup"     ProctrackType=proctrack/cgroup, TaskPlugin=task/cgroup with
               CgroupPlugin=cgroup/v1: job processes land in
               /slurm/uid_<u>/job_<id>/step_<s>[/task_<t>] in the freezer,
               cpuset and memory hierarchies. Needs the cgroup v1 controllers
               mounted under /sys/fs/cgroup (see cgroup_v1_missing()).

Tests call require_slurm() first: it skips (exit 77, with the reason) when
not root or when the Debian packages slurm-wlm and munge are not installed.
"""
import json
import os
import pwd
import random
import re
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import lmktest
import munged

SBIN_CANDIDATES = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
# Controllers the cgroup mode uses: freezer (proctrack/cgroup), cpuset and
# memory (task/cgroup with ConstrainCores/ConstrainRAMSpace).
CGROUP_V1_CONTROLLERS = ("freezer", "cpuset", "memory")
TERMINAL_STATES = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                   "PREEMPTED", "OUT_OF_MEMORY", "BOOT_FAIL", "DEADLINE")


def _find(prog):
    path = shutil.which(prog)
    if path:
        return path
    for d in SBIN_CANDIDATES:
        p = os.path.join(d, prog)
        if os.access(p, os.X_OK):
            return p
    return None


def missing_programs():
    return [p for p in ("munged", "slurmctld", "slurmd", "slurmstepd", "sbatch", "srun",
                        "scontrol", "sinfo") if not _find(p)]


def require_slurm():
    """Skips the calling test (exit 77) when a real Slurm cannot run here."""
    if os.geteuid() != 0:
        lmktest.skip("needs root: starts munged, slurmctld and slurmd")
    missing = missing_programs()
    if missing:
        lmktest.skip("Slurm is not installed (missing %s): apt-get install slurm-wlm munge"
                     % ", ".join(missing))


def require_spank(so):
    """Skips the calling test (exit 77) when the build has no lmk.so: meson
    passes "" for it where <slurm/spank.h> was missing or -Dspank=disabled."""
    if not so:
        lmktest.skip("the SPANK plugin lmk.so was not built: <slurm/spank.h> is missing "
                     "(apt-get install libslurm-dev, then reconfigure) or -Dspank=disabled")
    return os.path.abspath(so)


def slurm_version():
    out = subprocess.run([_find("slurmctld"), "-V"], capture_output=True, text=True).stdout
    return out.strip().split()[-1] if out.strip() else "unknown"


def cgroup_v1_missing():
    """The v1 controllers the cgroup mode needs that are not mounted, as a list."""
    mounted = set()
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields = right.split()
                if len(fields) >= 3 and fields[0] == "cgroup":
                    mounted.update(o for o in fields[2].split(",") if o in CGROUP_V1_CONTROLLERS)
    except OSError:
        pass
    return [c for c in CGROUP_V1_CONTROLLERS
            if c not in mounted or not os.path.isdir(os.path.join("/sys/fs/cgroup", c))]


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kv(text):
    """Parses scontrol's one-line 'Key=Value Key=Value' output into a dict.
    Values may contain spaces only for keys scontrol prints last on a line
    (Command=, WorkDir=...), which is why scontrol -o output is split on
    ' Key=' boundaries rather than on every space."""
    out = {}
    for m in re.finditer(r"(?:^|\s)([A-Za-z][A-Za-z0-9_:/]*)=(.*?)(?=\s[A-Za-z][A-Za-z0-9_:/]*=|$)",
                         text.strip()):
        out[m.group(1)] = m.group(2)
    return out


class SlurmError(Exception):
    pass


def receive_notices(sock, job_probe, job, want, timeout=30, logs="", stash=None):
    """Reads lmkd notices from a datagram socket (a test's stand-in for
    lmkd) until every event in want came for job; each is parsed by lmkd's
    own parser (job-probe --notice). Returns {event: parsed notice}.
    stash: a dict that keeps other jobs' notices for later calls."""
    stash = {} if stash is None else stash
    got = stash.pop(job, {})
    end = time.monotonic() + timeout
    while not set(want) <= set(got):
        left = end - time.monotonic()
        if left <= 0:
            lmktest.fail(f"job {job}: got notices {sorted(got)}, expected {sorted(want)}{logs}")
        sock.settimeout(left)
        try:
            msg = sock.recv(65536)
        except socket.timeout:
            continue
        r = subprocess.run([job_probe, "--notice"], input=msg, capture_output=True)
        lmktest.check(r.returncode == 0, f"job-probe --notice failed: {r.stderr!r}")
        n = json.loads(r.stdout)
        lmktest.log(f"notice: {msg.decode(errors='replace').strip()}")
        lmktest.check(n["rc"] == 0, f"lmkd's parser refuses {msg!r}: {n['rc']}")
        to = got if n["info"]["job"] == job else stash.setdefault(n["info"]["job"], {})
        lmktest.check(n["event"] not in to, f"job {n['info']['job']}: {n['event']} came twice")
        to[n["event"]] = n
    return got


class Slurm:
    def __init__(self, mode="linuxproc", prolog=None, epilog=None, script_env=None,
                 prolog_flags="Alloc", extra_conf=(), startup_timeout=30.0, plugstack=None):
        """prolog/epilog: programs slurmd runs as Prolog/Epilog (as root, at
        job allocation with PrologFlags=Alloc, and at job end). slurmd gives
        them a fresh environment of SLURM_* variables only; script_env adds
        variables to it through small wrapper scripts.
        extra_conf: more slurm.conf lines.
        plugstack: lines of a plugstack.conf (SPANK plugins, e.g.
        "required /path/lmk.so opt-out=forbidden"), read by slurmd,
        slurmstepd and the clients (sbatch, srun, salloc) alike."""
        if mode not in ("linuxproc", "cgroup"):
            raise ValueError("mode must be 'linuxproc' or 'cgroup'")
        self.mode = mode
        self.prolog = prolog
        self.epilog = epilog
        self.script_env = dict(script_env or {})
        self.prolog_flags = prolog_flags
        self.extra_conf = list(extra_conf)
        self.plugstack = list(plugstack) if plugstack else None
        self.startup_timeout = startup_timeout
        self.dir = None
        self.conf = None
        self.procs = {}
        self.node = socket.gethostname().split(".")[0]
        # Below MaxJobId (default 67043328).
        self.first_job_id = random.randrange(10000, 60000000)
        self.start_seconds = None
        self._created_cgroups = []

    # -- life cycle ---------------------------------------------------------

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def start(self):
        t0 = time.monotonic()
        if self.mode == "cgroup":
            missing = cgroup_v1_missing()
            if missing:
                raise SlurmError("cgroup mode needs the cgroup v1 controllers %s mounted under "
                                 "/sys/fs/cgroup" % ", ".join(missing))
        self.dir = tempfile.mkdtemp(prefix="lmk-slurm-")
        os.chmod(self.dir, 0o755)
        for d in ("etc", "state", "spool", "log", "run"):
            os.makedirs(os.path.join(self.dir, d))
        self._start_munge()
        self._write_config()
        self._note_cgroups()
        self._widen_top_cpuset()
        self._start_daemon("slurmctld", [_find("slurmctld"), "-D", "-c", "-f", self.conf])
        self._start_daemon("slurmd", [_find("slurmd"), "-D", "-N", self.node, "-f", self.conf])
        self._wait_idle()
        self.start_seconds = time.monotonic() - t0
        lmktest.log("slurm %s (%s mode) up in %.1f s, config in %s"
                    % (slurm_version(), self.mode, self.start_seconds, self.dir))

    def stop(self):
        """Cancels what still runs, stops the daemons, and kills whatever this
        cluster started that outlived them: slurmstepd and job processes do
        not die with slurmd, and would keep their cgroups busy."""
        if self.dir and "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            self.run(["scancel", "--partition=debug"], check=False, timeout=20)
            try:
                self._wait(lambda: not self._leftovers(), 10, "cancelled jobs to end")
            except SlurmError:
                pass
        for name in ("slurmd", "slurmctld", "munged"):
            p = self.procs.pop(name, None)
            if p is None:
                continue
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self._kill_leftovers()
        self._remove_cgroups()
        if self.dir and not os.environ.get("LMK_KEEP_SLURM_DIR"):
            shutil.rmtree(self.dir, ignore_errors=True)
        self.dir = None

    def _leftovers(self):
        """Processes of this cluster other than its daemons: every one of them
        (slurmstepd, job processes, clients) has our SLURM_CONF in its
        environment, which no other process on the machine can have."""
        if not self.conf:
            return []
        mark = f"SLURM_CONF={self.conf}".encode()
        # The daemons' own children (slurmctld's slurmscriptd) go with them.
        daemons = {p.pid for p in self.procs.values() if p.poll() is None}
        out = []
        for d in os.listdir("/proc"):
            if not d.isdigit() or int(d) in daemons or int(d) == os.getpid():
                continue
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    ppid = int(f.read().rsplit(b")", 1)[1].split()[1])
                with open(f"/proc/{d}/environ", "rb") as f:
                    if ppid not in daemons and mark in f.read().split(b"\0"):
                        out.append(int(d))
            except (OSError, ValueError, IndexError):
                pass
        return out

    def _kill_leftovers(self):
        for _ in range(50):
            pids = self._leftovers()
            if not pids:
                return
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
            time.sleep(0.1)
        lmktest.log("warning: processes of the test cluster survive: %s" % self._leftovers())

    # -- munge --------------------------------------------------------------

    def _start_munge(self):
        m = munged.Munged(self.dir, log_path=os.path.join(self.dir, "log", "munged.out")).start()
        self.munge_socket = m.socket
        self.procs["munged"] = m.proc

    # -- configuration ------------------------------------------------------

    def _write_config(self):
        d = self.dir
        self.conf = os.path.join(d, "etc", "slurm.conf")
        self.ctld_port = _free_port()
        self.slurmd_port = _free_port()
        while self.slurmd_port == self.ctld_port:
            self.slurmd_port = _free_port()
        hw = self._hardware()
        lines = [
            "ClusterName=lmktest",
            f"SlurmctldHost={self.node}(127.0.0.1)",
            f"SlurmctldPort={self.ctld_port}",
            f"SlurmdPort={self.slurmd_port}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.munge_socket}",
            f"StateSaveLocation={d}/state",
            f"SlurmdSpoolDir={d}/spool",
            f"SlurmctldPidFile={d}/run/slurmctld.pid",
            f"SlurmdPidFile={d}/run/slurmd.pid",
            f"SlurmctldLogFile={d}/log/slurmctld.log",
            f"SlurmdLogFile={d}/log/slurmd.log",
            "SlurmctldDebug=info",
            "SlurmdDebug=info",
            f"FirstJobId={self.first_job_id}",
            "MpiDefault=none",
            "ReturnToService=2",
            "SchedulerType=sched/builtin",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "AccountingStorageType=accounting_storage/none",
            "JobAcctGatherType=jobacct_gather/none",
            "JobCompType=jobcomp/none",
            # Keep finished jobs visible to 'scontrol show job' for a while.
            "MinJobAge=600",
            "KillWait=2",
            "MessageTimeout=10",
            "SlurmdTimeout=60",
            "InactiveLimit=0",
        ]
        if self.mode == "cgroup":
            lines += ["ProctrackType=proctrack/cgroup", "TaskPlugin=task/cgroup"]
        else:
            lines += ["ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none"]
        if self.prolog:
            lines.append(f"Prolog={self._wrap('prolog', self.prolog)}")
        if self.epilog:
            lines.append(f"Epilog={self._wrap('epilog', self.epilog)}")
        if self.plugstack is not None:
            path = os.path.join(d, "etc", "plugstack.conf")
            with open(path, "w") as f:
                f.write("\n".join(self.plugstack) + "\n")
            lines.append(f"PlugStackConfig={path}")
        # a SPANK plugin's job_prolog runs where a Prolog would
        if (self.prolog or self.epilog or self.plugstack) and self.prolog_flags:
            lines.append(f"PrologFlags={self.prolog_flags}")
        lines += self.extra_conf
        lines += [
            f"NodeName={self.node} NodeAddr=127.0.0.1 {hw} RealMemory=1000 State=UNKNOWN",
            f"PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP",
        ]
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        cgroup = ["CgroupPlugin=cgroup/v1", "CgroupAutomount=no",
                  "CgroupMountpoint=/sys/fs/cgroup"]
        if self.mode == "cgroup":
            cgroup += ["ConstrainCores=yes", "ConstrainRAMSpace=yes", "ConstrainDevices=no"]
        with open(os.path.join(d, "etc", "cgroup.conf"), "w") as f:
            f.write("\n".join(cgroup) + "\n")

    def _hardware(self):
        """The node's CPU layout as slurmd detects it: a node configured
        otherwise gets its layout rewritten or is drained."""
        keys = ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore")
        r = subprocess.run([_find("slurmd"), "-C"], capture_output=True, text=True)
        found = _kv(r.stdout.splitlines()[0]) if r.returncode == 0 and r.stdout else {}
        if all(found.get(k, "").isdigit() for k in keys):
            return " ".join(f"{k}={found[k]}" for k in keys)
        return f"CPUs={lmktest.ncpus()}"

    def _wrap(self, name, program):
        if not self.script_env:
            return program
        path = os.path.join(self.dir, "etc", name)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n")
            for k, v in sorted(self.script_env.items()):
                f.write(f"export {k}={shlex.quote(str(v))}\n")
            f.write(f"exec {shlex.quote(program)} \"$@\"\n")
        os.chmod(path, 0o755)
        return path

    # Slurm's cgroup/v1 plugin creates its top cgroup in each controller it uses and
    # leaves it behind; remove what this run created so the machine is as
    # it was (rmdir only succeeds on empty cgroups, so nothing live is hit).
    def _note_cgroups(self):
        if self.mode != "cgroup":
            return
        # Debian builds Slurm with --enable-multiple-slurmd, which names the
        # top cgroup slurm_<node> instead of slurm.
        for c in CGROUP_V1_CONTROLLERS:
            for top in ("slurm", "slurm_" + self.node):
                p = os.path.join("/sys/fs/cgroup", c, top)
                if not os.path.exists(p):
                    self._created_cgroups.append(p)

    def _widen_top_cpuset(self):
        """Gives a top cpuset left by an earlier run every CPU the machine has.
        In cgroup v1 a CPU taken offline leaves every cpuset but the root and
        does not come back when it is online again; slurmstepd then cannot
        give a job's uid cgroup more than what is left, and the job fails with
        "Slurmd could not execve job" (EACCES on cpuset.cpus)."""
        if self.mode != "cgroup":
            return
        base = "/sys/fs/cgroup/cpuset"
        try:
            with open(os.path.join(base, "cpuset.cpus")) as f:
                cpus = f.read().strip()
            with open(os.path.join(base, "cpuset.mems")) as f:
                mems = f.read().strip()
        except OSError:
            return
        for top in ("slurm", "slurm_" + self.node):
            for name, value in (("cpuset.mems", mems), ("cpuset.cpus", cpus)):
                p = os.path.join(base, top, name)
                if not os.path.exists(p):
                    continue
                try:
                    with open(p, "w") as f:
                        f.write(value)
                except OSError as e:
                    raise SlurmError(f"cannot give {p} the machine's {value}: {e}")

    def _remove_cgroups(self):
        for top in self._created_cgroups:
            for root, dirs, _ in os.walk(top, topdown=False):
                for d in dirs:
                    try:
                        os.rmdir(os.path.join(root, d))
                    except OSError:
                        pass
            try:
                os.rmdir(top)
            except OSError:
                pass
        self._created_cgroups = []

    # -- daemons ------------------------------------------------------------

    def _start_daemon(self, name, argv):
        log = open(os.path.join(self.dir, "log", name + ".out"), "wb")
        self.procs[name] = subprocess.Popen(argv, env=self.env(), stdout=log,
                                            stderr=subprocess.STDOUT, close_fds=True,
                                            start_new_session=True)
        log.close()

    def _wait(self, cond, timeout, what, proc=None):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if cond():
                return
            if proc and self.procs[proc].poll() is not None:
                raise SlurmError("%s exited with %d while waiting for %s:\n%s"
                                 % (proc, self.procs[proc].returncode, what, self.logs()))
            time.sleep(0.05)
        raise SlurmError("timed out after %.0f s waiting for %s:\n%s" % (timeout, what, self.logs()))

    def _wait_idle(self):
        def idle():
            for name in ("slurmctld", "slurmd"):
                if self.procs[name].poll() is not None:
                    raise SlurmError("%s exited with %d during start-up:\n%s"
                                     % (name, self.procs[name].returncode, self.logs()))
            r = self.run(["sinfo", "-h", "-n", self.node, "-o", "%t"], check=False)
            return r.returncode == 0 and r.stdout.strip() in ("idle", "mix", "alloc")
        self._wait(idle, self.startup_timeout, f"node {self.node} to be idle")

    def logs(self, tail=40):
        """The tails of the daemons' logs, for failure messages."""
        if not self.dir:
            return ""
        out = []
        for name in ("munged.out", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"):
            p = os.path.join(self.dir, "log", name)
            try:
                with open(p, errors="replace") as f:
                    lines = f.read().splitlines()[-tail:]
            except OSError:
                continue
            if lines:
                out.append(f"--- {name}\n" + "\n".join(lines))
        return "\n".join(out)

    # -- clients ------------------------------------------------------------

    def env(self, extra=None):
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("SLURM_"):
                del env[k]
        env["SLURM_CONF"] = self.conf
        if extra:
            env.update(extra)
        return env

    def run(self, argv, check=True, env=None, user=None, timeout=60, input=None):
        """Runs a Slurm client command against this cluster (as user, if given)."""
        argv = [_find(argv[0]) or argv[0], *argv[1:]]
        preexec = None
        if user is not None:
            pw = pwd.getpwnam(user) if isinstance(user, str) else pwd.getpwuid(user)

            def preexec():
                os.setgid(pw.pw_gid)
                os.setgroups([])
                os.setuid(pw.pw_uid)
        r = subprocess.run(argv, env=self.env(env), capture_output=True, text=True,
                           timeout=timeout, preexec_fn=preexec, input=input, close_fds=True)
        if check and r.returncode != 0:
            raise SlurmError("%s failed (%d): %s\n%s" % (shlex.join(argv), r.returncode,
                                                       r.stderr.strip(), self.logs()))
        return r

    def sbatch(self, script, args=(), env=None, user=None, wait=False, timeout=120):
        """Submits a batch script (its text); returns the job id as a string.
        With wait=True, returns only once the job finished (sbatch --wait)."""
        d = self.workdir()
        fd, path = tempfile.mkstemp(prefix="job-", suffix=".sh", dir=d)
        with os.fdopen(fd, "w") as f:
            f.write(script)
        os.chmod(path, 0o755)
        argv = ["sbatch", "--parsable", f"--chdir={d}", f"--output={d}/slurm-%j.out", *args]
        if wait:
            argv.append("--wait")
        argv.append(path)
        r = self.run(argv, env=env, user=user, timeout=timeout, check=not wait)
        job = r.stdout.strip().split(";")[0]
        if not re.fullmatch(r"[0-9]+", job):
            raise SlurmError("sbatch printed no job id: %r %r\n%s" % (r.stdout, r.stderr, self.logs()))
        return job

    def srun(self, argv, args=(), env=None, user=None, timeout=120):
        """Runs argv as a job of its own (srun outside an allocation) and
        returns the CompletedProcess once it finished."""
        return self.run(["srun", f"--chdir={self.workdir()}", *args, *argv], env=env, user=user,
                        timeout=timeout)

    def workdir(self):
        """A directory every job's user can write to (job scripts and output)."""
        d = os.path.join(self.dir, "jobs")
        os.makedirs(d, exist_ok=True)
        os.chmod(d, 0o1777)
        return d

    def output(self, job):
        """The job's output file, or (when the job never ran far enough to
        write one) a note and the daemons' logs, for failure messages."""
        try:
            with open(os.path.join(self.workdir(), f"slurm-{job}.out"), errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return f"(job {job} wrote no output file)\n{self.logs()}"

    def show_job(self, job):
        """'scontrol show job' as a dict (JobState, UserId, Partition, ...)."""
        r = self.run(["scontrol", "-o", "show", "job", str(job)])
        return _kv(r.stdout.splitlines()[0])

    def job_state(self, job):
        return self.show_job(job).get("JobState", "")

    def wait_state(self, job, states, timeout=60):
        """Waits until the job is in one of states (a name or a tuple)."""
        if isinstance(states, str):
            states = (states,)
        last = [None]

        def reached():
            last[0] = self.job_state(job)
            if last[0] in states:
                return True
            if last[0] in TERMINAL_STATES:
                raise SlurmError("job %s ended in %s while waiting for %s:\n%s"
                                 % (job, last[0], "/".join(states), self.logs()))
            return False
        self._wait(reached, timeout, f"job {job} to reach {'/'.join(states)}")
        return last[0]

    def wait_done(self, job, timeout=60):
        return self.wait_state(job, TERMINAL_STATES, timeout)

    def steps(self, job):
        """The job's running steps as seen by the controller, e.g. ['batch', '0']."""
        r = self.run(["squeue", "-h", "-s", "-j", str(job), "-o", "%i"], check=False)
        return [s.split(".", 1)[1] for s in r.stdout.split() if "." in s]

    def cancel(self, job):
        self.run(["scancel", str(job)], check=False)
