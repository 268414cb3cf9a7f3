#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A CPU goes offline and comes back while lmkd samples.

lmkd must stop sampling the CPU, count no idle time for it while it is
away, and sample it again when it returns: a workload pinned to that CPU
afterwards is seen, and the sample total matches the CPUs' online time.

Taking a CPU offline removes it from every cgroup v1 cpuset but the root,
and bringing it back does not return it; the test puts back what it took,
so later tests (Slurm's task/cgroup) find the machine as it was.
"""
import os
import signal
import subprocess
import time

from lmktest import build_path, check, lmkd_oneshot, load_json, log, ncpus, require_bpf, skip, tmpdir, wait_ready

HZ = 99
CPU = "/sys/devices/system/cpu/cpu1/online"


def set_online(v):
    with open(CPU, "w") as f:
        f.write(str(v))


CPUSET_V1 = "/sys/fs/cgroup/cpuset"


def cpusets():
    """Every cgroup v1 cpuset's directory and CPU list, parents first."""
    out = []
    if not os.path.exists(os.path.join(CPUSET_V1, "cpuset.cpus")):
        return out
    for root, _, files in os.walk(CPUSET_V1):
        if "cpuset.cpus" in files:
            try:
                with open(os.path.join(root, "cpuset.cpus")) as f:
                    out.append((root, f.read().strip()))
            except OSError:
                pass
    return out


def restore_cpusets(saved):
    for d, cpus in saved:
        if d == CPUSET_V1:
            continue  # the root follows the online CPUs by itself
        try:
            with open(os.path.join(d, "cpuset.cpus"), "w") as f:
                f.write(cpus)
        except FileNotFoundError:
            pass  # removed meanwhile by its owner
        except OSError as e:
            log(f"could not give {d} back its CPUs {cpus}: {e}")


def main():
    require_bpf()
    if ncpus() < 2 or not os.path.exists(CPU):
        skip("needs a second CPU that can go offline (/sys/devices/system/cpu/cpu1/online)")
    try:
        set_online(1)
    except OSError as e:
        skip(f"CPU hotplug is not allowed here: {e}")
    saved = cpusets()
    d = tmpdir()
    out, ready = os.path.join(d, "lmkd.json"), os.path.join(d, "ready")
    # lmkd looks at the online CPUs when it drains its rings: every second
    # here, as while new processes run (a quiet node: every --quiet-poll-ms)
    lmkd = lmkd_oneshot(HZ, None, out, extra=["--ready-file", ready, "--events", "none", "--quiet-poll-ms", "1000"])
    wait_ready(ready, proc=lmkd)
    t0 = time.monotonic()
    try:
        time.sleep(2)
        try:
            set_online(0)
        except OSError as e:
            skip(f"CPU 1 cannot go offline here: {e}")
        t_off = time.monotonic()
        time.sleep(4)
        set_online(1)
        t_on = time.monotonic()
        time.sleep(2.5)  # lmkd notices within its 1 s tick
        subprocess.run(["taskset", "-c", "1", build_path("tests", "sampler", "lmk-workload"), "1", "2"],
                       check=True, stdout=subprocess.DEVNULL)
    finally:
        set_online(1)
        restore_cpusets(saved)
        lmkd.send_signal(signal.SIGINT)
        lmkd.wait(timeout=60)
    t_end = time.monotonic()
    rep = load_json(out)
    online_s = 2 * (t_end - t0) - (t_on - t_off)
    expected = online_s * HZ
    pinned = sum(r["samples"] for r in rep["rows"] if r["comm"] == "lmk-workload")
    log(f"samples {rep['samples_total']}, expected about {expected:.0f} for {online_s:.1f} CPU-seconds online; "
        f"workload on the returned CPU: {pinned}")
    check(pinned >= 0.8 * 2 * HZ, f"the CPU that came back is not sampled: {pinned} workload samples")
    check(abs(rep["samples_total"] - expected) <= 0.06 * expected + 2 * HZ,
          f"{rep['samples_total']} samples for {online_s:.1f} CPU-seconds online")
    log("PASS")


if __name__ == "__main__":
    main()
