#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Installed software and its use: nodes push their inventory
(docs/inventory.md) inside a batch; /api/v1/packages sums the samples of
each package's files over a range, counts the nodes it is on, says when it
was last used, and with unused=true lists what no sample touched;
/api/v1/families sums time per library family. A node's new inventory
replaces its old one; the same one again changes nothing; a malformed one
is refused whole (400 naming the field) and stores nothing. `lmk unused`
and `lmk top --families/--packages` print the same."""
import copy
import subprocess

from lmktest import build_path, fail, log
from storetest import START, Store, check_eq, make_batch, row

BLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblasp-r0.3.21.so"
FFTW = "/usr/lib/x86_64-linux-gnu/libfftw3.so.3.6.10"
GMX = "/opt/spack/opt/spack/linux/gcc-12/gromacs-2023.1-abcdef/bin/gmx_mpi"
TOOL = "/opt/bigtool-2.0/bin/bigtool"
LIBC = "/usr/lib64/libc.so.6"
MPI = "/apps/openmpi/4.1.5/lib/libmpi.so.40"

INVENTORY = {
    "format": "lmk-inventory", "version": 1, "digest": "a" * 64,
    "packages": [
        {"manager": "debian", "name": "libfftw3-double3", "version": "3.3.10-1", "arch": "amd64",
         "size": 3000000, "files": [FFTW]},
        {"manager": "debian", "name": "libopenblas0-pthread", "version": "0.3.21+ds-4", "arch": "amd64",
         "size": 44000000, "files": [BLAS]},
        {"manager": "opt", "name": "bigtool", "version": "2.0", "prefix": "/opt/bigtool-2.0",
         "size": 900000000, "files": [TOOL]},
        {"manager": "spack", "name": "gromacs", "version": "2023.1", "hash": "abcdef",
         "prefix": "/opt/spack/opt/spack/linux/gcc-12/gromacs-2023.1-abcdef", "size": 120000000, "files": [GMX]},
    ],
}


def batch(node, seq, inventory=None, rows=()):
    b = make_batch(node=node, seq=seq, start=START + 60 * seq, rows=list(rows),
                   jobs=[{"job": "901", "user": "alice", "account": "p1", "first_seen": START,
                          "last_seen": START + 600}])
    if inventory is not None:
        b["inventory"] = inventory
    return b


def packages(s, query=""):
    o = s.get_ok("/api/v1/packages?since=7d" + query)
    return {p["name"]: p for p in o["packages"]}, o


def main():
    with Store() as s:
        rows = [row("901", BLAS, "lib", 300), row("901", GMX, "exe", 700), row(None, "[idle]", "idle", 100)]
        check_eq(s.ingest(batch("cn001", 1, INVENTORY, rows))[0], 200, "a batch with the inventory")
        got, o = packages(s)
        check_eq(o["total_samples"], 1100, "all samples of the range")
        check_eq(sorted(got), ["bigtool", "gromacs", "libfftw3-double3", "libopenblas0-pthread"], "packages")
        check_eq((got["gromacs"]["samples"], got["gromacs"]["share"], got["gromacs"]["nodes"]), (700, 0.636364, 1),
                 "gromacs's use")
        check_eq(got["libopenblas0-pthread"]["samples"], 300, "the BLAS package's samples")
        check_eq(got["libopenblas0-pthread"]["last_seen"], int(START // 3600 * 3600), "last used: the batch's hour")
        check_eq((got["bigtool"]["samples"], got["bigtool"]["last_seen"], got["bigtool"]["size_bytes"]),
                 (0, None, 900000000), "an unused package")
        unused, _ = packages(s, "&unused=true")
        check_eq(sorted(unused), ["bigtool", "libfftw3-double3"], "unused packages")
        check_eq(list(packages(s, "&unused=true&manager=opt")[0]), ["bigtool"], "unused, of one manager")

        # a second node with the same software; the same inventory again is no change
        check_eq(s.ingest(batch("cn002", 1, INVENTORY))[0], 200, "a second node")
        check_eq(s.ingest(batch("cn002", 2, INVENTORY))[0], 200, "the same inventory again")
        check_eq({n: p["nodes"] for n, p in packages(s)[0].items()},
                 {"bigtool": 2, "gromacs": 2, "libfftw3-double3": 2, "libopenblas0-pthread": 2}, "on two nodes")
        # cn001 removes bigtool
        newer = copy.deepcopy(INVENTORY)
        newer["digest"] = "b" * 64
        newer["packages"] = [p for p in newer["packages"] if p["name"] != "bigtool"]
        check_eq(s.ingest(batch("cn001", 2, newer))[0], 200, "a changed inventory")
        check_eq(packages(s)[0]["bigtool"]["nodes"], 1, "bigtool now only on cn002")

        # families: the BLAS is openblas; gromacs is no family
        fam = s.get_ok("/api/v1/families?since=7d")
        check_eq([(f["purpose"], f["family"], f["samples"]) for f in fam["families"]],
                 [("blas", "openblas", 300)], "time per library family")
        check_eq(fam["total_samples"], 1100, "families' shares are of all samples")

        # malformed inventories are refused whole, nothing of them stored
        before = s.sql("SELECT count(*) FROM packages")[0][0]
        for what, change, field in (
                ("a manager lmk does not know", lambda i: i["packages"][0].update(manager="pip"),
                 "inventory.packages[0].manager"),
                ("a relative file", lambda i: i["packages"][1].update(files=["lib/x.so"]), "inventory.packages[1].files"),
                ("a digest that is not hex", lambda i: i.update(digest="Z" * 64), "inventory.digest"),
                ("a negative size", lambda i: i["packages"][2].update(size=-1), "inventory.packages[2].size"),
                ("no files", lambda i: i["packages"][3].pop("files"), "inventory.packages[3].files"),
                ("another format", lambda i: i.update(version=2), "inventory.format")):
            bad = copy.deepcopy(INVENTORY)
            bad["packages"].append({"manager": "opt", "name": "new", "version": "1", "size": 1, "files": ["/x"]})
            change(bad)
            status, _, body = s.ingest(batch("cn003", 10 + len(what), bad))
            check_eq((status, body.get("field")), (400, field), f"{what}: {body}")
        check_eq(s.sql("SELECT count(*) FROM packages")[0][0], before, "no package from a refused batch")

        # the command
        lmk = [build_path("cli", "lmk"), "--store", s.url(), "--token-file", s.token_file]
        r = subprocess.run(lmk + ["unused", "--since", "7d"], capture_output=True, text=True)
        if r.returncode != 0 or "bigtool 2.0" not in r.stdout or "libopenblas" in r.stdout:
            fail(f"lmk unused: {r.returncode} {r.stdout} {r.stderr}")
        log(r.stdout)
        r = subprocess.run(lmk + ["top", "--families"], capture_output=True, text=True)
        if r.returncode != 0 or "openblas" not in r.stdout or "27.3%" not in r.stdout:
            fail(f"lmk top --families: {r.returncode} {r.stdout} {r.stderr}")
        r = subprocess.run(lmk + ["top", "--packages"], capture_output=True, text=True)
        if r.returncode != 0 or "gromacs 2023.1" not in r.stdout or "63.6%" not in r.stdout:
            fail(f"lmk top --packages: {r.returncode} {r.stdout} {r.stderr}")

        # a RHEL node: RPM packages and an environment module of software
        # built by hand (modules of Spack packages carry no files: docs/inventory.md)
        rhel = {
            "format": "lmk-inventory", "version": 1, "digest": "c" * 64,
            "packages": [
                {"manager": "rpm", "name": "glibc", "version": "2.34-100.el9", "arch": "x86_64",
                 "size": 6543210, "files": [LIBC]},
                {"manager": "module", "name": "openmpi", "version": "4.1.5", "prefix": "/apps/openmpi/4.1.5",
                 "size": 80000000, "files": [MPI, "/apps/openmpi/4.1.5/bin/mpirun"]},
                {"manager": "module", "name": "Core/fftw", "version": "3.3.10", "prefix": "/apps/fftw/3.3.10",
                 "size": 5000000, "files": ["/apps/fftw/3.3.10/lib/libfftw3.so.3"]},
            ],
        }
        check_eq(s.ingest(batch("rh001", 1, rhel, [row("901", LIBC, "lib", 50), row("901", MPI, "lib", 20)]))[0],
                 200, "an inventory with rpm and module packages")
        got, _ = packages(s)
        check_eq((got["glibc"]["manager"], got["glibc"]["samples"], got["glibc"]["arch"]), ("rpm", 50, "x86_64"),
                 "an RPM package's use")
        check_eq((got["openmpi"]["manager"], got["openmpi"]["samples"], got["openmpi"]["prefix"]),
                 ("module", 20, "/apps/openmpi/4.1.5"), "a module's use")
        check_eq(list(packages(s, "&unused=true&manager=module")[0]), ["Core/fftw"], "unused modules")
        check_eq(list(packages(s, "&manager=rpm")[0]), ["glibc"], "rpm packages")
        status, _, body = s.get("/api/v1/packages?since=7d&manager=pip")
        check_eq((status, body.get("field")), (400, "manager"), f"an unknown manager: {body}")

        r = subprocess.run(lmk + ["unused", "--since", "7d", "--manager", "module"], capture_output=True, text=True)
        if r.returncode != 0 or "Core/fftw 3.3.10" not in r.stdout or "openmpi" in r.stdout or "bigtool" in r.stdout:
            fail(f"lmk unused --manager module: {r.returncode} {r.stdout} {r.stderr}")
        log(r.stdout)
    log("PASS")


if __name__ == "__main__":
    main()
