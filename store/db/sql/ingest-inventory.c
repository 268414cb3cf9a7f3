/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A batch's software inventory (schema/0011): the node's packages, and the
 * files of packages new to the store. */
#include <errno.h>
#include <stdbool.h>

#include "db/sql/ingest-inventory.h"

static int package_id(IngestCtx *x, const BatchPackage *p, int64_t *ret, bool *ret_new) {
        DbStmt *st;
        int r;

        for (int pass = 0; pass < 2; pass++) {
                if ((r = conn_stmt(&x->s->writer, pass == 0 ? STMT_PACKAGE_INSERT : STMT_PACKAGE_SELECT, &st)) < 0 ||
                    (r = bind_nullable_text(st, 1, p->manager)) < 0 ||
                    (r = bind_nullable_text(st, 2, p->name)) < 0 ||
                    (r = bind_nullable_text(st, 3, p->version)) < 0 ||
                    (r = bind_nullable_text(st, 4, p->arch ?: "")) < 0 ||
                    (r = bind_nullable_text(st, 5, p->hash ?: "")) < 0 ||
                    (r = bind_nullable_text(st, 6, p->prefix ?: "")) < 0 ||
                    (pass == 0 && (r = db_bind_int(st, 7, p->size)) < 0))
                        return r;
                r = step_id(st, ret);
                if (r != -ENOENT) {
                        if (pass == 0)
                                db_reset(st);
                        *ret_new = pass == 0;
                        return r;
                }
        }
        return -EIO; /* neither inserted nor found */
}

/* The node's software, when the batch carries it and it is not what the
 * store has for the node: the node's packages replaced, packages new to
 * the store added with their files (a package of the same manager, name,
 * version, arch, hash and prefix has the same files wherever it is). */
int ingest_inventory(IngestCtx *x, int64_t now) {
        const BatchInventory *inv = x->b->inventory;
        DbStmt *st;
        int r, rc;

        if (!inv)
                return 0;
        if ((r = conn_stmt(&x->s->writer, STMT_NODE_DIGEST, &st)) < 0 || (r = db_bind_int(st, 1, x->node_id)) < 0)
                return r;
        rc = db_step(st);
        if (rc == 1 && db_column_text(st, 0) && streq(db_column_text(st, 0), inv->digest)) {
                db_reset(st);
                return 0;
        }
        db_reset(st);
        if ((r = conn_stmt(&x->s->writer, STMT_NODE_PACKAGES_CLEAR, &st)) < 0 ||
            (r = db_bind_int(st, 1, x->node_id)) < 0 || (r = db_execute(st, 0)) < 0)
                return r;
        for (size_t i = 0; i < inv->n_packages; i++) {
                const BatchPackage *p = &inv->packages[i];
                int64_t id;
                bool added;

                r = package_id(x, p, &id, &added);
                if (r < 0)
                        return r;
                for (size_t k = 0; added && k < p->n_files; k++)
                        if ((r = conn_stmt(&x->s->writer, STMT_PACKAGE_FILE_INSERT, &st)) < 0 ||
                            (r = db_bind_int(st, 1, id)) < 0 || (r = bind_nullable_text(st, 2, p->files[k])) < 0 ||
                            (r = db_execute(st, 0)) < 0)
                                return r;
                if ((r = conn_stmt(&x->s->writer, STMT_NODE_PACKAGE_INSERT, &st)) < 0 ||
                    (r = db_bind_int(st, 1, x->node_id)) < 0 || (r = db_bind_int(st, 2, id)) < 0 ||
                    (r = db_execute(st, 0)) < 0)
                        return r;
        }
        if ((r = conn_stmt(&x->s->writer, STMT_NODE_INVENTORY_SET, &st)) < 0 ||
            (r = bind_nullable_text(st, 1, inv->digest)) < 0 || (r = db_bind_int(st, 2, now)) < 0 ||
            (r = db_bind_int(st, 3, x->node_id)) < 0)
                return r;
        return db_execute(st, 0);
}
