#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs test-db-postgresql (the C test of store/db/postgresql/db-postgresql.c,
given as the argument) against a private PostgreSQL server, and restarts,
halts or resumes that server when the C side asks through a pipe: what a
client sees of a server going away cannot be arranged from inside one
process. Skips (77) without PostgreSQL."""
import os
import subprocess
import sys

import lmktest
import pgserver


def main():
    binary = sys.argv[1]
    pg = pgserver.start_or_skip()
    to_c_r, to_c_w = os.pipe()
    from_c_r, from_c_w = os.pipe()
    env = dict(os.environ,
               LMK_TEST_PG_URI=pg.uri,
               LMK_TEST_PG_DSN=pg.dsn,
               LMK_TEST_PG_CONTROL=f"{from_c_w} {to_c_r}")
    # Only the server named here: no site settings from the environment.
    for k in [k for k in env if k.startswith("PG")]:
        del env[k]
    proc = subprocess.Popen([binary], env=env, pass_fds=(from_c_w, to_c_r))
    os.close(from_c_w)
    os.close(to_c_r)
    actions = {"restart": pg.restart, "halt": pg.halt, "resume": pg.resume}
    with os.fdopen(from_c_r, "r") as requests, os.fdopen(to_c_w, "w") as replies:
        for line in requests:  # ends when the C test exits
            what = line.strip()
            if what not in actions:
                lmktest.log(f"test-db-postgresql asked for {what!r}")
                proc.kill()
                break
            actions[what]()
            replies.write("ok\n")
            replies.flush()
    rc = proc.wait()
    pg.stop()
    sys.exit(rc if rc >= 0 else 128 - rc)


if __name__ == "__main__":
    main()
