/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

#include "spool.h"

/* Sends spooled batches to lmk-store from a thread of its own, oldest
 * first, so a slow or absent store never stalls sampling. A batch leaves
 * the spool only when the store answered 200 (stored, or already stored: a
 * retry is harmless); a 4xx that retrying cannot fix moves it to
 * rejected/, a 409 (the store holds the batch's key with other content,
 * docs/batch-format.md) among them. Anything else waits with exponential
 * backoff and jitter. */

typedef struct PushStats {
        uint64_t attempts;
        uint64_t failures;              /* network errors and 5xx */
        uint64_t conflicts;             /* 409: the store holds the batch's key with other content */
        uint64_t last_status;           /* HTTP status of the last answer, 0 = none */
        uint64_t backoff_ms;            /* the current wait after failures, 0 = none */
} PushStats;

typedef struct Pusher Pusher;

/* ca_file: PEM certificates trusted for https:// besides the system's; NULL: none. */
int pusher_start(Spool *spool, const char *store_url, const char *token, const char *ca_file, Pusher **ret);
/* Asks the pusher to look at the spool now (a batch was just written). */
void pusher_kick(Pusher *p);
/* Waits up to timeout_ms for the spool to empty while the store answers;
 * returns early when it does not. For a clean shutdown. */
void pusher_drain(Pusher *p, unsigned timeout_ms);
/* Stops the thread; an attempt in progress finishes or times out first. */
Pusher *pusher_stop(Pusher *p);
void pusher_stats(Pusher *p, PushStats *ret);

/* Reads lmkd's token file: the token alone on its first line, under the
 * policy of common/token-file.h. On failure *ret_error (if not NULL) says
 * what is wrong with the file and how to fix it. */
int read_token_file(const char *path, char **ret, char **ret_error);
