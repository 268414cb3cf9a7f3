#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""test-header.py INCLUDE_DIR HEADER_C HEADER_CXX HEADER_BPF [cc=CMD] [cxx=CMD] [bpf=CMD] ...:
lmk.h compiles without a warning, with -pedantic -Werror, as C89, C99 and
C11 and as C++98, C++11 and C++17, by every compiler given (gcc, clang);
lmk-abi.h, which it includes, also for the BPF target (clang -target bpf)."""
import shlex
import subprocess
import sys

from lmktest import check, log, skip

C_STDS = ["c89", "gnu89", "c99", "c11", "gnu11"]
CXX_STDS = ["c++98", "c++11", "c++17"]
BPF_STDS = ["gnu89", "gnu11"]
WARNINGS = ["-pedantic", "-Werror", "-Wall", "-Wextra", "-Wshadow", "-Wundef",
            "-Wcast-align", "-Wconversion", "-Wsign-conversion", "-Wredundant-decls"]
C_WARNINGS = ["-Wstrict-prototypes", "-Wmissing-prototypes", "-Wold-style-definition",
              "-Wdeclaration-after-statement"]


def compile_one(compiler, std, extra, include, source):
    for opt in ("-O0", "-O2"):
        cmd = [*compiler, f"-std={std}", opt, *WARNINGS, *extra, "-I", include, "-c", source, "-o", "/dev/null"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        check(p.returncode == 0, f"{shlex.join(cmd)} failed:\n{p.stderr}")
    log(f"ok: {shlex.join(compiler)} -std={std}")


def main():
    include, header_c, header_cxx, header_bpf = sys.argv[1:5]
    compilers = [a.split("=", 1) for a in sys.argv[5:]]
    if not compilers:
        skip("no compiler given")
    ran = 0
    for kind, cmd in compilers:
        cmd = shlex.split(cmd)
        if kind == "cc":
            for std in C_STDS:
                compile_one(cmd, std, C_WARNINGS, include, header_c)
        elif kind == "bpf":
            for std in BPF_STDS:
                compile_one(cmd, std, C_WARNINGS, include, header_bpf)
        else:
            for std in CXX_STDS:
                compile_one(cmd, std, [], include, header_cxx)
        ran += 1
    log(f"{ran} compilers ok")


main()
