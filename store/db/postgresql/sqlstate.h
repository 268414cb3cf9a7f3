/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* The negative errno (db.h's list) a PostgreSQL error code stands for;
 * -EIO for codes without a closer meaning and for NULL (no code: libpq's
 * own errors). */
int pg_sqlstate_to_errno(const char *sqlstate);
