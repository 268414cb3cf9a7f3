/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch-build.h"
#include "http-post.h"
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
        uint64_t mono;
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
        if (o->ca_file) {
                _cleanup_free_ char *ca_why = NULL;

                r = http_check_ca_file(o->ca_file, &ca_why);
                if (r < 0)
                        return log_error_errno(r, "Invalid [store] ca_file (--ca-file): %s.", ca_why ?: o->ca_file);
        }
        r = pusher_start(p->spool, o->store_url, token, o->ca_file, &p->pusher);
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
        mono = now_ns(CLOCK_MONOTONIC);
        interval_clock_begin(&p->clock, mono, (int64_t) now_ns(CLOCK_REALTIME));
        log_info("Pushing to %s every %u s; spool %s (id %s).", o->store_url, o->push_interval, spool,
                 spool_id(p->spool));
        return 0;
}

/* What the spool could not take is counted always and said once while the
 * trouble lasts, and when it ends, with what was lost meanwhile. */
static void spool_outcome(Pushing *p, int r, uint64_t samples, const SpoolStats *before, const SpoolStats *after) {
        uint64_t dropped = after->dropped_for_space - before->dropped_for_space;
        const char *dir = spool_dir(p->spool);

        if (!p->spool_error && !p->spool_dropping && (r < 0 || dropped > 0)) {
                p->trouble_intervals = p->intervals_unspooled;
                p->trouble_samples = p->samples_unspooled;
                p->trouble_dropped = before->dropped_for_space;
        }
        if (dropped > 0 && !p->spool_dropping) {
                log_warning("The file system of spool %s is full: dropped %" PRIu64 " of its oldest batches to make "
                            "room, and lmkd drops the oldest while it stays full (lmkd_spool_dropped_for_space_total).",
                            dir, dropped);
                p->spool_dropping = true;
        }
        if (r < 0) {
                p->intervals_unspooled++;
                p->samples_unspooled += samples;
                if (r != p->spool_error)
                        log_error_errno(r, "Failed to write a batch to spool %s: %m. Its interval (%" PRIu64 " samples) "
                                        "is lost; sampling goes on, and lmkd counts the intervals it cannot spool "
                                        "(lmkd_intervals_unspooled_total) until the spool takes batches again.",
                                        dir, samples);
                p->spool_error = r;
                return;
        }
        if (dropped == 0 && (p->spool_error || p->spool_dropping)) {
                log_notice("Spool %s takes batches again (resumed): meanwhile %" PRIu64 " intervals (%" PRIu64 " samples) "
                           "could not be spooled and %" PRIu64 " batches were dropped to make room.", dir,
                           p->intervals_unspooled - p->trouble_intervals, p->samples_unspooled - p->trouble_samples,
                           after->dropped_for_space - p->trouble_dropped);
                p->spool_error = 0;
                p->spool_dropping = false;
        }
}

static int build_batch(Pushing *p, const Interval *iv, const LmkdConfig *o, uint64_t seq, const SpoolStats *ss,
                       void **ret_gz, size_t *ret_size, char **ret_inventory, char digest[static 65]) {
        PushStats ps;
        BatchInfo info;

        pusher_stats(p->pusher, &ps);
        info = (BatchInfo) {
                .node = p->node,
                .boot_id = p->boot_id,
                .spool_id = spool_id(p->spool),
                .cluster = o->cluster,
                .seq = seq,
                .spool = ss,
                .push = &ps,
                .software = &p->software,
                .node_type = p->node_type,
        };
        if (inventory_watch_pending(p->inventory, ret_inventory, digest) < 0)
                log_oom();
        info.inventory = *ret_inventory;
        return batch_build(iv, &info, ret_gz, ret_size);
}

void pushing_flush(Pushing *p, Monitor *m, const LmkdConfig *o, bool final) {
        _cleanup_free_ void *gz = NULL;
        _cleanup_free_ char *inventory = NULL;
        uint64_t mono = now_ns(CLOCK_MONOTONIC), samples, seq = 0;
        int64_t real = (int64_t) now_ns(CLOCK_REALTIME);
        SpoolStats ss, after;
        char digest[65];
        double start, end;
        size_t size;
        Interval iv;
        int r;

        interval_clock_times(&p->clock, mono, &start, &end);
        monitor_close_interval(m, final, false, start, end, &iv);
        samples = histogram_samples(iv.hist);
        spool_stats(p->spool, &ss);
        r = spool_next_seq(p->spool, &seq);
        if (r >= 0) {
                r = build_batch(p, &iv, o, seq, &ss, &gz, &size, &inventory, digest);
                if (r < 0) {
                        /* not the spool's trouble: said each time */
                        log_error_errno(r, "Failed to build batch %" PRIu64 ": %m; its interval (%" PRIu64 " samples) "
                                        "is lost.", seq, samples);
                        p->intervals_unspooled++;
                        p->samples_unspooled += samples;
                        goto next;
                }
                r = spool_put(p->spool, seq, gz, size);
        }
        spool_stats(p->spool, &after);
        spool_outcome(p, r, samples, &ss, &after);
        if (r >= 0) {
                if (inventory)
                        inventory_watch_spooled(p->inventory, digest);
                pusher_kick(p->pusher);
        }
next:
        monitor_reset_interval(m);
        interval_clock_begin(&p->clock, mono, real);
}

int pushing_check_clock(Pushing *p, Monitor *m, const LmkdConfig *o) {
        int64_t step = interval_clock_step(&p->clock, now_ns(CLOCK_MONOTONIC), (int64_t) now_ns(CLOCK_REALTIME));
        int r;

        if (step == 0)
                return 0;
        p->clock_steps++;
        log_warning("The wall clock stepped by %+.3f s: lmkd ends the interval here and begins the next at the new "
                    "time (lmkd_clock_steps_total).", (double) step / 1e9);
        /* what the rings hold is of the interval that ends here (a quiet
         * lmkd drains every --quiet-poll-ms): in its time, not the new one */
        r = monitor_tick_in_frame(m, p->clock.offset);
        if (r < 0)
                return r;
        pushing_flush(p, m, o, false);
        jobs_clock_stepped(monitor_jobs(m), (double) step / 1e9);
        return 0;
}
