/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "db/db.h"

static bool startswith_scheme(const char *s, const char *scheme) {
        return strncmp(s, scheme, strlen(scheme)) == 0;
}

int db_driver_for(const char *db, const DbDriver **ret_driver, const char **ret_location) {
        const char *colon = strchr(db, ':'), *slash = strchr(db, '/');
        bool postgresql;

        if (startswith_scheme(db, "sqlite:")) {
                *ret_driver = &db_sqlite_driver;
                *ret_location = db + strlen("sqlite:");
                return 0;
        }
        /* libpq takes the URI or keyword string as it is. A path that holds
         * '=' is still a path when it starts like one. */
        postgresql = startswith_scheme(db, "postgresql://") || startswith_scheme(db, "postgres://") ||
                     (strchr(db, '=') && db[0] != '/' && db[0] != '.');
        if (postgresql) {
#if HAVE_LIBPQ
                *ret_driver = &db_postgresql_driver;
                *ret_location = db;
                return 0;
#else
                return -EPROTONOSUPPORT;
#endif
        }
        /* Any other scheme: a prefix before the first ':' that is not part
         * of a path. */
        if (colon && (!slash || colon < slash))
                return -EPROTONOSUPPORT;
        *ret_driver = &db_sqlite_driver;
        *ret_location = db;
        return 0;
}
