#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""test-pkgconfig.py --cc CMD [--fc CMD] [--sanitize LIST]: the examples
build as the docs say, with `pkg-config --cflags --libs lmk` (here the build
tree's lmk-uninstalled.pc), and run; the Fortran one compiles the shipped
module source with them. --sanitize: the build's b_sanitize, which a
sanitized liblmk needs in the program too."""
import argparse
import os
import shlex
import subprocess

from lmktest import BUILD_ROOT, SOURCE_ROOT, check, log, skip, tmpdir, which


def run(cmd, **kw):
    log("+", shlex.join(cmd))
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    check(p.returncode == 0, f"{shlex.join(cmd)} exited with {p.returncode}:\n{p.stdout}{p.stderr}")
    return p.stdout.strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cc", required=True)
    ap.add_argument("--fc")
    ap.add_argument("--sanitize", default="none")
    args = ap.parse_args()
    if not which("pkg-config"):
        skip("pkg-config not installed")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(BUILD_ROOT, "meson-uninstalled"))
    flags = shlex.split(run(["pkg-config", "--cflags", "--libs", "lmk"], env=env))
    extra = [] if args.sanitize == "none" else [f"-fsanitize={args.sanitize}"]
    check("-llmk" in flags, f"no -llmk in {flags}")
    libdirs = [f[2:] for f in flags if f.startswith("-L")]
    run_env = dict(os.environ, LD_LIBRARY_PATH=":".join(libdirs))
    out = tmpdir()
    examples = os.path.join(SOURCE_ROOT, "examples")

    exe = os.path.join(out, "example-c")
    run([*shlex.split(args.cc), "-O2", *extra, os.path.join(examples, "example.c"), *flags, "-pthread", "-o", exe])
    log(run([exe, "0.05", "2"], env=run_env))

    if args.fc:
        module = [os.path.join(d[2:], "lmk.f90") for d in flags if d.startswith("-I")]
        module = [m for m in module if os.path.exists(m)]
        check(module, f"lmk.f90 not in any -I directory of {flags}")
        exe = os.path.join(out, "example-fortran")
        run([*shlex.split(args.fc), "-O2", *extra, module[0], os.path.join(examples, "example.f90"), *flags, "-o", exe], cwd=out)
        log(run([exe, "0.05"], env=run_env))
    log("ok")


main()
