/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Batches waiting for the store, one file each ("<seq>.json.gz", written to
 * a temporary name, fsync'd and renamed), so a batch is either whole on disk
 * or not there, across lmkd restarts, store outages and power loss. The
 * next sequence number is kept in "seq" before it is used, so a restarted
 * lmkd never reuses one. The spool is bounded: beyond max_bytes the oldest
 * batches are dropped (and counted). Unreadable files are moved to
 * "corrupt/", batches the store refused to "rejected/". Safe to use from the
 * sampling thread (put) and the push thread (oldest/remove/reject) at once. */

typedef struct SpoolStats {
        uint64_t spooled;       /* batches written */
        uint64_t sent;          /* removed after the store took them */
        uint64_t rejected;      /* the store refused them for good */
        uint64_t dropped;       /* removed unsent to stay within the bound */
        uint64_t corrupt;       /* unreadable files found */
        uint64_t queued;        /* batches on disk now */
        uint64_t queued_bytes;
} SpoolStats;

typedef struct Spool Spool;

/* A file set aside into corrupt/, and why ("truncated at byte N of M",
 * "CRC mismatch: …", "bad header: …"), for the daemon to say once. */
typedef struct SpoolCorrupt {
        char name[32];
        char reason[160];
} SpoolCorrupt;

int spool_open(const char *dir, size_t max_bytes, Spool **ret);
Spool *spool_free(Spool *s);

/* Reserves the next sequence number (persisted before it is returned). */
int spool_next_seq(Spool *s, uint64_t *ret);
/* Stores a batch (gzip'd JSON) under its sequence number. */
int spool_put(Spool *s, uint64_t seq, const void *data, size_t size);
/* The oldest batch, read whole (malloc'd). -ENOENT if none. */
int spool_oldest(Spool *s, uint64_t *ret_seq, void **ret_data, size_t *ret_size);
int spool_remove(Spool *s, uint64_t seq);
int spool_reject(Spool *s, uint64_t seq);
void spool_stats(Spool *s, SpoolStats *ret);
/* Hands over (malloc'd, *ret) the files set aside since the last call and
 * returns how many; each file is handed over once. */
size_t spool_take_corrupt(Spool *s, SpoolCorrupt **ret);
const char *spool_dir(const Spool *s);

/* gzip of a buffer (zlib), for batches. */
int gzip_buffer(const void *in, size_t n, void **ret, size_t *ret_size);
