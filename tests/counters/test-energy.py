#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""lmkd reads energy from a fake powercap tree (--powercap-root) and gives
it to the jobs on the node.

The tree has package-0, whose counter is one joule short of its wrap, and
its DRAM zone. While lmkd runs, the test moves the counters on: 5 J with no
job on the node, 10 J while job 901 (started and ended by Prolog/Epilog
notices on lmkd's socket) is alone there, and 3 J after it ended. The
report must hold 18 J for the node (the wrap undone), 16.2 J in the
package and 1.8 J in DRAM, 8 J unattributed, and 10 J for the job, all of
them while it was alone. Then: without zones, lmkd says "Energy:
unavailable" once and sends no energy.
"""
import os
import signal
import socket
import subprocess
import time

from lmktest import build_path, check, load_json, log, require_bpf, tmpdir, wait_ready

MAX_UJ = 262143328850


class Tree:
    def __init__(self, root):
        self.root = root
        self.uj = {"intel-rapl:0": MAX_UJ - 1_000_000, "intel-rapl:0:0": 0}
        for zone, name in (("intel-rapl:0", "package-0"), ("intel-rapl:0:0", "dram"),
                           ("intel-rapl:1", "psys")):
            os.makedirs(os.path.join(root, zone))
            self.put(zone, "name", name)
            self.put(zone, "max_energy_range_uj", MAX_UJ)
        self.put("intel-rapl:1", "energy_uj", 5)
        self.use(0)

    def put(self, zone, f, v):
        with open(os.path.join(self.root, zone, f), "w") as out:
            out.write(f"{v}\n")

    def use(self, joules):
        """The node uses joules, 9/10 in the package and 1/10 in DRAM."""
        for zone, part in (("intel-rapl:0", 0.9), ("intel-rapl:0:0", 0.1)):
            self.uj[zone] = (self.uj[zone] + round(joules * part * 1e6)) % MAX_UJ
            self.put(zone, "energy_uj", self.uj[zone])


def notice(sock, text):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.sendto(text.encode(), sock)
    s.close()


def near(a, b):
    return a is not None and abs(a - b) < 1e-6


def main():
    require_bpf()
    d = tmpdir()
    root = os.path.join(d, "powercap")
    tree = Tree(root)
    sock = os.path.join(d, "lmkd.sock")
    out = os.path.join(d, "lmkd.json")
    ready = os.path.join(d, "ready")
    lmkd = subprocess.Popen([build_path("daemon", "lmkd"), "-F", "10", "--events", "none",
                             "--powercap-root", root, "--notify-socket", sock, "--poll-ms", "200",
                             "-o", out, "--ready-file", ready], stderr=subprocess.PIPE, text=True)
    try:
        wait_ready(ready, proc=lmkd)
        # each notice drains lmkd's rings and reads the counters first: what came
        # before it is the jobs' before it, however long lmkd's quiet poll
        tree.use(5)
        time.sleep(1)
        notice(sock, "LMK1 job-start job=901 uid=0 user=root\n")
        time.sleep(1)
        tree.use(10)
        time.sleep(1)
        notice(sock, "LMK1 job-end job=901 uid=0\n")
        time.sleep(1)
        tree.use(3)
        time.sleep(1)
    finally:
        lmkd.send_signal(signal.SIGINT)
        err = lmkd.communicate(timeout=60)[1]
    check(lmkd.returncode == 0, f"lmkd exited with {lmkd.returncode}: {err}")
    said = [line for line in err.splitlines() if "Energy:" in line]
    check(len(said) == 1 and f"RAPL through powercap under {root}, 2 zones (package-0, package-0/dram)" in said[0],
          f"lmkd's word on energy: {said}")
    rep = load_json(out)
    e = rep.get("energy")
    log(f"energy: {e}")
    check(e and e["source"] == "powercap", f"no energy in the report: {e}")
    zones = {z["zone"]: z for z in e["zones"]}
    check(near(e["joules"], 18), f"node energy {e['joules']} J, expected 18 J (the wrap undone)")
    check(near(zones["package-0"]["joules"], 16.2) and zones["package-0"]["kind"] == "package",
          f"package zone: {zones.get('package-0')}")
    check(near(zones["package-0/dram"]["joules"], 1.8) and zones["package-0/dram"]["kind"] == "dram",
          f"dram zone: {zones.get('package-0/dram')}")
    check(set(zones) == {"package-0", "package-0/dram"}, f"zones: {sorted(zones)} (psys is no zone of its own)")
    check(near(e["unattributed_joules"], 8), f"unattributed {e['unattributed_joules']} J, expected 8 J")
    jobs = {j["job"]: j for j in rep["jobs"]}
    check("901" in jobs, f"job 901 not in the report: {sorted(jobs)}")
    j = jobs["901"]
    log(f"job 901: {j.get('energy_joules')} J, alone {j.get('energy_alone_joules')} J")
    check(near(j.get("energy_joules"), 10) and near(j.get("energy_alone_joules"), 10),
          f"job 901: {j.get('energy_joules')} J ({j.get('energy_alone_joules')} J alone), expected 10 J alone")

    # no zones: said once, no energy in the report
    empty = os.path.join(d, "empty")
    os.mkdir(empty)
    p = subprocess.run([build_path("daemon", "lmkd"), "-F", "1", "-d", "1", "--events", "none",
                        "--notify-socket", "none", "--powercap-root", empty, "-o", out],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 0, f"lmkd without zones exited with {p.returncode}: {p.stderr}")
    said = [line for line in p.stderr.splitlines() if "Energy:" in line]
    check(len(said) == 1 and f"Energy: unavailable (no powercap zones under {empty}, " in said[0],
          f"lmkd's word without zones: {said}")
    check("energy" not in load_json(out), "a report without zones has energy")
    log(said[0])


if __name__ == "__main__":
    main()
