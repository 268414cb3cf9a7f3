#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""rusage-run.py OUT PROGRAM ARGS...: runs the program and writes the CPU
time and page faults the kernel accounted to it (wait4), and the wall-clock
time it took, as JSON to OUT."""
import json
import os
import sys
import time

t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    os.execv(sys.argv[2], sys.argv[2:])
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
with open(sys.argv[1], "w") as f:
    json.dump({"pid": pid, "cpu_s": ru.ru_utime + ru.ru_stime, "faults": ru.ru_minflt + ru.ru_majflt,
               "wall_s": wall, "status": status}, f)
sys.exit(os.waitstatus_to_exitcode(status))
