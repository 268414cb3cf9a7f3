# SPDX-License-Identifier: GPL-2.0-or-later
"""What the function tests share: lmkd (one-shot report) and `perf record -a
-F 199 -e cpu-clock` on the same run, and the shares of a workload's
functions from each.

lmkd samples at HZ (997 Hz: lmk's default 1 Hz gives too few samples per
run for shares within 2 percentage points), perf at the 199 Hz of the
issue. A workload runs as a job lmkd is told of the way root's Prolog
tells it (lmktest.job_notice()), so that its functions are its own:
lmkd's functions[] are per (job, step, object, phase), without a command.
perf's report is read with `--sort comm,dso,sym` and filtered by command
here (perf 6.1's --comms drops kernel samples).
"""
import bisect
import os
import re
import select
import signal
import subprocess
import time

from lmktest import check, fail, job_notice, load_json, lmkd_oneshot, log, report_functions, tmpdir, wait_ready

HZ = 997
PERF_HZ = 199
TOLERANCE = 2.0         # percentage points
TOP = 10
OTHER = "(other functions)"


class Run:
    """lmkd and perf record, both sampling, until stop()."""

    def __init__(self, d=None, extra=(), perf=True, lmkd=True):
        """lmkd=False: perf alone, beside an lmkd of the caller's."""
        self.d = d or tmpdir("lmk-functions-")
        os.makedirs(self.d, exist_ok=True)
        self.out = os.path.join(self.d, "lmkd.json")
        self.sock = os.path.join(self.d, "lmkd.sock")
        self.perf_data = os.path.join(self.d, "perf.data")
        self.lmkd = None
        if lmkd:
            ready = os.path.join(self.d, "ready")
            args = ["--ready-file", ready, "--notify-socket", self.sock, *extra]
            self.lmkd = lmkd_oneshot(HZ, None, self.out, extra=args)
            wait_ready(ready, proc=self.lmkd)
        self.perf = self._start_perf() if perf else None

    def _start_perf(self):
        """perf record with its events enabled once it has read /proc:
        its 'ack' on the control fifo says it samples."""
        ctl, ack = os.path.join(self.d, "ctl"), os.path.join(self.d, "ack")
        os.mkfifo(ctl)
        os.mkfifo(ack)
        ackfd = os.open(ack, os.O_RDONLY | os.O_NONBLOCK)
        self.perf_err = open(os.path.join(self.d, "perf.err"), "wb")
        p = subprocess.Popen(["perf", "record", "-a", "-F", str(PERF_HZ), "-e", "cpu-clock", "-o", self.perf_data,
                              "-q", "-D", "-1", f"--control=fifo:{ctl},{ack}"],
                             stdout=subprocess.DEVNULL, stderr=self.perf_err)
        try:
            end = time.monotonic() + 60
            ctlfd = None
            while ctlfd is None:
                try:
                    ctlfd = os.open(ctl, os.O_WRONLY | os.O_NONBLOCK)
                except OSError:
                    check(p.poll() is None and time.monotonic() < end, "perf record did not open its control fifo")
                    time.sleep(0.02)
            os.write(ctlfd, b"enable\n")
            os.close(ctlfd)
            got = bytearray()
            while b"ack" not in got:
                check(p.poll() is None and time.monotonic() < end, "perf record did not acknowledge 'enable'")
                if select.select([ackfd], [], [], 0.05)[0]:
                    got.extend(os.read(ackfd, 64))
        finally:
            os.close(ackfd)
        return p

    def stop(self):
        """Stops both; returns lmkd's report (None without lmkd)."""
        if self.perf:
            self.perf.send_signal(signal.SIGINT)
        if self.lmkd:
            self.lmkd.send_signal(signal.SIGINT)
            self.lmkd.wait(timeout=120)
            check(self.lmkd.returncode == 0, f"lmkd exited with {self.lmkd.returncode}")
        if self.perf:
            self.perf.wait(timeout=120)
            self.perf_err.close()
            check(self.perf.returncode in (0, -signal.SIGINT), f"perf record exited with {self.perf.returncode}")
        return load_json(self.out) if self.lmkd else None

    def notice(self, event, job):
        job_notice(self.sock, event, job)


def loads(path):
    """[(file offset, vaddr, filesz, executable)] of path's PT_LOAD segments (readelf -l)."""
    out = []
    for line in subprocess.run(["readelf", "-lW", path], capture_output=True, text=True,
                               check=True).stdout.splitlines():
        f = line.split()
        if f and f[0] == "LOAD":
            out.append((int(f[1], 16), int(f[2], 16), int(f[4], 16), "E" in f[6:-1]))
    return out


