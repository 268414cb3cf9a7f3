#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Install like a site would (docs/packaging.md): build the Debian packages
from this tree with dpkg-buildpackage in a temporary copy, lintian them
(no errors), unpack each into a private root with dpkg-deb -x (the
machine's own /usr and dpkg database are not touched), check that every
file is where Debian wants it, and run lmk-store, lmk and lmkd from there
with systemd-free command lines and the installed /etc/lmk examples: a
batch from the unpacked lmkd lands in the unpacked store and the unpacked
lmk lists it. A program builds against the unpacked liblmk-dev through
pkg-config. The units pass systemd-analyze verify. Also: a meson build
with its default prefix installs everything under that prefix. With
LMK_TEST_INSTALL_PACKAGES=1 (.ci/run, on a fresh machine) and as root, the
packages are then installed for real with dpkg -i, run from /usr, and
purged, leaving nothing behind.

Slow (a whole package build, several minutes on two CPUs): its own suite,
`meson test -C build --suite debian`. Skips (77) without dpkg-buildpackage,
debhelper or lintian; the lmkd part needs root and BTF."""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import urllib.request

from lmktest import SOURCE_ROOT, check, fail, log, skip, tmpdir

sys.path.insert(0, os.path.join(SOURCE_ROOT, "tests", "store"))
from storetest import ADMIN_TOKEN, NODE_TOKEN, write_tokens  # noqa: E402

MULTIARCH = subprocess.run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"], capture_output=True,
                           text=True).stdout.strip() if shutil.which("dpkg-architecture") else ""
PACKAGES = {
    "lmkd": ["usr/sbin/lmkd", "lib/systemd/system/lmkd.service", "etc/lmk/lmkd.conf",
             "usr/libexec/lmk/lmk-prolog", "usr/libexec/lmk/lmk-epilog", "usr/libexec/lmk/lmk-notify",
             f"usr/lib/{MULTIARCH}/slurm-wlm/lmk.so", "etc/slurm/plugstack.conf.d/lmk.conf",
             "usr/share/man/man8/lmkd.8.gz", "usr/share/man/man5/lmkd.conf.5.gz", "var/lib/lmk",
             "usr/share/doc/lmkd/copyright"],
    "lmk-store": ["usr/bin/lmk-store", "lib/systemd/system/lmk-store.service", "etc/lmk/lmk-store.conf",
                  "usr/libexec/lmk/lmk-leads-sync", "usr/share/lmk/schema/sqlite/0001-initial.sql",
                  "usr/share/lmk/schema/postgresql/0001-initial.sql", "usr/share/man/man8/lmk-store.8.gz"],
    "lmk": ["usr/bin/lmk", "usr/share/man/man1/lmk.1.gz"],
    "liblmk1": [f"usr/lib/{MULTIARCH}/liblmk.so.1", f"usr/lib/{MULTIARCH}/liblmk.so.1.0.0"],
    "liblmk-dev": ["usr/include/lmk.h", "usr/include/lmk-abi.h", "usr/include/lmk.f90",
                   f"usr/lib/{MULTIARCH}/liblmk.so", f"usr/lib/{MULTIARCH}/pkgconfig/lmk.pc",
                   "usr/share/man/man3/lmk-markers.3.gz", "usr/share/doc/liblmk-dev/examples/example.c"],
}
CONFFILES = {"lmkd": ["/etc/lmk/lmkd.conf", "/etc/slurm/plugstack.conf.d/lmk.conf"], "lmk-store": ["/etc/lmk/lmk-store.conf"]}


def run(cmd, what, cwd=None, env=None, quiet=False):
    log("+", " ".join(cmd))
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{what}: exit {p.returncode}\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}")
    if not quiet and p.stdout.strip():
        log(p.stdout.strip()[-2000:])
    return p.stdout


def with_progress(cmd, logfile, what, cwd, env):
    """Runs a long command, its output to logfile, saying every 30 s how far
    it got (the last line of the log)."""
    log("+", " ".join(cmd), f"(log: {logfile})")
    start = time.monotonic()
    with open(logfile, "w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
        while proc.poll() is None:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with open(logfile, errors="replace") as f:
                    lines = f.read().splitlines()
                last = lines[-1][:120] if lines else ""
                log(f"  {what}: {time.monotonic() - start:.0f} s, {len(lines)} lines of log; {last}")
    if proc.returncode != 0:
        with open(logfile, errors="replace") as f:
            fail(f"{what}: exit {proc.returncode}\n{f.read()[-6000:]}")
    log(f"  {what}: done in {time.monotonic() - start:.0f} s")


def source_copy(dest):
    """The tree as git sees it (tracked and new files, not what .gitignore
    hides: no build directories), or the whole tree without a git."""
    src = os.path.join(dest, "lmk")
    p = subprocess.run(["git", "-C", SOURCE_ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                       capture_output=True)
    if p.returncode == 0:
        for name in p.stdout.decode().split("\0"):
            if name and os.path.isfile(os.path.join(SOURCE_ROOT, name)):
                os.makedirs(os.path.join(src, os.path.dirname(name)), exist_ok=True)
                shutil.copy2(os.path.join(SOURCE_ROOT, name), os.path.join(src, name))
    else:
        shutil.copytree(SOURCE_ROOT, src, ignore=shutil.ignore_patterns("build*", "obj-*", ".git"))
    return src


def check_prefix_install(d):
    """meson's defaults (prefix /usr/local): every file inside the prefix,
    the units in its systemd directory."""
    b = os.path.join(d, "build-prefix")
    run(["meson", "setup", b, SOURCE_ROOT, "--prefix=/opt/lmk-test"], "meson setup --prefix=/opt/lmk-test",
        quiet=True)
    installed = json.loads(run(["meson", "introspect", b, "--installed"], "meson introspect", quiet=True))
    outside = sorted(v for v in installed.values() if not v.startswith("/opt/lmk-test/"))
    check(not outside, f"a build with --prefix=/opt/lmk-test installs outside it: {outside}")
    units = sorted(v for v in installed.values() if v.endswith(".service"))
    check(units and all(u.startswith("/opt/lmk-test/lib/systemd/system/") for u in units),
          f"units not in the prefix's systemd directory: {units}")
    with open(os.path.join(b, "config.h")) as f:
        config = f.read()
    for key, want in (("LMK_STATE_DIR", "/opt/lmk-test/var/lib/lmk"), ("LMK_SYSCONF_DIR", "/opt/lmk-test/etc/lmk")):
        check(f'#define {key} "{want}"' in config, f"{key} is not {want} in a /opt/lmk-test build")
    log(f"a --prefix=/opt/lmk-test build installs {len(installed)} files inside it, units in "
        f"{os.path.dirname(units[0])}")
    shutil.rmtree(b, ignore_errors=True)


def wait_listening(logpath, proc, what):
    end = time.monotonic() + 30
    while time.monotonic() < end:
        with open(logpath, errors="replace") as f:
            m = re.search(r"Listening on http://127\.0\.0\.1:(\d+)/", f.read())
        if m:
            return int(m.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    fail(f"{what} did not listen:\n{open(logpath).read()}")


def get(url, token=None):
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    with urllib.request.urlopen(req, timeout=10) as r:
        return r.status, r.read().decode()


def main():
    for tool in ("dpkg-buildpackage", "dpkg-deb", "dh", "lintian", "meson"):
        if not shutil.which(tool):
            skip(f"{tool} is not installed (apt-get install dpkg-dev debhelper lintian)")
    d = tmpdir("lmk-debian-")
    keep = os.environ.get("LMK_KEEP_TEST_DIRS") == "1"
    try:
        check_prefix_install(d)

        src = source_copy(d)
        env = dict(os.environ, DEB_BUILD_OPTIONS="nocheck parallel=%d" % (os.cpu_count() or 1))
        for k in ("LMK_BUILD_ROOT", "LMK_SOURCE_ROOT", "MESON_TEST_ITERATION", "MALLOC_PERTURB_"):
            env.pop(k, None)
        with_progress(["nice", "dpkg-buildpackage", "-us", "-uc", "-b"], os.path.join(d, "build.log"),
                      "dpkg-buildpackage", src, env)
        debs = {os.path.basename(p).split("_")[0]: p for p in glob.glob(os.path.join(d, "*.deb"))}
        check(set(PACKAGES) <= set(debs), f"packages built: {sorted(debs)}, expected {sorted(PACKAGES)}")
        changes = glob.glob(os.path.join(d, "*.changes"))
        check(len(changes) == 1, f"one .changes file, got {changes}")

        p = subprocess.run(["lintian", "--fail-on", "error", "--tag-display-limit", "0", changes[0]],
                           capture_output=True, text=True)
        tags = [line for line in p.stdout.splitlines() if re.match(r"^[EWIPX]: ", line)]
        for line in tags:
            log("  lintian", line)
        errors = [line for line in tags if line.startswith("E: ")]
        check(p.returncode == 0 and not errors, f"lintian found errors (exit {p.returncode}):\n"
              + "\n".join(errors) + p.stderr[-2000:])
        log(f"lintian: no errors, {sum(t.startswith('W: ') for t in tags)} warnings")

        root = os.path.join(d, "root")
        for name, deb in sorted(debs.items()):
            if name not in PACKAGES:
                continue  # debug symbols
            run(["dpkg-deb", "-x", deb, root], f"dpkg-deb -x {deb}")
            for path in PACKAGES[name]:
                check(os.path.lexists(os.path.join(root, path)), f"{name} has no /{path}")
            conffiles = subprocess.run(["dpkg-deb", "--info", deb, "conffiles"], capture_output=True,
                                       text=True).stdout.split()
            check(sorted(conffiles) == sorted(CONFFILES.get(name, [])),
                  f"{name}'s conffiles: {conffiles}, expected {CONFFILES.get(name, [])}")
        log(f"unpacked {len(PACKAGES)} packages into {root}; every file where Debian wants it")

        check_units(d, root)
        check_liblmk_dev(d, root)
        run_from_packages(d, root)
        install_for_real(d, debs)
    finally:
        if not keep:
            shutil.rmtree(d, ignore_errors=True)


def check_units(d, root):
    """systemd-analyze verify on the unpacked units, their programs pointed
    at the unpacked root (--root would judge the root's missing
    sysinit.target and /bin/kill instead) and their man pages found there."""
    if not shutil.which("systemd-analyze"):
        log("no systemd-analyze: the units are not verified")
        return
    units = os.path.join(d, "units")
    os.makedirs(units, exist_ok=True)
    for unit in ("lmkd.service", "lmk-store.service"):
        with open(os.path.join(root, "lib", "systemd", "system", unit)) as f:
            text = f.read()
        text = re.sub(r"^(Exec\w+=[@+!-]*)/usr/", lambda m: f"{m.group(1)}{root}/usr/", text, flags=re.M)
        check(f"{root}/usr/" in text, f"{unit} runs nothing from /usr")
        path = os.path.join(units, unit)
        with open(path, "w") as f:
            f.write(text)
        p = subprocess.run(["systemd-analyze", "verify", path], capture_output=True, text=True,
                           env=dict(os.environ, MANPATH=os.path.join(root, "usr", "share", "man")))
        out = (p.stdout + p.stderr).strip()
        check(p.returncode == 0 and not out, f"systemd-analyze verify {unit}: exit {p.returncode}\n{out}")
        log(f"systemd-analyze verify {unit}: no complaint")


def check_liblmk_dev(d, root):
    """A program built against the unpacked headers and library through
    pkg-config, and run against that library."""
    pc = os.path.join(root, "usr", "lib", MULTIARCH, "pkgconfig")
    env = dict(os.environ, PKG_CONFIG_PATH=pc, PKG_CONFIG_SYSROOT_DIR=root, PKG_CONFIG_LIBDIR=pc)
    flags = run(["pkg-config", "--cflags", "--libs", "lmk"], "pkg-config lmk", env=env, quiet=True).split()
    exe = os.path.join(d, "example-c")
    run(["cc", "-o", exe, os.path.join(root, "usr/share/doc/liblmk-dev/examples/example.c"), *flags, "-pthread"],
        "building the example against liblmk-dev", quiet=True)
    run([exe, "1"], "the example against the unpacked liblmk1",
        env=dict(os.environ, LD_LIBRARY_PATH=os.path.join(root, "usr", "lib", MULTIARCH)), quiet=True)
    if shutil.which("gfortran"):
        fexe = os.path.join(d, "example-f")
        run(["gfortran", "-J", d, "-o", fexe, os.path.join(root, "usr/include/lmk.f90"),
             os.path.join(root, "usr/share/doc/liblmk-dev/examples/example.f90"), *flags],
            "building the Fortran example against liblmk-dev", quiet=True)
        run([fexe, "1"], "the Fortran example", env=dict(os.environ,
            LD_LIBRARY_PATH=os.path.join(root, "usr", "lib", MULTIARCH)), quiet=True)
    log("the C (and Fortran) example build against liblmk-dev and run against liblmk1")


def run_from_packages(d, root):
    tokens = os.path.join(d, "tokens")
    write_tokens(tokens)
    store_log = os.path.join(d, "lmk-store.log")
    cmd = [os.path.join(root, "usr/bin/lmk-store"), "--config", os.path.join(root, "etc/lmk/lmk-store.conf"),
           "--db", os.path.join(d, "lmk.db"), "--listen", "127.0.0.1:0", "--token-file", tokens]
    log("+", " ".join(cmd))
    env = {k: v for k, v in os.environ.items() if k != "NOTIFY_SOCKET"}
    with open(store_log, "w") as out:
        store = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        port = wait_listening(store_log, store, "the unpacked lmk-store")
        url = f"http://127.0.0.1:{port}"
        status, body = get(url + "/healthz")
        check(status == 200 and '"ok"' in body, f"/healthz: {status} {body}")
        log(f"the unpacked lmk-store with the installed lmk-store.conf answers at {url}")
        if os.geteuid() != 0 or not os.path.exists("/sys/kernel/btf/vmlinux"):
            log("not root or no BTF: the unpacked lmkd is not run")
            return
        run_lmkd(d, root, url)
        admin = os.path.join(d, "admin.token")
        with open(admin, "w") as f:
            f.write(ADMIN_TOKEN + "\n")
        os.chmod(admin, 0o600)
        out = run([os.path.join(root, "usr/bin/lmk"), "--store", url, "--token-file", admin, "nodes", "--csv"],
                  "the unpacked lmk", quiet=True)
        check("\nnode-deb," in out, f"lmk nodes does not list the unpacked lmkd's node:\n{out}")
        log("the unpacked lmk lists the node the unpacked lmkd pushed from")
    finally:
        store.terminate()
        store.wait(timeout=30)


def run_lmkd(d, root, url, node="node-deb", what="unpacked"):
    token = os.path.join(d, f"node-{what}.token")
    with open(token, "w") as f:
        f.write(NODE_TOKEN + "\n")
    os.chmod(token, 0o600)
    conf = os.path.join(d, f"lmkd-{what}.conf")
    with open(os.path.join(root, "etc/lmk/lmkd.conf")) as f:
        text = f.read()
    # what a site edits in the installed file: the store's address
    text = text.replace("# url = http://lmk-store.example:8470", f"url = {url}")
    check(f"url = {url}" in text, "the installed lmkd.conf has no commented [store] url to fill in")
    with open(conf, "w") as f:
        f.write(text)
    lmkd_log = os.path.join(d, f"lmkd-{what}.log")
    ready = os.path.join(d, f"lmkd-{what}.ready")
    cmd = [os.path.join(root, "usr/sbin/lmkd"), "--config", conf, "--token-file", token,
           "--spool", os.path.join(d, f"spool-{what}"), "--notify-socket", "none", "--push-interval", "1",
           "--node-name", node, "--metrics-listen", "0", "--ready-file", ready]
    log("+", " ".join(cmd))
    with open(lmkd_log, "w") as out:
        lmkd = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    try:
        end = time.monotonic() + 30
        while not os.path.exists(ready):
            check(lmkd.poll() is None and time.monotonic() < end,
                  f"the {what} lmkd did not start:\n{open(lmkd_log).read()}")
            time.sleep(0.1)
        admin_ok = False
        while time.monotonic() < end and not admin_ok:
            status, body = get(url + "/api/v1/nodes", ADMIN_TOKEN)
            admin_ok = f'"node":"{node}"' in body
            time.sleep(0.3)
        check(admin_ok, f"no batch of the {what} lmkd reached the store:\n{open(lmkd_log).read()}")
    finally:
        lmkd.terminate()
        lmkd.wait(timeout=60)
    text = open(lmkd_log).read()
    check(lmkd.returncode == 0, f"the {what} lmkd exited with {lmkd.returncode}:\n{text}")
    # unpacked: liblmk1's default path is not there, and that is no news;
    # installed: it is, and lmkd reads it without a word
    check("liblmk" not in text and "usdt" not in text, f"lmkd warned about liblmk:\n{text}")
    log(f"the {what} lmkd with the installed lmkd.conf pushed to the {what} store, and said nothing of liblmk")


def package_paths(deb):
    """The regular files and symlinks a .deb puts on the machine."""
    p = subprocess.run(["dpkg-deb", "-c", deb], capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"dpkg-deb -c {deb}: exit {p.returncode}\n{p.stderr}")
    paths = []
    for line in p.stdout.splitlines():
        # -rwxr-xr-x root/root  123 2026-11-26 12:00 ./usr/sbin/lmkd
        fields = line.split(None, 5)
        if len(fields) == 6 and fields[0][0] in "-l":
            paths.append(fields[5].split(" -> ")[0].lstrip("."))
    return paths


def install_for_real(d, debs):
    """What a site does: dpkg -i the five packages on this machine, run the
    store and the CLI from /usr with /etc/lmk's examples, then purge them
    and check that nothing of them is left. Changes the machine's dpkg
    database, so only where asked (LMK_TEST_INSTALL_PACKAGES=1, which
    .ci/run sets on its fresh machine), as root, and only when no file the
    packages hold is on the machine already: a file we did not put there is
    never replaced."""
    if os.environ.get("LMK_TEST_INSTALL_PACKAGES") != "1":
        log("LMK_TEST_INSTALL_PACKAGES is not 1: the packages are not installed on this machine "
            "(.ci/run does, on its fresh machine)")
        return
    if os.geteuid() != 0:
        log("not root: the packages are not installed on this machine")
        return
    names = sorted(PACKAGES)
    installed = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Status}\n", *names],
                               capture_output=True, text=True).stdout
    already = [line.split()[0] for line in installed.splitlines() if line.endswith(" installed")]
    check(not already, f"lmk packages are installed on this machine already: {already}; "
          "unset LMK_TEST_INSTALL_PACKAGES or remove them")
    files = {path: name for name in names for path in package_paths(debs[name])}
    present = sorted(path for path in files if os.path.lexists(path))
    check(not present, f"files the packages would replace are on this machine: {present[:10]}; "
          "the packages are not installed over them")

    run(["dpkg", "-i", *(debs[n] for n in names)], "dpkg -i of the five packages")
    try:
        status = run(["dpkg-query", "-W", "-f", "${Package} ${db:Status-Abbrev}\n", *names],
                     "dpkg-query", quiet=True)
        check(all(line.split()[1] == "ii" for line in status.splitlines()),
              f"not every package is installed and configured:\n{status}")
        missing = sorted(path for path in files if not os.path.lexists(path))
        check(not missing, f"installed, yet not on the machine: {missing[:10]}")
        log(f"dpkg -i: {len(names)} packages installed and configured, {len(files)} files in place")

        version = run(["/usr/sbin/lmkd", "--version"], "the installed lmkd --version", quiet=True)
        check(version.strip(), "the installed lmkd printed no version")
        # the installed store with the installed config, its database in the test's folder
        tokens = os.path.join(d, "tokens-installed")
        write_tokens(tokens)
        store_log = os.path.join(d, "lmk-store-installed.log")
        cmd = ["/usr/bin/lmk-store", "--config", "/etc/lmk/lmk-store.conf", "--db", os.path.join(d, "installed.db"),
               "--listen", "127.0.0.1:0", "--token-file", tokens]
        log("+", " ".join(cmd))
        env = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "LD_LIBRARY_PATH")}
        with open(store_log, "w") as out:
            store = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            url = f"http://127.0.0.1:{wait_listening(store_log, store, 'the installed lmk-store')}"
            admin = os.path.join(d, "admin-installed.token")
            with open(admin, "w") as f:
                f.write(ADMIN_TOKEN + "\n")
            os.chmod(admin, 0o600)
            p = subprocess.run(["/usr/bin/lmk", "--store", url, "--token-file", admin, "nodes", "--csv"],
                               capture_output=True, text=True, env=env)
            check(p.returncode == 0 and p.stdout.startswith("node,"),
                  f"the installed lmk against the installed store: exit {p.returncode}\n{p.stdout}{p.stderr}")
            log(f"the installed lmk-store answers at {url}, and the installed lmk asks it")
            if os.path.exists("/sys/kernel/btf/vmlinux"):
                run_lmkd(d, "/", url, node="node-installed", what="installed")
            else:
                log("no BTF: the installed lmkd is not run")
        finally:
            store.terminate()
            store.wait(timeout=30)
        # the installed liblmk1, found by the dynamic linker's own cache
        exe = os.path.join(d, "example-installed")
        run(["cc", "-o", exe, "/usr/share/doc/liblmk-dev/examples/example.c",
             *run(["pkg-config", "--cflags", "--libs", "lmk"], "pkg-config lmk (installed)", quiet=True).split(),
             "-pthread"], "building the example against the installed liblmk-dev", quiet=True)
        run([exe, "1"], "the example against the installed liblmk1", env=env, quiet=True)
        log("the example builds against the installed liblmk-dev and runs with the installed liblmk1")
    finally:
        run(["dpkg", "--purge", *names], "dpkg --purge of the five packages")
    left = sorted(path for path in files if os.path.lexists(path))
    check(not left, f"dpkg --purge left files on the machine: {left[:10]}")
    check(not os.path.lexists("/etc/lmk/lmkd.conf") and not os.path.lexists("/etc/lmk/lmk-store.conf"),
          "dpkg --purge left the conffiles in /etc/lmk")
    log(f"dpkg --purge: nothing of the {len(names)} packages is left")


if __name__ == "__main__":
    main()
