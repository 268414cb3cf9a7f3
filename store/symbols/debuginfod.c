/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "hashmap.h"
#include "log.h"
#include "symbols/debug-names.h"
#include "symbols/debuginfod.h"
#include "util.h"

#if HAVE_LIBDEBUGINFOD
#include <elfutils/debuginfod.h>

/* A build named a moment ago is not looked at again before this: each
 * batch of it would queue it, and its next unnamed offsets can wait. */
#define AGAIN_AFTER_NAMING_S 10
/* The most unnamed functions of a build one lookup names; more: queued again. */
#define NAMES_PER_LOOKUP 65536
/* The most builds remembered as not to be asked for again yet. */
#define NOT_BEFORE_MAX 65536
/* The client tries a query up to 3 times (DEBUGINFOD_RETRY_LIMIT 2), each
 * given up by the client after timeout_s without progress (-ETIME). The
 * lookup's own deadline is past those: when progress() cuts a query
 * short, the client answers -ENOENT and remembers the build as missing in
 * its cache for a while (cache_miss_s), which a time-out should not do. */
#define LOOKUP_ATTEMPTS 3
#define LOOKUP_SLACK_MS 2000

struct Symbols {
        SymbolsConfig config;
        Storage *storage;
        Metrics *metrics;
        debuginfod_client *client;
        pthread_t thread;
        bool started;

        pthread_mutex_t lock;
        pthread_cond_t wake;
        bool stopping;          /* under lock; stop also for the lookup in flight: */
        atomic_bool cancel;
        bool rescan;            /* the queue overflowed: look in the database once it drains */
        char *scan_after;       /* where the database's builds are walked on from; NULL: the first */
        char **queue;           /* a ring of config.queue_max build-ids, owned */
        size_t head, n;
        Hashmap *waiting;       /* the build-ids in the queue (keys are the queue's) */
        Hashmap *not_before;    /* build-id (owned) → monotonic second it may be asked for again */

        uint64_t deadline_ms;   /* of the lookup in flight (the thread's own) */
        bool cut_short;         /* progress() ended it: the client then says -ENOENT */
};

static uint64_t now_ms(void) {
        return now_ns(CLOCK_MONOTONIC) / 1000000;
}

bool symbols_supported(void) {
        return true;
}

/* Under lock. false: dropped, the queue full (then the database is
 * walked for it once the queue drains). */
static bool queue_locked(Symbols *s, const char *build_id, uint64_t now_s) {
        void *v;
        char *k;

        if (hashmap_get2(s->waiting, build_id, NULL, NULL) ||
            (hashmap_get2(s->not_before, build_id, &v, NULL) && (uint64_t) (uintptr_t) v > now_s))
                return true;
        if (s->n == s->config.queue_max || !(k = strdup(build_id))) {
                atomic_fetch_add(&s->metrics->debuginfod_dropped, 1);
                s->rescan = true;
                return false;
        }
        if (hashmap_put(s->waiting, k, NULL) < 0) {
                free(k);
                atomic_fetch_add(&s->metrics->debuginfod_dropped, 1);
                s->rescan = true;
                return false;
        }
        s->queue[(s->head + s->n++) % s->config.queue_max] = k;
        atomic_fetch_add(&s->metrics->debuginfod_queued, 1);
        atomic_store(&s->metrics->debuginfod_queue_length, s->n);
        pthread_cond_signal(&s->wake);
        return true;
}

void symbols_queue_batch(Symbols *s, const Batch *b) {
        const char *last = NULL;
        uint64_t now_s;

        if (!s)
                return;
        now_s = now_ms() / 1000;
        pthread_mutex_lock(&s->lock);
        for (size_t i = 0; i < b->n_functions; i++) {
                const BatchFunction *f = &b->functions[i];

                /* an unnamed one of a job (the store keeps no others) */
                if (f->offset == BATCH_NULL || !f->job || !*f->build_id || (last && streq(last, f->build_id)))
                        continue;
                last = f->build_id;
                (void) queue_locked(s, f->build_id, now_s);
        }
        pthread_mutex_unlock(&s->lock);
}

/* Under lock: build_id (owned) not to be asked for before until_s. */
static void remember_locked(Symbols *s, char *build_id, uint64_t until_s, uint64_t now_s) {
        const void *key;

        if (hashmap_get2(s->not_before, build_id, NULL, &key)) {
                (void) hashmap_replace(s->not_before, key, (void *) (uintptr_t) until_s, NULL);
                free(build_id);
                return;
        }
        if (hashmap_size(s->not_before) >= NOT_BEFORE_MAX) {
                /* forget those that may be asked for again; if none may, all */
                _cleanup_free_ char **gone = calloc(hashmap_size(s->not_before), sizeof(char *));
                size_t i = 0, n = 0;
                const void *k;
                void *v;

                while (gone && hashmap_iterate(s->not_before, &i, &v, &k))
                        if ((uint64_t) (uintptr_t) v <= now_s)
                                gone[n++] = (char *) k;
                for (size_t j = 0; j < n; j++) {
                        (void) hashmap_remove(s->not_before, gone[j]);
                        free(gone[j]);
                }
                if (n == 0) {
                        for (i = 0; hashmap_iterate(s->not_before, &i, &v, &k);)
                                free((char *) k);
                        hashmap_clear(s->not_before);
                }
        }
        if (hashmap_put(s->not_before, build_id, (void *) (uintptr_t) until_s) < 0)
                free(build_id);
}

