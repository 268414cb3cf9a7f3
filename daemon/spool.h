/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "batch-format.h"
#include "macro.h"

/* Batches waiting for the store, one file each ("<seq>.json.gz", written to
 * a temporary name, fsync'd and renamed), so a batch is either whole on disk
 * or not there, across lmkd restarts, store outages and power loss. The
 * next sequence number is kept in "seq" before it is used, so a restarted
 * lmkd never reuses one; "id" holds the spool's random id, made with the
 * spool, so that a new (wiped) spool's numbers never meet an old one's at
 * the store. The spool is bounded: beyond max_bytes the oldest batches are
 * dropped (and counted), and so they are when its file system is full.
 * Unreadable files are moved to "corrupt/", batches the store refused to
 * "rejected/". Safe to use from the sampling thread (put) and the push
 * thread (oldest/remove/reject) at once.
 *
 * The directory is lmkd's alone: it must be a directory (not a symlink to
 * one), owned by lmkd's user and writable by nobody else, and one process
 * holds it at a time (a lock on "lock", which names its pid). lmkd deletes
 * only names it writes ("<20 digits>.json.gz", and its temporary files
 * "<name>.tmp" of "seq", "id", "probe" and batches), and only regular files
 * of its user. */

typedef struct SpoolStats {
        uint64_t spooled;       /* batches written */
        uint64_t sent;          /* removed after the store took them */
        uint64_t rejected;      /* the store refused them for good */
        uint64_t dropped;       /* removed unsent: to stay within the bound, or for room */
        uint64_t dropped_for_space; /* of dropped, to make room on a full file system */
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

/* Opens (creating it if need be), locks and checks the spool: it must be
 * writable (a probe file is written, fsync'd and removed) unless its file
 * system is full, which sampling outlives. On failure *ret_error, when not
 * NULL, says what is wrong in the admin's terms (free() it; NULL when out of
 * memory): -ELOOP a symlink, -EPERM owner or mode, -EBUSY in use by another
 * process, -EBADMSG a damaged "id" or a "seq" or "id" lmkd did not write. */
int spool_open(const char *dir, size_t max_bytes, Spool **ret, char **ret_error);
Spool *spool_free(Spool *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Spool *, spool_free);
const char *spool_id(const Spool *s);

/* Reserves the next sequence number (persisted before it is returned). */
int spool_next_seq(Spool *s, uint64_t *ret);
/* Stores a batch (gzip'd JSON) under its sequence number. When the file
 * system is full (ENOSPC, EDQUOT), the oldest batches are dropped until it
 * fits (counted in dropped_for_space); the same holds for spool_next_seq(). */
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