class Unwind:
    """An object's functions as its unwind table describes them, read by
    binutils (readelf --debug-dump=frames, its .eh_frame alone): the
    referee of lmkd's entries. at(offset) is the file offset where the
    function holding a file offset starts, or None where no FDE covers it."""

    def __init__(self, path):
        self.loads = loads(path)
        out = subprocess.run(["readelf", "--debug-dump=frames", path], capture_output=True, text=True).stdout
        eh = ""
        for part in out.split("Contents of the ")[1:]:
            if part.startswith(".eh_frame section"):
                eh = part
        fdes = sorted((int(a, 16), int(b, 16)) for a, b in re.findall(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", eh))
        self.starts = [s for s, _ in fdes]
        self.fdes = fdes

    def _load(self, x, by_vaddr):
        found = None
        for off, vaddr, filesz, ex in self.loads:
            base = vaddr if by_vaddr else off
            if base <= x < base + filesz and (found is None or (ex and not found[3])):
                found = (off, vaddr, filesz, ex)
        return found

    def at(self, offset):
        seg = self._load(offset, False)
        if not seg:
            return None
        v = offset - seg[0] + seg[1]
        i = bisect.bisect_right(self.starts, v) - 1
        if i < 0 or not self.fdes[i][0] <= v < self.fdes[i][1]:
            return None
        seg = self._load(self.fdes[i][0], True)
        return self.fdes[i][0] - seg[1] + seg[0] if seg else None


_unwind = {}


def unwind(path):
    if path not in _unwind:
        _unwind[path] = Unwind(path) if path and os.path.exists(path) else None
    return _unwind[path]


def perf_label(dso, sym, path=None):
    """perf's symbol as lmk names it: gfortran's module procedures as
    module::name; an address perf could not name (perf shows its file
    offset) as the start of the function that holds it where the object's
    unwind table has one (lmkd's "entry"), else as its 4 KiB page."""
    m = re.fullmatch(r"0x([0-9a-f]+)", sym)
    if m:
        off = int(m.group(1), 16)
        u = unwind(path)
        start = u.at(off) if u else None
        return f"entry 0x{start:x}" if start is not None else f"page 0x{off & ~0xfff:x}"
    m = re.fullmatch(r"__(\w+?)_MOD_(\w+)", sym)
    if m:
        return f"{m.group(1)}::{m.group(2)}"
    return sym


def perf_style(name):
    """A C++ name as lmk shows it (c++filt's) in perf 6.1's shorter form:
    no return type, parameters, qualifiers or clone suffix."""
    name = re.sub(r"( \[clone [^]]*\])+$", "", name)
    if not name.endswith(")") and not re.search(r"\) (const|volatile|&|&&)( (const|volatile|&|&&))*$", name):
        return name
    name = re.sub(r"( (const|volatile|&|&&))+$", "", name)
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(name[i], 0)
        if depth == 0:
            name = name[:i]
            break
    depth = 0
    for i in range(len(name) - 1, -1, -1):
        depth += {">": 1, "<": -1, ")": 1, "(": -1}.get(name[i], 0)
        if depth == 0 and name[i] == " ":
            return name[i + 1:]
    return name


def perf_report(perf_data, *args):
    """perf report's lines, the files read as lmkd reads them: only their
    own symbols. perf would also name functions from separate debug files
    (/usr/lib/debug, e.g. libc6-dbg's), which lmkd leaves to the store by
    build-id and page; so it sees the sampled files through a --symfs of
    links to them alone, and an empty build-id cache."""
    d = os.path.join(os.path.dirname(perf_data), "perf-view")
    if not os.path.isdir(d):
        symfs = os.path.join(d, "symfs")
        os.makedirs(os.path.join(d, "buildid"))
        out = subprocess.run(["perf", "buildid-list", "-i", perf_data, "--with-hits"], capture_output=True,
                             text=True, check=True).stdout
        for line in out.splitlines():
            path = line.split(None, 1)[1] if len(line.split(None, 1)) == 2 else ""
            if path.startswith("/") and os.path.exists(path):
                with open(os.path.join(d, "paths"), "a") as f:
                    f.write(path + "\n")
                os.makedirs(symfs + os.path.dirname(path), exist_ok=True)
                if not os.path.lexists(symfs + path):
                    os.symlink(path, symfs + path)
    env = dict(os.environ, PERF_BUILDID_DIR=os.path.join(d, "buildid"))
    return subprocess.run(["perf", "report", "-i", perf_data, "--symfs", os.path.join(d, "symfs"), "--stdio",
                           "-n", "-q", "--field-separator", "\x1f", *args],
                          capture_output=True, text=True, check=True, env=env).stdout.splitlines()


def sampled_paths(perf_data):
    """{basename: path} of the files perf sampled (perf buildid-list)."""
    paths = {}
    try:
        with open(os.path.join(os.path.dirname(perf_data), "perf-view", "paths")) as f:
            for path in f.read().split():
                paths.setdefault(os.path.basename(path), path)
    except FileNotFoundError:
        pass
    return paths


def perf_shares(perf_data, comms):
    """{(dso, label): samples} of the commands comms, user space only, and
    all their samples (kernel too), from perf report --sort comm,dso,sym."""
    out = "\n".join(perf_report(perf_data, "--sort", "comm,dso,sym"))
    paths = sampled_paths(perf_data)
    funcs, total = {}, 0
    for line in out.splitlines():
        parts = [p.strip() for p in line.split("\x1f")]
        if len(parts) < 5 or parts[2] not in comms:
            continue
        n = int(parts[1])
        total += n
        dso, sym = os.path.basename(parts[3]), parts[4]
        if not sym.startswith("[.] "):
            continue            # [k]: the kernel, which lmk does not name
        key = (dso, perf_label(dso, sym[4:].strip(), paths.get(dso)))
        funcs[key] = funcs.get(key, 0) + n
    return funcs, total


def lmk_shares(rep, job, comms):
    """{(object, label): samples} of job's functions (C++ names in perf's
    form), and the samples of its rows of the commands comms (all kinds)."""
    total = sum(r["samples"] for r in rep["rows"] if r["job"] == job and r["comm"] in comms)
    funcs = {}
    for f in report_functions(rep):
        if f["job"] != job:
            continue
        if f["other"]:
            label = OTHER
        elif f["function"] is not None:
            label = perf_style(f["function"])
        elif f.get("entry"):
            label = f"entry 0x{f['offset']:x}"
        else:
            label = f"page 0x{f['offset']:x}"
        key = (os.path.basename(f["object"]), label)
        funcs[key] = funcs.get(key, 0) + f["samples"]
    return funcs, total


def compare(rep, perf_data, job, comms, min_perf=4000):
    """The top functions of lmkd and of perf within TOLERANCE of each
    other's shares; returns lmk's functions and their total."""
    lf, lt = lmk_shares(rep, job, comms)
    pf, pt = perf_shares(perf_data, comms)
    log(f"lmkd: {lt} samples of {comms} in job {job}; perf: {pt} samples")
    check(lt > 0, f"lmkd has no samples of {comms} in job {job}")
    check(pt >= min_perf, f"perf has only {pt} samples of {comms}, need {min_perf} for 2-point shares")
    ls = {k: 100.0 * v / lt for k, v in lf.items()}
    ps = {k: 100.0 * v / pt for k, v in pf.items()}
    top_l = [k for k in sorted(ls, key=ls.get, reverse=True) if k[1] != OTHER][:TOP]
    top_p = sorted(ps, key=ps.get, reverse=True)[:TOP]
    bad = []
    log(f"{'lmkd':>7} {'perf':>7}  object / function")
    for k in sorted(set(top_l) | set(top_p), key=lambda k: -max(ls.get(k, 0), ps.get(k, 0))):
        a, b = ls.get(k, 0.0), ps.get(k, 0.0)
        mark = "" if abs(a - b) <= TOLERANCE else "   <-- off"
        log(f"{a:6.2f}% {b:6.2f}%  {k[0]} / {k[1]}{mark}")
        if mark:
            bad.append(f"{k[0]} {k[1]}: lmkd {a:.2f}% perf {b:.2f}%")
    other = sum(v for k, v in ls.items() if k[1] == OTHER)
    log(f"lmkd's \"{OTHER}\": {other:.2f}%")
    if bad:
        fail("shares more than %.1f points from perf's: %s" % (TOLERANCE, "; ".join(bad)))
    return lf, lt


def check_named(rep, job, obj_basename, at_least=99.0):
    """Of the job's samples in the object (a file with symbols), the share
    a function was named for."""
    fs = [f for f in report_functions(rep) if f["job"] == job and os.path.basename(f["object"]) == obj_basename]
    total = sum(f["samples"] for f in fs)
    named = sum(f["samples"] for f in fs if f["function"] is not None)
    check(total > 0, f"no functions of {obj_basename} in job {job}")
    share = 100.0 * named / total
    log(f"{obj_basename}: {share:.2f}% of {total} samples named")
    check(share >= at_least, f"only {share:.2f}% of the samples in {obj_basename} named (want >= {at_least}%)")
