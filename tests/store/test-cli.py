#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The lmk command line tool against a running lmk-store: each subcommand's
table and --json output, the options and environment variables, and its
errors."""
import json
import os
import subprocess

from lmktest import build_path, fail, log, skip
from storetest import ADMIN_TOKEN, Store, check_eq, example, make_batch, rank, row


def lmk_binary():
    path = build_path("cli", "lmk")
    if not os.path.exists(path):
        skip(f"{path} was not built")
    return path


def lmk(*args, env=None, expect=0):
    e = {k: v for k, v in os.environ.items() if not k.startswith("LMK_")}
    e.update(env or {})
    e["TZ"] = "UTC"
    proc = subprocess.run([lmk_binary(), *args], capture_output=True, text=True, env=e, timeout=60)
    log("+ lmk", " ".join(args), "->", proc.returncode)
    if proc.returncode != expect:
        fail(f"lmk {' '.join(args)}: exit {proc.returncode}, expected {expect}\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout, proc.stderr


def check_width(out, what):
    for line in out.splitlines():
        if len(line) > 80:
            fail(f"{what}: line wider than 80 columns: {line!r}")


def main():
    with Store() as store:
        check_eq(store.ingest(example())[0], 200, "ingest example")
        rows = [row("4712", "/apps/cp2k/bin/cp2k.psmp", "exe", 500, phase="scf", cycles=5000, instructions=9000),
                row("4712", "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", "lib", 300,
                    phase="scf", cycles=3000, instructions=9000),
                row("4712", "/usr/lib/x86_64-linux-gnu/libmpi.so.40", "lib", 150, phase="comm",
                    cycles=1500, instructions=600),
                row("4712", "[kernel]", "kernel", 50, cycles=500, instructions=400)]
        jobs = [{"job": "4712", "user": "bob", "account": "chem", "name": "cp2k-h2o", "nodes": 2,
                 "notes": {"input": "H2O-64"}}]
        # 2 ranks per node at 1 Hz: useful 400, 300 (cn001) and 350, 350 (cn002) samples,
        # 500 samples each: LB 350/400, CE 400/500, PE 0.7
        figures = {"cn001": [(0, 100, "scf"), (1, 200, "scf")], "cn002": [(2, 150, "scf"), (3, 150, "comm")]}
        for node in ("cn001", "cn002"):
            ranks = [rank("4712", k, 500, comm, phase) for k, comm, phase in figures[node]]
            check_eq(store.ingest(make_batch(node=node, seq=1, rows=rows, jobs=jobs, ranks=ranks))[0], 200,
                     "ingest")

        tokens = os.path.join(store.dir, "admin-token")
        with open(tokens, "w") as f:
            f.write(ADMIN_TOKEN + "\n")
        os.chmod(tokens, 0o600)
        opts = ["--store", store.url(), "--token-file", tokens]
        env = {"LMK_STORE": store.url(), "LMK_TOKEN_FILE": store.token_file}  # the store's own file

        out, _ = lmk("jobs", *opts)
        check_width(out, "lmk jobs")
        lines = out.splitlines()
        if not lines[0].startswith("JOB") or len(lines) != 3:
            fail(f"lmk jobs: expected a header and two jobs:\n{out}")
        if not ("4712" in lines[1] and "bob" in lines[1] and "cp2k-h2o" in lines[1]):
            fail(f"lmk jobs: most recent job first:\n{out}")
        out, _ = lmk("jobs", "--user", "alice", env=env)
        if "4711" not in out or "4712" in out:
            fail(f"lmk jobs --user alice:\n{out}")
        out, _ = lmk("jobs", "--since", "3650d", "--json", env=env)
        check_eq(sorted(j["job"] for j in json.loads(out)["jobs"]), ["4711", "4712"], "lmk jobs --json")

        out, _ = lmk("job", "4712", *opts)
        check_width(out, "lmk job")
        for want in ("Job 4712 on demo: cp2k-h2o", "account chem", "2 seen of 2 allocated", "cn001 cn002",
                     "Samples     2,000", "IPC         1.90 (38,000 instructions in 20,000 cycles)",
                     # shares with their 95% Wilson interval: 1,000 of 2,000 is 47.8-52.2%
                     "  executables   50.0% (47.8-52.2%)\n  libraries     45.0% (42.8-47.2%)\n"
                     "  kernel         5.0% (4.1-6.0%)\n  idle           0.0% (0.0-0.2%)\n",
                     " SHARE 95% INTERVAL      SAMPLES   IPC KIND   OBJECT",
                     " 50.0% (47.8-52.2%)        1,000  1.80 exe    /apps/cp2k/bin/cp2k.psmp",
                     " 30.0% (28.0-32.0%)          600  3.00 lib    ...",
                     "libopenblas.so.0", " 15.0% (13.5-16.6%)          300  0.40 lib    ...b/x86_64-linux-gnu/libmpi.so.40",
                     " 80.0% (78.2-81.7%)        1,600  2.25 scf", "(outside markers)", "input = H2O-64",
                     "MPI efficiency (POP, from samples of 4 ranks)",
                     "Parallel    70.0% = load balance 87.5% x communication 80.0%",
                     "Samples     2,000 of ranks, 600 in communication",
                     "Useful      mean 5m50s, max 6m40s per rank; elapsed 8m20s, wall 58s",
                     "     PE      LB      CE  RANKS PHASE", "  70.0%  100.0%   70.0%      1 comm",
                     "  70.0%   87.5%   80.0%      3 scf"):
            if want not in out:
                fail(f"lmk job 4712: missing {want!r}:\n{out}")
        out, _ = lmk("job", "4711", env=env)
        if "MPI efficiency" in out:
            fail(f"lmk job 4711: POP metrics for a job without ranks:\n{out}")
        for want in ("Job 4711 on demo: lulesh", "IPC         - (no cycle", "timestep/solve",
                     "Markers switched off", "inner in lulesh2.0: off-rate", "app = lulesh"):
            if want not in out:
                fail(f"lmk job 4711: missing {want!r}:\n{out}")
        out, _ = lmk("job", "4712", "--json", *opts)
        j = json.loads(out)
        check_eq((j["samples"], j["kinds"]["lib"]["samples"]), (2000, 900), "lmk job --json")

        out, _ = lmk("top", "--libs", "--since", "3650d", *opts)
        check_width(out, "lmk top")
        lines = out.splitlines()
        if "Time per library" not in lines[0] or "libopenblas.so.0" not in lines[3] or "libmpi" not in lines[4]:
            fail(f"lmk top --libs: expected openblas then libmpi:\n{out}")
        if " 13.8% (12.8-14.8%) " not in lines[3]:
            fail(f"lmk top --libs: openblas is 600 of 4,361 samples in all:\n{out}")
        out, _ = lmk("top", "--exes", "--since", "3650d", "--json", env=env)
        check_eq([o["object"] for o in json.loads(out)["objects"]],
                 ["/opt/lulesh/lulesh2.0", "/apps/cp2k/bin/cp2k.psmp"], "lmk top --exes --json")

        # A job of 12 samples: rough shares, and why, instead of three digits.
        rows = [row("4713", "/apps/tiny", "exe", 7), row("4713", "/usr/lib/libm.so.6", "lib", 5)]
        check_eq(store.ingest(make_batch(node="cn003", seq=1, rows=rows, jobs=[{"job": "4713"}]))[0], 200,
                 "ingest a tiny job")
        out, _ = lmk("job", "4713", *opts)
        check_width(out, "lmk job of few samples")
        for want in ("  executables    ~60% (n=12, too few samples)\n  libraries      ~40% (n=12, too few samples)",
                     "  ~60% (n=12, too few)         7     - exe    /apps/tiny",
                     "  ~40% (n=12, too few)         5     - lib    /usr/lib/libm.so.6"):
            if want not in out:
                fail(f"lmk job 4713: missing {want!r}:\n{out}")
        if "58.3%" in out or "41.7%" in out:
            fail(f"lmk job 4713: three digits from 12 samples:\n{out}")

        out, _ = lmk("nodes", *opts)
        check_width(out, "lmk nodes")
        if not ("cn001" in out and "cn002" in out and "demo" in out):
            fail(f"lmk nodes:\n{out}")

        # Errors: one path, with --json as JSON on stdout.
        _, err = lmk("job", "9999", *opts, expect=1)
        if "no such job" not in err:
            fail(f"lmk job 9999: {err}")
        out, _ = lmk("--json", "job", "9999", *opts, expect=1)
        if "no such job" not in json.loads(out)["error"]:
            fail(f"lmk --json job 9999: {out}")
        # Neither a token nor MUNGE: where munged runs (a login node, a
        # machine a Slurm test left it on) lmk rightly proves its user with
        # it, so the test withholds that credential by naming a socket that
        # does not exist, and says so.
        no_munged = os.path.join(store.dir, "no-munged.socket")
        _, err = lmk("jobs", "--store", store.url(), "--munge-socket", no_munged, expect=1)
        if "MUNGE credential" not in err or "token" not in err:
            fail(f"lmk jobs without a token or a MUNGE credential: {err}")
        _, err = lmk("jobs", "--since", "yesterday", *opts, expect=1)
        if "since" not in err:
            fail(f"lmk jobs --since yesterday: {err}")
        _, err = lmk("frobnicate", *opts, expect=1)
        if "Unknown command" not in err:
            fail(f"lmk frobnicate: {err}")
        lmk("top", "--libs", "--exes", *opts, expect=1)
        _, err = lmk("jobs", "--store", "http://127.0.0.1:1", "--token-file", tokens, expect=1)
        if "Failed to reach" not in err:
            fail(f"lmk with no store: {err}")
        # The same token-file policy as lmkd and lmk-store: others must not read it.
        os.chmod(tokens, 0o644)
        _, err = lmk("jobs", *opts, expect=1)
        if f"chmod 600 {tokens}" not in err:
            fail(f"lmk with a world-readable token file: {err}")
        os.chmod(tokens, 0o600)
        out, _ = lmk("--help")
        if "lmk [OPTIONS] COMMAND" not in out:
            fail("lmk --help")


if __name__ == "__main__":
    main()
