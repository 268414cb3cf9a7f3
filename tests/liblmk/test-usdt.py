#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""test-usdt.py LIBLMK: liblmk.so carries the stapsdt notes lmkd attaches
to: lmk:init (3 arguments), lmk:region (3), lmk:region_off (2)."""
import subprocess
import sys

from lmktest import check, log, which, skip

EXPECTED = {"init": 3, "region": 3, "region_off": 2}


def main():
    lib = sys.argv[1]
    if not which("readelf"):
        skip("binutils (readelf) not installed")
    notes = subprocess.run(["readelf", "-n", lib], check=True, capture_output=True, text=True).stdout

    probes = {}
    provider = name = None
    for line in notes.splitlines():
        line = line.strip()
        if line.startswith("Provider:"):
            provider = line.split(":", 1)[1].strip()
        elif line.startswith("Name:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("Arguments:") and provider is not None:
            args = line.split(":", 1)[1].split()
            check(provider == "lmk", f"probe {provider}:{name} is not of provider lmk")
            probes.setdefault(name, set()).add(len(args))
            provider = name = None
    log("probes:", probes)
    for probe, nargs in EXPECTED.items():
        check(probe in probes, f"no stapsdt note for lmk:{probe}")
        check(probes[probe] == {nargs}, f"lmk:{probe} has {probes[probe]} arguments, expected {nargs}")
    check(set(probes) == set(EXPECTED), f"unexpected probes: {set(probes) - set(EXPECTED)}")
    log("ok")


main()
