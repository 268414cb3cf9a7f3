#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Exact counts per job, with nothing running at context switches: from
the jobs' cgroup v2 directories (lmkd's job-counters.c, the way of
hardware counters), and from the threads' own figures (the way of
task-clock and page-faults, which open no per-job event at all).

Slurm's cgroup/v2 plugin puts each job in …/slurmstepd.scope/job_<id>. The
Slurm of these tests runs in cgroup v1 or linuxproc mode, so the test makes
such directories itself in the unified hierarchy and moves its workloads
into them, as slurmstepd would. Two jobs: one whose directory exists before
lmkd starts (found by lmkd's scan), one made while lmkd runs (found by the
kernel's cgroup record); both run at once on one CPU, so the kernel keeps
switching between their cgroups there.

This VM has no hardware counters: task-clock stands in for cycles and
page-faults for instructions, counted through the cgroups' perf events
with LMK_THREAD_FIELDS=0 as hardware counters would be. Referee: the
kernel's rusage of each workload (wait4), less what the process had used
before it entered its job's cgroup. After the jobs' directories are
removed, lmkd must close the events it held on them: the kernel's count of
dying cgroups returns to 0.

Then the same jobs with task-clock and page-faults kept by the threads:
the counts come from the threads (the exact totals), no event is opened on
any cgroup, and the referee is each workload's whole rusage (a process is
its job's from its start). Last, lmkd's default (--job-counters no) with
the hardware-like counters: no event on any cgroup, exact CPU time per job
still, and no exact counts.
"""
import os
import resource
import signal
import subprocess
import sys
import time

from lmktest import (StealMeter, build_path, check, load_json, log, require_bpf, skip, tmpdir, wait_ready)

CGROUP2_SUPER_MAGIC = 0x63677270
JOBS = ("917301", "917302")


def cgroup2_root():
    for path in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        r = subprocess.run(["stat", "-f", "-c", "%t", path], capture_output=True, text=True)
        if r.returncode == 0 and int(r.stdout.strip(), 16) == CGROUP2_SUPER_MAGIC:
            return path
    return None


def cgroup_stat(path):
    with open(os.path.join(path, "cgroup.stat")) as f:
        return {k: int(v) for k, v in (line.split() for line in f)}


def perf_fds(pid):
    """How many perf events the process holds open."""
    n = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            n += os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[perf_event]"
        except OSError:
            pass
    return n


def start_in_cgroup(cgroup, argv):
    """Forks a process that moves itself into cgroup, notes its rusage at
    that moment and execs argv. Returns (pid, rusage before the move)."""
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(rfd)
            with open(os.path.join(cgroup, "cgroup.procs"), "w") as f:
                f.write("0")
            ru = resource.getrusage(resource.RUSAGE_SELF)
            os.write(wfd, f"{ru.ru_utime + ru.ru_stime} {ru.ru_minflt + ru.ru_majflt}\n".encode())
            os.close(wfd)
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    os.close(wfd)
    with os.fdopen(rfd) as f:
        cpu, faults = f.read().split()
    return pid, (float(cpu), int(faults))


def run(root, thread_fields, job_counters=True):
    """The two jobs under lmkd (--job-counters yes, else its default);
    returns its report, the referee's figures per job and the dying
    cgroups left after the jobs' removal."""
    base = os.path.join(root, f"lmk-test-{os.getpid()}")
    scope = os.path.join(base, "slurmstepd.scope")
    dirs = {j: os.path.join(scope, f"job_{j}") for j in JOBS}
    d = tmpdir()
    out, ready = os.path.join(d, "lmkd.json"), os.path.join(d, "ready")
    lmkd = None
    try:
        try:
            os.makedirs(os.path.join(dirs[JOBS[0]], "step_0"))
        except OSError as e:
            skip(f"cannot make a cgroup in {root}: {e}")
        errf = open(os.path.join(d, "lmkd.err"), "w+")
        # --quiet-poll-ms 1000: lmkd learns of a cgroup made and closes the
        # events of one removed at a drain of its rings; on a quiet node
        # (no new process, no job notice, as after this test's rmdir) that
        # is every 30 s by default, and the test times both in seconds
        lmkd = subprocess.Popen([build_path("daemon", "lmkd"), "-F", "99", "-o", out, "--ready-file", ready,
                                 "--quiet-poll-ms", "1000",
                                 "--events", "cycles=task-clock,instructions=page-faults"] +
                                (["--job-counters", "yes"] if job_counters else []),
                                stderr=errf, text=True,
                                env={**os.environ, "LMK_THREAD_FIELDS": "1" if thread_fields else "0"})
        wait_ready(ready, proc=lmkd)
        os.makedirs(os.path.join(dirs[JOBS[1]], "step_0"))
        time.sleep(1.5)  # lmkd reads the second job's cgroup record at its next tick

        steal = StealMeter().start()
        work = build_path("tests", "sampler", "lmk-workload")
        runs = {}
        for j, secs in zip(JOBS, ("3", "2")):
            runs[j] = start_in_cgroup(os.path.join(dirs[j], "step_0"), ["taskset", "-c", "0", work, "1", secs])
        time.sleep(0.5)
        with_jobs = perf_fds(lmkd.pid)
        truth = {}
        for j, (pid, before) in runs.items():
            _, status, ru = os.wait4(pid, 0)
            check(os.waitstatus_to_exitcode(status) == 0, f"job {j}'s workload failed")
            if thread_fields or not job_counters:
                truth[j] = ((ru.ru_utime + ru.ru_stime) * 1e9, ru.ru_minflt + ru.ru_majflt)
            else:
                truth[j] = ((ru.ru_utime + ru.ru_stime - before[0]) * 1e9, ru.ru_minflt + ru.ru_majflt - before[1])
        stolen = steal.share()

        # The jobs end: Slurm removes their directories. lmkd's events hold
        # each cgroup in the kernel (dying) until it closes them.
        for j in JOBS:
            os.rmdir(os.path.join(dirs[j], "step_0"))
            os.rmdir(dirs[j])
        dying = cgroup_stat(base)["nr_dying_descendants"]
        end = time.monotonic() + 15
        while cgroup_stat(base)["nr_dying_descendants"] > 0 and time.monotonic() < end:
            time.sleep(0.2)
        left = cgroup_stat(base)["nr_dying_descendants"]
        log(f"dying cgroups below the test's: {dying} right after rmdir, {left} later")
        time.sleep(1)
        without = perf_fds(lmkd.pid)
        log(f"lmkd's perf events: {with_jobs} while the jobs ran, {without} after")

        lmkd.send_signal(signal.SIGINT)
        lmkd.wait(timeout=60)
        errf.seek(0)
        err = errf.read()
        lmkd_rc, lmkd = lmkd.returncode, None
        check(lmkd_rc == 0, f"lmkd exited with {lmkd_rc}: {err}")
    finally:
        if lmkd:
            lmkd.kill()
            lmkd.wait()
        for j in JOBS:
            for p in (os.path.join(dirs[j], "step_0"), dirs[j]):
                if os.path.isdir(p):
                    os.rmdir(p)
        for p in (scope, base):
            if os.path.isdir(p):
                os.rmdir(p)

    return load_json(out), truth, stolen, with_jobs - without, left


def check_jobs(rep, truth, stolen, counted=True):
    check(not rep["switch_program"], "a program ran at context switches")
    for how, j in (("found at start", JOBS[0]), ("made while lmkd ran", JOBS[1])):
        rows = [x for x in rep["jobs"] if x["job"] == j]
        check(len(rows) == 1, f"job {j} ({how}): expected one jobs[] entry, got {rows}")
        x = rows[0]
        cpu_ns, faults = truth[j]
        log(f"job {j} ({how}): rusage {cpu_ns / 1e9:.4f} s, {faults} faults; lmkd: cpu_time_ns "
            f"{(x['cpu_time_ns'] or 0) / 1e9:.4f} s, task-clock {(x['cycles'] or 0) / 1e9:.4f} s, "
            f"page-faults {x['instructions']}")
        check(abs(x["cpu_time_ns"] - cpu_ns) <= 0.02 * cpu_ns, f"job {j}: cpu_time_ns {x['cpu_time_ns']} vs {cpu_ns:.0f}")
        check(x["ended"], f"job {j}: its cgroup is gone but it is not ended")
        if not counted:
            check(x["cycles"] is None and x["instructions"] is None,
                  f"job {j}: exact counts of hardware-like counters without --job-counters: {x}")
            continue
        check(x["cycles"] is not None and x["instructions"] is not None, f"job {j}: no exact counts: {x}")
        # task-clock includes time the hypervisor stole while the task ran;
        # rusage leaves it out (see test-counters.py)
        hi = 0.02 + 2 * stolen
        check(-0.02 * cpu_ns <= x["cycles"] - cpu_ns <= hi * cpu_ns,
              f"job {j}: task-clock {x['cycles']} vs rusage {cpu_ns:.0f} (bounds -2%, +{100 * hi:.1f}%)")
        check(abs(x["instructions"] - faults) <= max(0.02 * faults, 20),
              f"job {j}: page-faults {x['instructions']} vs rusage {faults}")


def main():
    require_bpf()
    root = cgroup2_root()
    if not root:
        skip("no cgroup v2 (unified) hierarchy under /sys/fs/cgroup")

    log("== counted through the jobs' cgroups (LMK_THREAD_FIELDS=0)")
    rep, truth, stolen, job_fds, left = run(root, thread_fields=False)
    want = len(JOBS) * 2 * len(os.sched_getaffinity(0))
    check(job_fds == want, f"lmkd held {job_fds} perf events for the jobs, not {want} (2 counters on every CPU)")
    check(left == 0, f"{left} job cgroups still held after their removal: lmkd did not close their events")
    check_jobs(rep, truth, stolen)

    log("== counted from the threads (software counters, even with --job-counters yes)")
    rep, truth, stolen, job_fds, left = run(root, thread_fields=True)
    check(job_fds == 0, f"lmkd opened {job_fds} perf events for the jobs: their counters need none")
    check(left == 0, f"{left} job cgroups still held after their removal")
    check_jobs(rep, truth, stolen)

    # By default no job pays for perf's hooks at its switches: counters the
    # threads do not keep (hardware ones) have no exact per-job counts.
    log("== lmkd's default (--job-counters no) with hardware-like counters (LMK_THREAD_FIELDS=0)")
    rep, truth, stolen, job_fds, left = run(root, thread_fields=False, job_counters=False)
    check(job_fds == 0, f"lmkd opened {job_fds} perf events for the jobs by default")
    check(left == 0, f"{left} job cgroups still held after their removal")
    check_jobs(rep, truth, stolen, counted=False)
    log("PASS")


if __name__ == "__main__":
    sys.exit(main())