/* The client's progress callback: a lookup past its time or a store
 * stopping cuts the transfer short. */
static int progress(debuginfod_client *c, long a, long b) {
        Symbols *s = debuginfod_get_user_data(c);

        (void) a;
        (void) b;
        if (atomic_load(&s->cancel) || now_ms() >= s->deadline_ms)
                s->cut_short = true;
        return s->cut_short;
}

/* Looks build_id up and stores what it names. Returns how long (seconds)
 * before it may be asked for again; -1: at once (more to name). */
static int64_t lookup(Symbols *s, const char *build_id) {
        Metrics *m = s->metrics;
        FunctionName *names = NULL;
        size_t n = 0;
        int dfd, efd, r;

        r = s->storage->ops->list_unnamed_functions(s->storage, build_id, NAMES_PER_LOOKUP, &names, &n);
        if (r < 0) {
                log_warning_errno(r, "debuginfod: failed to read the unnamed functions of build %s: %m", build_id);
                return AGAIN_AFTER_NAMING_S;
        }
        if (n == 0)
                return AGAIN_AFTER_NAMING_S;

        s->deadline_ms = now_ms() + (uint64_t) s->config.timeout_s * 1000 * LOOKUP_ATTEMPTS + LOOKUP_SLACK_MS;
        s->cut_short = false;
        dfd = debuginfod_find_debuginfo(s->client, (const unsigned char *) build_id, 0, NULL);
        /* the segments' file offsets are the executable's (funcname.h) */
        efd = dfd >= 0 ? debuginfod_find_executable(s->client, (const unsigned char *) build_id, 0, NULL) : -ENOENT;
        /* a lookup cut short was not answered, whatever the client says */
        if (s->cut_short && dfd < 0)
                dfd = -ETIMEDOUT;
        else if (s->cut_short && efd < 0)
                efd = -ETIMEDOUT;
        if (dfd < 0 || (efd < 0 && efd != -ENOENT)) {
                bool missing = dfd == -ENOENT;

                atomic_fetch_add(&m->debuginfod_lookups[missing ? METRICS_LOOKUP_MISSING : METRICS_LOOKUP_FAILED], 1);
                if (!missing)
                        log_info_errno(dfd < 0 ? dfd : efd, "debuginfod: lookup of build %s failed, trying again "
                                       "in %u s: %m", build_id, s->config.retry_s);
                if (dfd >= 0)
                        close(dfd);
                function_names_free(names, n);
                return s->config.retry_s;
        }
        r = debug_names_resolve(dfd, efd >= 0 ? efd : -1, build_id, names, n);
        close(dfd);
        if (efd >= 0)
                close(efd);
        /* Without the executable, a debug file that names nothing may just
         * lack the segments' file offsets: not stored as nameless, asked
         * for again later. */
        if (r < 0 || (r == 0 && efd < 0)) {
                atomic_fetch_add(&m->debuginfod_lookups[r < 0 ? METRICS_LOOKUP_FAILED : METRICS_LOOKUP_MISSING], 1);
                if (r < 0)
                        log_warning_errno(r, "debuginfod: the debug file of build %s names nothing (%s), trying "
                                          "again in %u s: %m", build_id,
                                          r == -ESTALE ? "another build" : "unreadable", s->config.retry_s);
                function_names_free(names, n);
                return s->config.retry_s;
        }
        atomic_fetch_add(&m->debuginfod_lookups[METRICS_LOOKUP_FOUND], 1);
        atomic_fetch_add(&m->debuginfod_named, (uint64_t) r);
        atomic_fetch_add(&m->debuginfod_unnamed, n - (size_t) r);
        r = s->storage->ops->put_function_names(s->storage, build_id, names, n);
        function_names_free(names, n);
        if (r < 0) {
                log_warning_errno(r, "debuginfod: failed to store the names of build %s: %m", build_id);
                return AGAIN_AFTER_NAMING_S;
        }
        return n == NAMES_PER_LOOKUP ? -1 : AGAIN_AFTER_NAMING_S;
}

/* The builds the database holds unnamed functions of, queued: a queue's
 * worth at a time, in build-id order on from where the last walk
 * stopped, so that builds not to be asked for yet cannot hide the others
 * however many they are. Under lock, which it lets go meanwhile. */
