/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The writer's WAL checkpoints on a thread of their own (wal-checkpoint.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "macro.h"
#include "db/sqlite/wal-checkpoint.h"

/* Frames (pages) written to the WAL since the last checkpoint past which
 * another is asked for: 16 MiB of 4 KiB pages, a quarter of what SQLite's
 * own limit was here (wal_autocheckpoint = 16384), so that each takes a
 * short while, and each syncs the database file once. */
#define CHECKPOINT_FRAMES 4096
/* Past this, the writer checkpoints itself after its commit, as SQLite
 * would: the WAL starts over only when a writer finds it copied whole, and
 * the thread's checkpoints, which run while the writer commits, may seldom
 * leave it so. */
#define CHECKPOINT_FRAMES_MAX (16 * CHECKPOINT_FRAMES)

struct WalCheckpointer {
        sqlite3 *db; /* the thread's own connection */
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool wanted, running, stop;
        int checkpointed; /* frames of the WAL the last checkpoint copied */
};

static void *checkpoint_thread(void *userdata) {
        WalCheckpointer *w = userdata;
        int copied;

        pthread_mutex_lock(&w->lock);
        for (;;) {
                while (!w->wanted && !w->stop)
                        pthread_cond_wait(&w->cond, &w->lock);
                if (w->stop)
                        break;
                w->wanted = false;
                w->running = true;
                pthread_mutex_unlock(&w->lock);
                /* Another checkpoint going on (SQLITE_BUSY), or a failure:
                 * the next commit asks again, and the writer's own limit
                 * bounds the WAL whatever happens here. */
                if (sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, &copied) != SQLITE_OK)
                        copied = 0;
                pthread_mutex_lock(&w->lock);
                w->running = false;
                w->checkpointed = MAX(copied, 0);
        }
        pthread_mutex_unlock(&w->lock);
        return NULL;
}

/* Called by SQLite after each of the writer's commits, its write lock
 * released, with the frames now in the WAL. */
static int on_commit(void *userdata, sqlite3 *db, const char *name, int frames) {
        WalCheckpointer *w = userdata;

        if (frames >= CHECKPOINT_FRAMES_MAX) {
                (void) sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
                return SQLITE_OK;
        }
        pthread_mutex_lock(&w->lock);
        if (frames < w->checkpointed) /* the WAL started over */
                w->checkpointed = 0;
        if (frames - w->checkpointed >= CHECKPOINT_FRAMES && !w->running) {
                w->wanted = true;
                pthread_cond_signal(&w->cond);
        }
        pthread_mutex_unlock(&w->lock);
        return SQLITE_OK;
}

int wal_checkpointer_start(sqlite3 *writer, const char *path, WalCheckpointer **ret) {
        WalCheckpointer *w;
        int r;

        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        /* A connection checkpoints only once it has seen the database in
         * WAL mode (else sqlite3_wal_checkpoint_v2() does nothing). */
        if (sqlite3_open_v2(path, &w->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
            sqlite3_exec(w->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) != SQLITE_OK) {
                sqlite3_close_v2(w->db);
                free(w);
                return -EIO;
        }
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->cond, NULL);
        r = -pthread_create(&w->thread, NULL, checkpoint_thread, w);
        if (r < 0) {
                pthread_mutex_destroy(&w->lock);
                pthread_cond_destroy(&w->cond);
                sqlite3_close_v2(w->db);
                free(w);
                return r;
        }
        /* replaces SQLite's own checkpoints after commits (wal_autocheckpoint) */
        sqlite3_wal_hook(writer, on_commit, w);
        *ret = w;
        return 0;
}

void wal_checkpointer_stop(WalCheckpointer *w, sqlite3 *writer) {
        if (!w)
                return;
        sqlite3_wal_hook(writer, NULL, NULL);
        pthread_mutex_lock(&w->lock);
        w->stop = true;
        pthread_cond_signal(&w->cond);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL);
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->cond);
        sqlite3_close_v2(w->db);
        free(w);
}
