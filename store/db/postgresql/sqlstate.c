/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "db/postgresql/sqlstate.h"

int pg_sqlstate_to_errno(const char *s) {
        if (!s || strlen(s) != 5)
                return -EIO;

        /* The transaction was rolled back: running it again may succeed. */
        if (strcmp(s, "40001") == 0 || strcmp(s, "40P01") == 0)
                return -EAGAIN;
        /* Class 08 (connection exception) and the server going down
         * (admin_shutdown, crash_shutdown, cannot_connect_now) leave the
         * session gone. */
        if (strncmp(s, "08", 2) == 0 || strcmp(s, "57P01") == 0 || strcmp(s, "57P02") == 0 ||
            strcmp(s, "57P03") == 0)
                return -ECONNRESET;
        /* Class 23: integrity constraint violation (unique, foreign key,
         * check, not null). */
        if (strncmp(s, "23", 2) == 0)
                return -EEXIST;
        if (strcmp(s, "22003") == 0) /* numeric_value_out_of_range */
                return -EOVERFLOW;
        if (strcmp(s, "53100") == 0) /* disk_full */
                return -ENOSPC;
        if (strcmp(s, "42501") == 0) /* insufficient_privilege */
                return -EACCES;
        if (strcmp(s, "53200") == 0) /* out_of_memory */
                return -ENOMEM;
        /* lock_not_available: lock_timeout, which the driver sets from
         * busy_timeout_ms, ran out (SQLite's SQLITE_BUSY). */
        if (strcmp(s, "55P03") == 0)
                return -EBUSY;
        /* Class XX: data_corrupted, index_corrupted. */
        if (strcmp(s, "XX001") == 0 || strcmp(s, "XX002") == 0)
                return -EUCLEAN;
        return -EIO;
}
