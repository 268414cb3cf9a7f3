#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""test-abi.py LIBLMK: liblmk.so exports exactly its ABI, all lmk_*, under
the soname liblmk.so.1, with lmk_tls a TLS symbol and lmk_abi 72 bytes."""
import subprocess
import sys

from lmktest import check, fail, log, which, skip

ABI = {
    "lmk_tls", "lmk_abi",
    "lmk_site_register", "lmk_site_begin", "lmk_site_end", "lmk_region_state",
    "lmk__begin_slow", "lmk__end_slow",
}


def run(*cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def main():
    lib = sys.argv[1]
    if not which("nm") or not which("readelf"):
        skip("binutils (nm, readelf) not installed")

    exported = set()
    for line in run("nm", "-D", "--defined-only", lib).splitlines():
        fields = line.split()
        if len(fields) != 3:
            continue
        kind, name = fields[1], fields[2].split("@")[0]
        if kind == "A":         # the version node LMK_1
            continue
        exported.add(name)
    log("exported:", " ".join(sorted(exported)))
    stray = sorted(n for n in exported if not n.startswith("lmk_"))
    check(not stray, f"symbols outside lmk_*: {stray}")
    check(exported == ABI, f"exported {sorted(exported)}, ABI is {sorted(ABI)}")

    dynamic = run("readelf", "-d", lib)
    check("Library soname: [liblmk.so.1]" in dynamic, f"soname is not liblmk.so.1:\n{dynamic}")

    syms = {}
    for line in run("readelf", "-W", "--dyn-syms", lib).splitlines():
        f = line.split()
        if len(f) >= 8 and f[7].split("@")[0] in ABI and f[6] != "UND":
            syms[f[7].split("@")[0]] = (f[2], f[3], f[5])
    check(syms.get("lmk_tls", ("",))[1] == "TLS", f"lmk_tls is not a TLS symbol: {syms.get('lmk_tls')}")
    check(syms.get("lmk_tls", ("",))[0] == "72", f"lmk_tls is not 72 bytes: {syms.get('lmk_tls')}")
    check(syms.get("lmk_abi", ("",))[0] == "72", f"lmk_abi is not 72 bytes: {syms.get('lmk_abi')}")
    for name, (size, kind, vis) in syms.items():
        if vis != "DEFAULT":
            fail(f"{name} has visibility {vis}")
    log("ok")


main()
