/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The nodes that pushed batches (list_nodes). */
#include <errno.h>

#include "db/sql/sql-internal.h"

int sql_list_nodes(Storage *base, NodeList *ret) {
        SqlStorage *s = (SqlStorage *) base;
        NodeList l = {};
        size_t alloc = 0;
        DbStmt *st;
        Conn *c;
        int r, rc;

        db_purpose_set("listing nodes");
        reader_acquire(s, &c);
        r = conn_stmt(c, STMT_NODES, &st);
        if (r < 0)
                goto finish;
        while ((rc = db_step(st)) == 1) {
                NodeInfo *n;

                r = grow((void **) &l.items, l.n, &alloc, sizeof(NodeInfo));
                if (r < 0)
                        goto finish;
                n = &l.items[l.n++];
                n->name = column_strdup(st, 0, &r);
                n->hostname = column_strdup(st, 1, &r);
                n->cluster = column_strdup(st, 2, &r);
                n->boot_id = column_strdup(st, 3, &r);
                n->cpus = db_column_int(st, 4);
                n->last_seq = db_column_int(st, 5);
                n->batches = db_column_int(st, 6);
                n->samples = db_column_int(st, 7);
                n->samples_lost = db_column_int(st, 8);
                n->first_seen = db_column_double(st, 9);
                n->last_seen = db_column_double(st, 10);
                n->last_push = db_column_int(st, 11);
                n->kernel = column_strdup(st, 20, &r);
                n->memory_bytes = db_column_null(st, 21) ? 0 : db_column_int(st, 21);
                if (r < 0 || (r = read_node_type(st, 12, &n->type)) < 0)
                        goto finish;
        }
        if (rc != 0)
                r = step_errno(rc);

finish:
        reader_release(s, c);
        if (r < 0) {
                node_list_free(&l);
                return r;
        }
        *ret = l;
        return 0;
}