static void scan_locked(Symbols *s) {
        _cleanup_free_ char *after = TAKE_PTR(s->scan_after);
        char **v = NULL;
        size_t n = 0, i;
        uint64_t now_s;
        int r;

        pthread_mutex_unlock(&s->lock);
        r = s->storage->ops->list_unnamed_builds(s->storage, after, s->config.queue_max, &v, &n);
        pthread_mutex_lock(&s->lock);
        if (r < 0) {
                log_warning_errno(r, "debuginfod: failed to find builds with unnamed functions: %m");
                return;
        }
        now_s = now_ms() / 1000;
        for (i = 0; i < n && queue_locked(s, v[i], now_s); i++)
                ;
        /* on from the last one queued or passed over, where the queue
         * filled or the page ended; a short page ends the walk */
        if (i < n || n == s->config.queue_max) {
                s->scan_after = i > 0 ? TAKE_PTR(v[i - 1]) : TAKE_PTR(after);
                s->rescan = true;
        }
        strv_free_n(v, n);
}

static void *symbols_thread(void *userdata) {
        Symbols *s = userdata;
        uint64_t next_scan = 0;

        pthread_mutex_lock(&s->lock);
        while (!s->stopping) {
                uint64_t now_s = now_ms() / 1000;
                int64_t again;
                char *id;

                /* the database's builds at start, after an overflow drained,
                 * and every retry_s for those whose time came */
                if (s->n == 0 && (s->rescan || now_s >= next_scan)) {
                        if (!s->rescan)
                                next_scan = now_s + s->config.retry_s;
                        s->rescan = false;
                        scan_locked(s);
                        continue;
                }
                if (s->n == 0) {
                        struct timespec ts = { .tv_sec = (time_t) next_scan };

                        (void) pthread_cond_timedwait(&s->wake, &s->lock, &ts);
                        continue;
                }
                id = s->queue[s->head];
                s->head = (s->head + 1) % s->config.queue_max;
                s->n--;
                (void) hashmap_remove(s->waiting, id);
                atomic_store(&s->metrics->debuginfod_queue_length, s->n);
                pthread_mutex_unlock(&s->lock);

                again = lookup(s, id);

                pthread_mutex_lock(&s->lock);
                now_s = now_ms() / 1000;
                if (again < 0) {
                        queue_locked(s, id, now_s);
                        free(id);
                } else
                        remember_locked(s, id, now_s + (uint64_t) again, now_s);
        }
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

static void symbols_free(Symbols *s) {
        const void *k;
        size_t i = 0;
        void *v;

        if (!s)
                return;
        for (size_t j = 0; j < s->n; j++)
                free(s->queue[(s->head + j) % s->config.queue_max]);
        free(s->queue);
        free(s->scan_after);
        hashmap_free(s->waiting);
        while (s->not_before && hashmap_iterate(s->not_before, &i, &v, &k))
                free((char *) k);
        hashmap_free(s->not_before);
        if (s->client)
                debuginfod_end(s->client);
        pthread_cond_destroy(&s->wake);
        pthread_mutex_destroy(&s->lock);
        free(s);
}

int symbols_start(const SymbolsConfig *config, Storage *storage, Metrics *metrics, Symbols **ret) {
        pthread_condattr_t ca;
        Symbols *s;
        int e;

        if (config->queue_max == 0 || config->timeout_s == 0)
                return -EINVAL;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        *s = (Symbols) { .config = *config, .storage = storage, .metrics = metrics };
        pthread_mutex_init(&s->lock, NULL);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&s->wake, &ca);
        pthread_condattr_destroy(&ca);
        s->queue = calloc(config->queue_max, sizeof(char *));
        s->waiting = hashmap_new(&string_hash_ops);
        s->not_before = hashmap_new(&string_hash_ops);
        s->client = debuginfod_begin();
        if (!s->queue || !s->waiting || !s->not_before || !s->client) {
                symbols_free(s);
                return -ENOMEM;
        }
        debuginfod_set_user_data(s->client, s);
        debuginfod_set_progressfn(s->client, progress);
        e = pthread_create(&s->thread, NULL, symbols_thread, s);
        if (e != 0) {
                symbols_free(s);
                return -e;
        }
        s->started = true;
        atomic_store(&metrics->debuginfod_on, true);
        *ret = s;
        return 0;
}

void symbols_stop(Symbols *s) {
        if (!s)
                return;
        atomic_store(&s->cancel, true);
        pthread_mutex_lock(&s->lock);
        s->stopping = true;
        pthread_cond_signal(&s->wake);
        pthread_mutex_unlock(&s->lock);
        if (s->started)
                pthread_join(s->thread, NULL);
        symbols_free(s);
}

#else

bool symbols_supported(void) {
        return false;
}

int symbols_start(const SymbolsConfig *config, Storage *storage, Metrics *metrics, Symbols **ret) {
        (void) config;
        (void) storage;
        (void) metrics;
        (void) ret;
        return -EOPNOTSUPP;
}

void symbols_stop(Symbols *s) {
        (void) s;
}

void symbols_queue_batch(Symbols *s, const Batch *b) {
        (void) s;
        (void) b;
}

#endif
