/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <time.h>

#include "api/api.h"
#include "batch/batch-parse.h"
#include "batch/inflate.h"
#include "db/db.h"
#include "log.h"
#include "util.h"

static void reply_rejected(Reply *reply, int r, const BatchError *err) {
        reply->reject_reason = r == -E2BIG ? "too-large" : r == -ENOMEM ? "error" : r == -EBADMSG ? "not-json" :
                               r == -EPROTONOSUPPORT ? "version" : "invalid";
        switch (r) {
        case -E2BIG:
                reply_error(reply, MHD_HTTP_CONTENT_TOO_LARGE, err->field, "%s", err->message);
                break;
        case -ENOMEM:
                reply_oom(reply);
                break;
        default: /* -EBADMSG, -EINVAL, -EPROTONOSUPPORT */
                reply_error(reply, MHD_HTTP_BAD_REQUEST, err->field[0] ? err->field : NULL, "%s%s%s",
                            err->field[0] ? err->field : "", err->field[0] ? ": " : "", err->message);
        }
}

/* The node is alive, and says how far behind its spool is (Lmk-Spool,
 * docs/api.md). A header the store cannot read costs the node nothing but
 * the backlog gauge. */
static void note_node_health(Server *s, Request *req, const char *node) {
        const char *spool = MHD_lookup_connection_value(req->connection, MHD_HEADER_KIND, "Lmk-Spool");
        int64_t batches = -1, bytes = -1;

        if (!s->node_health)
                return;
        if (spool && node_health_parse_spool(spool, &batches, &bytes) < 0)
                log_debug("Node %s sent an Lmk-Spool header the store does not read: %.64s", node, spool);
        if (node_health_pushed(s->node_health, node, batches, bytes) < 0)
                log_debug("Out of memory noting node %s's health.", node);
}

/* At most one line a minute says so: a node that keeps pushing batches
 * under stored keys (an older lmkd on a wiped spool, a stolen shared
 * token) would write one per push. */
#define CONFLICT_LOG_INTERVAL_NS (60 * UINT64_C(1000000000))

static void log_conflict(const Batch *b) {
        static atomic_uint_fast64_t next_ns, held;
        uint64_t now = now_ns(CLOCK_MONOTONIC), next = atomic_load(&next_ns), more;

        if (now < next || !atomic_compare_exchange_strong(&next_ns, &next, now + CONFLICT_LOG_INTERVAL_NS)) {
                atomic_fetch_add(&held, 1);
                return;
        }
        more = atomic_exchange(&held, 0);
        if (more > 0)
                log_warning("Refused batch %s/%s/%s/%" PRId64 ": its key was stored before with other content; "
                            "%" PRIu64 " more refused so since the last such message.", b->node, b->boot_id,
                            b->spool ?: "", b->seq, more);
        else
                log_warning("Refused batch %s/%s/%s/%" PRId64 ": its key was stored before with other content "
                            "(a spool made anew by an older lmkd, or a token pushing as another node).", b->node,
                            b->boot_id, b->spool ?: "", b->seq);
}

/* 409: nothing of the batch was stored; lmkd sets it aside for good. */
static void reply_conflict(Reply *reply, const Batch *b) {
        reply_error(reply, MHD_HTTP_CONFLICT, "batch.seq",
                    "batch %s/%s/%s/%" PRId64 " was already stored with other content", b->node, b->boot_id,
                    b->spool ?: "", b->seq);
        reply->reject_reason = "conflict";
        if (reply->json)
                json_object_object_add(reply->json, "conflict", json_object_new_boolean(true));
        log_conflict(b);
}

/* The database refused the batch for a full disk: 507, a 5xx, so that lmkd
 * keeps the batch and pushes it again. The episode is logged when it
 * starts and when it ends (note_written()), not once per push. */
static void reply_disk_full(Server *s, Reply *reply) {
        const char *msg = db_error_last();

        if (metrics_disk_full(&s->metrics, (int64_t) time(NULL)))
                log_error("Database disk full: batches are refused (507) until a write goes through again%s%s",
                          msg ? ": " : ".", msg ?: "");
        db_error_clear();
        reply_error(reply, MHD_HTTP_INSUFFICIENT_STORAGE, NULL, "database disk full, try again later");
        reply->retry_after = DISK_FULL_RETRY_AFTER_S;
        reply->reject_reason = "disk-full";
        reply->quiet = true;
}

/* A batch was written: the end of a full disk, if there was one. */
static void note_written(Server *s) {
        uint64_t refused;
        int64_t seconds;

        if (metrics_disk_ok(&s->metrics, (int64_t) time(NULL), &seconds, &refused))
                log_notice("Database writes resumed after %" PRId64 " s of full disk; %" PRIu64 " batches were "
                           "refused meanwhile, to be pushed again by their nodes.", seconds, refused);
}

