#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""bench/store/run still runs against the store and schema of this tree.

The benchmark writes its query store with gendb's own SQL and its batches
with loadgen's own generator: a schema or batch change that forgets them
breaks the benchmark only, which nothing else runs. A tiny run here (a
few nodes for 2 s, 500 jobs), on SQLite or, as bench-store-pg, on
PostgreSQL: it must exit 0 and print every figure of its table, with and
without functions, and each query view's latency. The figures themselves
are the benchmark's to judge, not this test's."""
import os
import re
import subprocess

from lmktest import BUILD_ROOT, SOURCE_ROOT, check, log, skip

BACKEND = os.environ.get("LMK_TEST_BACKEND", "sqlite")
FIGURES = ("ingest rows/s", "with function rows", "store CPU ms per push", "functions per push", "job summary p99 ms",
           "30-day site query p99 ms", "30-day functions p99 ms", "account= p99 ms", "user0's view p99 ms")


def main():
    if BACKEND == "postgresql":
        import pgserver
        if not pgserver.bindir():
            skip("no PostgreSQL server to start (Debian package postgresql)")
    p = subprocess.run([os.path.join(SOURCE_ROOT, "bench", "store", "run"), BUILD_ROOT, "--backend", BACKEND,
                        "--rounds", "1", "--nodes", "5", "--duration", "2", "--jobs", "500", "--requests", "50"],
                       capture_output=True, text=True, timeout=600)
    log(p.stdout[-4000:])
    check(p.returncode == 0, f"bench/store/run exited {p.returncode}:\n{p.stderr[-4000:]}")
    table = p.stdout[p.stdout.index("medians over the rounds"):]
    for fig in FIGURES:
        m = re.search(rf"^\s*{re.escape(fig)}\s+([\d.]+)", table, re.M)
        check(m and float(m.group(1)) > 0, f"the table has no {fig!r}:\n{table}")
    # both ingest columns: batches with functions[] and without
    m = re.search(r"^\s*functions per push\s+(\d+)\s+(\d+)", table, re.M)
    check(m and int(m.group(1)) > 0 and int(m.group(2)) == 0,
          f"functions per push, with and without them: {m and m.groups()}")
    # function rows count on top of rows[] only where there are functions
    rows = re.search(r"^\s*ingest rows/s\s+(\d+)\s+(\d+)", table, re.M)
    both = re.search(r"^\s*with function rows\s+(\d+)\s+(\d+)", table, re.M)
    check(rows and both and int(both.group(1)) > int(rows.group(1)) and both.group(2) == rows.group(2),
          f"rows/s with and without function rows: {rows and rows.groups()} {both and both.groups()}")
    log("PASS")


if __name__ == "__main__":
    main()
