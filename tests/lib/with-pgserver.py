#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Runs a test program (the arguments) against a private PostgreSQL server
(pgserver.py): its libpq URI in LMK_TEST_PG_URI and keyword string in
LMK_TEST_PG_DSN, no other PG* variables, so that the test reaches this
server only. Exits with the program's status, and removes the server
afterwards. Skips (77) with the reason where no server can start.

For C tests that run on both backends: without LMK_TEST_PG_URI they use
SQLite, under this wrapper PostgreSQL."""
import os
import subprocess
import sys

import lmktest
import pgserver


def main():
    if len(sys.argv) < 2:
        lmktest.fail("usage: with-pgserver.py PROGRAM [ARG...]")
    pg = pgserver.start_or_skip()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(LMK_TEST_PG_URI=pg.uri, LMK_TEST_PG_DSN=pg.dsn)
    try:
        rc = subprocess.run(sys.argv[1:], env=env).returncode
    finally:
        pg.stop()
    sys.exit(rc if rc >= 0 else 128 - rc)


if __name__ == "__main__":
    main()
