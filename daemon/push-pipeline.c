/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch-build.h"
#include "log.h"
#include "push-pipeline.h"
#include "util.h"

void pushing_done(Pushing *p) {
        inventory_watch_stop(p->inventory);
        pusher_stop(p->pusher);
        spool_free(p->spool);
        free(p->boot_id);
        node_software_done(&p->software);
}

int pushing_start(Pushing *p, const LmkdConfig *o, const char *host, const LibFamilies *families) {
        _cleanup_free_ char *token = NULL, *why = NULL, *spool_why = NULL;
        const char *spool = o->spool_dir ?: LMK_STATE_DIR "/spool";
        int r;

        if (!o->token_file)
                return log_error_errno(-EINVAL, "--store needs --token-file (or [store] token_file).");
        r = read_token_file(o->token_file, &token, &why);
        if (r < 0 && why)
                return log_error_errno(r, "%s", why);
        if (r < 0)
                return log_error_errno(r, "Failed to read token file %s: %m", o->token_file);
        r = read_boot_id(&p->boot_id);
        if (r < 0)
                return log_error_errno(r, "Failed to read the boot id: %m");
        snprintf(p->node, sizeof(p->node), "%s", o->node_name ?: host);
        r = spool_open(spool, o->spool_max_bytes, &p->spool, &spool_why);
        if (r < 0 && spool_why)
                return log_error_errno(r, "%s", spool_why);
        if (r < 0)
                return log_error_errno(r, "Failed to open spool directory %s: %m", spool);
        r = pusher_start(p->spool, o->store_url, token, &p->pusher);
        explicit_bzero(token, strlen(token));
        if (r < 0)
                return log_error_errno(r, "Failed to start pushing to %s: %m", o->store_url);
        r = node_software_scan(families, NULL, &p->software);
        if (r < 0)
                return log_error_errno(r, "Failed to look for installed libraries: %m");
        log_debug("Looked at %zu library files: %zu families installed.", p->software.files, p->software.n);
        r = inventory_watch_start(o, &p->inventory);
        if (r < 0)
                return log_error_errno(r, "Failed to start the software inventory: %m");
        p->interval_start = (double) now_ns(CLOCK_REALTIME) / 1e9;
        log_info("Pushing to %s every %u s; spool %s (id %s).", o->store_url, o->push_interval, spool,
                 spool_id(p->spool));
        return 0;
}

/* Ends the interval: its histogram becomes a batch in the spool. */
int pushing_flush(Pushing *p, Monitor *m, const LmkdConfig *o) {
        _cleanup_free_ void *gz = NULL;
        _cleanup_free_ char *inventory = NULL;
        char digest[65];
        SpoolStats ss;
        PushStats ps;
        size_t size;
        uint64_t seq;
        BatchInfo info;
        Interval iv;
        int r;

        monitor_close_interval(m, false, false, p->interval_start, &iv);
        spool_stats(p->spool, &ss);
        pusher_stats(p->pusher, &ps);
        r = spool_next_seq(p->spool, &seq);
        if (r < 0)
                return log_error_errno(r, "Failed to reserve a batch number in the spool: %m");
        info = (BatchInfo) {
                .node = p->node,
                .boot_id = p->boot_id,
                .spool_id = spool_id(p->spool),
                .cluster = o->cluster,
                .seq = seq,
                .spool = &ss,
                .push = &ps,
                .software = &p->software,
                .node_type = p->node_type,
        };
        r = inventory_watch_pending(p->inventory, &inventory, digest);
        if (r < 0)
                log_oom();
        info.inventory = inventory;
        r = batch_build(&iv, &info, &gz, &size);
        if (r < 0)
                return log_error_errno(r, "Failed to build batch %" PRIu64 ": %m", seq);
        r = spool_put(p->spool, seq, gz, size);
        if (r < 0)
                /* the data of this interval is lost, but sampling goes on */
                log_error_errno(r, "Failed to spool batch %" PRIu64 ": %m", seq);
        else {
                if (inventory)
                        inventory_watch_spooled(p->inventory, digest);
                pusher_kick(p->pusher);
        }
        monitor_reset_interval(m);
        p->interval_start = iv.end;
        return 0;
}