/* Rejections are counted in api_ingest_replied(), which sees every answer
 * of the route, so that those decided before the body arrived count too. */
void api_ingest(Server *s, Request *req, Reply *reply) {
        _cleanup_(batch_freep) Batch *b = NULL;
        _cleanup_free_ char *inflated = NULL;
        _cleanup_(json_object_putp) json_object *o = NULL;
        const char *data = req->body ?: "";
        size_t size = req->body_size;
        uint64_t start = now_ns(CLOCK_MONOTONIC);
        IngestResult res;
        BatchError err;
        int r;

        if (req->gzip) {
                r = inflate_bounded(data, size, s->max_inflated, &inflated, &size);
                if (r == -EFBIG) {
                        reply_error(reply, MHD_HTTP_CONTENT_TOO_LARGE, NULL,
                                    "body inflates to more than the limit of %zu bytes", s->max_inflated);
                        return;
                }
                if (r == -ENOMEM) {
                        reply_oom(reply);
                        return;
                }
                if (r < 0) {
                        reply_error(reply, MHD_HTTP_BAD_REQUEST, NULL, "body is not valid gzip data");
                        reply->reject_reason = "not-json";
                        return;
                }
                data = inflated;
        } else if (size > s->max_inflated) {
                reply_error(reply, MHD_HTTP_CONTENT_TOO_LARGE, NULL,
                            "body is over the limit of %zu bytes", s->max_inflated);
                return;
        }

        r = batch_parse(data, size, &b, &err);
        if (r < 0) {
                log_debug("Rejected batch: %s: %s", err.field, err.message);
                reply_rejected(reply, r, &err);
                return;
        }
        /* The parsed batch holds what it needs; the text can go now. */
        free(TAKE_PTR(inflated));

        if (req->identity->node && !streq(req->identity->node, b->node)) {
                reply_error(reply, MHD_HTTP_FORBIDDEN, "batch.node",
                            "this token may only push batches of node %s", req->identity->node);
                return;
        }

        r = s->storage->ops->ingest(s->storage, b, (int64_t) time(NULL), &res, &err);
        if (r == -EOVERFLOW) {
                log_debug("Rejected batch of node %s: %s: %s", b->node, err.field, err.message);
                reply_rejected(reply, -EINVAL, &err);
                reply->reject_reason = "overflow";
                return;
        }
        if (r == -ENOSPC) {
                reply_disk_full(s, reply);
                return;
        }
        if (r < 0) {
                reply_storage_error(reply, r);
                return;
        }
        if (res.conflicting) {
                reply_conflict(reply, b);
                return;
        }
        if (res.metadata_conflicts > 0) {
                atomic_fetch_add(&s->metrics.metadata_conflicts, res.metadata_conflicts);
                /* Every node of a job sends the same claim, so a differing
                 * one is a misconfigured node or a stolen token: worth a
                 * warning, once per batch. */
                log_warning("Node %s claimed metadata that differs from the first claim of %" PRIu64
                            " job(s), kept the first claim: %s", b->node, res.metadata_conflicts, res.conflict);
        }
        metrics_observe_ingest(&s->metrics, (now_ns(CLOCK_MONOTONIC) - start) / 1000);
        note_node_health(s, req, b->node);
        if (res.duplicate)
                atomic_fetch_add(&s->metrics.batches_duplicate, 1);
        else {
                atomic_fetch_add(&s->metrics.batches_stored, 1);
                atomic_fetch_add(&s->metrics.rows_stored, res.rows);
                note_written(s);
                /* queued only: the lookups run in their own thread */
                symbols_queue_batch(s->symbols, b);
        }

        o = json_object_new_object();
        if (!o ||
            json_add(o, "status", json_object_new_string(res.duplicate ? "duplicate" : "stored")) < 0 ||
            json_add(o, "duplicate", json_object_new_boolean(res.duplicate)) < 0 ||
            json_add(o, "node", json_object_new_string(b->node)) < 0 ||
            json_add(o, "boot_id", json_object_new_string(b->boot_id)) < 0 ||
            json_add(o, "seq", json_object_new_int64(b->seq)) < 0 ||
            json_add(o, "rows", json_object_new_int64((int64_t) res.rows)) < 0)
                reply_oom(reply);
        else
                reply_json(reply, MHD_HTTP_OK, TAKE_PTR(o));
        /* A batch stored without an answer is not lost: the node's retry
         * is answered as a duplicate. */
}

/* The route's Route.replied. */
void api_ingest_replied(Server *s, const Reply *reply) {
        if (reply->status != MHD_HTTP_OK)
                metrics_count_ingest_rejected(&s->metrics, reply->reject_reason, reply->status);
}
