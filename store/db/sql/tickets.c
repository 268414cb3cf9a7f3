/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Login tickets used (use_ticket): the stores of a site share the session
 * key and the database, so a ticket is recorded where all of them look,
 * and works once across them (docs/web.md). */
#include <errno.h>

#include "db/sql/sql-internal.h"

/* Rows stay this long past their ticket's expiry before they go: the
 * stores' clocks may differ, and one whose clock is behind still takes a
 * ticket that another's has seen expire. */
#define TICKET_KEEP_S 3600

int sql_use_ticket(Storage *base, uint64_t nonce, int64_t expires, int64_t now) {
        SqlStorage *s = (SqlStorage *) base;
        Conn *c = &s->writer;
        int64_t n = 0;
        DbStmt *st;
        int r;

        db_purpose_set("recording a used login ticket");
        pthread_mutex_lock(&s->write_lock);
        /* Outside any transaction: each statement commits on its own, and
         * two stores inserting one nonce at once insert it once (the key).
         * No writers' lock: nothing else writes these rows. */
        r = conn_stmt(c, STMT_TICKET_PRUNE, &st);
        if (r >= 0 && (r = db_bind_int(st, 1, now - TICKET_KEEP_S)) >= 0)
                r = step_changes(st, &n);
        if (r >= 0)
                r = conn_stmt(c, STMT_TICKET_USE, &st);
        if (r >= 0 && (r = db_bind_int(st, 1, (int64_t) nonce)) >= 0 && (r = db_bind_int(st, 2, expires)) >= 0)
                r = step_changes(st, &n);
        pthread_mutex_unlock(&s->write_lock);
        if (r < 0)
                return r;
        return n == 1 ? 0 : -EALREADY;
}
