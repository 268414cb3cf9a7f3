/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* lmk-store migrate --from sqlite:PATH --to postgresql://…: moves a whole
 * store from SQLite into an empty PostgreSQL database (docs/lmk-store.md).
 * argv[0] is "migrate". Returns the process's exit code: EXIT_SUCCESS when
 * the copy was made and verified, EXIT_FAILURE with the reason logged. */
int migrate_main(int argc, char **argv);
