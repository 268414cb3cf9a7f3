/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>

#include "api/api.h"
#include "db/db.h"
#include "log.h"

/* The database's own message goes to the log, once, with what the store
 * was doing; the client learns only what it can act on, never SQL. */
void reply_storage_error(Reply *r, int error) {
        const char *msg = db_error_last();

        if (error == -EBUSY) {
                reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "database busy, try again");
                r->retry_after = 1;
                return;
        }
        if (msg)
                log_error_errno(error, "Database error while %s: %s", db_purpose(), msg);
        else
                log_error_errno(error, "Database error while %s: %m", db_purpose());
        db_error_clear();
        /* Unreachable now, there again soon (the drivers reconnect), or a
         * conflict that outlasted the retries: nodes keep the batch in
         * their spool and push it again. */
        if (error == -ECONNREFUSED || error == -ECONNRESET || error == -EAGAIN) {
                reply_error(r, MHD_HTTP_SERVICE_UNAVAILABLE, NULL, "database unavailable, try again");
                r->retry_after = 5;
                return;
        }
        if (error == -ENOSPC) {
                reply_error(r, MHD_HTTP_INSUFFICIENT_STORAGE, NULL, "database disk full, try again later");
                r->retry_after = DISK_FULL_RETRY_AFTER_S;
                return;
        }
        reply_error(r, MHD_HTTP_INTERNAL_SERVER_ERROR, NULL, "database error");
}
