/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "http-post.h"
#include "log.h"
#include "push-thread.h"
#include "token-file.h"
#include "util.h"

#define BACKOFF_MIN_MS 1000
#define BACKOFF_MAX_MS (60 * 1000) /* 10,000 nodes retrying: under 200 requests/s */

struct Pusher {
        Spool *spool;
        char *url;              /* .../api/v1/ingest */
        char *auth;             /* "Authorization: Bearer …" */
        char *ca_file;          /* NULL: the system's trust store alone */
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t cond;
        bool stop, kicked;
        PushStats stats;
        unsigned rand_state;
};

/* Returns the HTTP status, or 0 when no answer came; body[] holds the start
 * of the answer (the store's error message), or why none came. */
static long post(Pusher *p, const void *data, size_t size, char body[static HTTP_ANSWER_SIZE]) {
        char spool[80];
        SpoolStats ss;
        int r;

        /* What waits behind this batch, now: the store's backlog gauge
         * (docs/api.md), fresher than anything written into the batch when
         * it was spooled. */
        spool_stats(p->spool, &ss);
        snprintf(spool, sizeof(spool), "Lmk-Spool: batches=%" PRIu64 " bytes=%" PRIu64,
                 ss.queued > 0 ? ss.queued - 1 : 0, ss.queued_bytes > size ? ss.queued_bytes - size : 0);
        r = http_post(&(const HttpPost) {
                .url = p->url,
                .headers = (const char *const[]) { "Content-Type: application/json", "Content-Encoding: gzip", p->auth,
                                                   spool, NULL },
                .body = data,
                .size = size,
                .ca_file = p->ca_file,
        }, body);
        /* An https:// push parses the system's trusted certificates (a
         * 4 MiB peak with Debian's 144) and frees them in this thread's
         * malloc arena, which lmkd's trim after a batch (trim_heap():
         * mallinfo2() sees the main arena only) does not look at: without
         * this, lmkd kept 3 MiB more RSS after its first https:// push. */
        (void) malloc_trim(0);
        return r > 0 ? r : 0;
}

/* 4xx that no retry can fix: the batch itself is bad or too big. 401/403
 * (a token problem), 408 and 429 are retried: the batch is fine. */
static bool permanent(long status) {
        return status >= 400 && status < 500 && status != 401 && status != 403 && status != 408 &&
               status != 429;
}

/* Once per file: the spool sets a damaged file aside and hands it over once. */
static void say_corrupt(Spool *spool) {
        _cleanup_free_ SpoolCorrupt *c = NULL;
        size_t n;

        n = spool_take_corrupt(spool, &c);
        for (size_t i = 0; i < n; i++)
                log_warning("Spool file %s/%s is damaged (%s); moved it to %s/corrupt/ and will not send it.",
                            spool_dir(spool), c[i].name, c[i].reason, spool_dir(spool));
}

static void *run(void *userdata) {
        Pusher *p = userdata;
        unsigned backoff = 0;

        pthread_mutex_lock(&p->lock);
        while (!p->stop) {
                uint64_t seq;
                void *data;
                size_t size;
                char body[HTTP_ANSWER_SIZE];
                long status;
                int r;

                pthread_mutex_unlock(&p->lock);
                say_corrupt(p->spool);
                r = spool_oldest(p->spool, &seq, &data, &size);
                if (r >= 0) {
                        status = post(p, data, size, body);
                        free(data);
                        pthread_mutex_lock(&p->lock);
                        p->stats.attempts++;
                        p->stats.last_status = (uint64_t) status;
                        pthread_mutex_unlock(&p->lock);
                        if (status == 200) {
                                (void) spool_remove(p->spool, seq);
                                backoff = 0;
                        } else if (status == 409) {
                                /* not a retry of a stored batch: its key was
                                 * used for other data (a node sharing this
                                 * one's name, a spool copied to another node) */
                                log_error("The store holds batch %" PRIu64 " of spool %s already, with other content "
                                          "(HTTP 409, a conflict: %s); moved it to %s/rejected/.", seq,
                                          spool_id(p->spool), body, spool_dir(p->spool));
                                (void) spool_reject(p->spool, seq);
                                pthread_mutex_lock(&p->lock);
                                p->stats.conflicts++;
                                pthread_mutex_unlock(&p->lock);
                                backoff = 0;
                        } else if (permanent(status)) {
                                log_error("The store refused batch %" PRIu64 " for good (HTTP %ld: %s); moved it to rejected/.",
                                          seq, status, body);
                                (void) spool_reject(p->spool, seq);
                                backoff = 0;
                        } else {
                                backoff = backoff ? MIN(backoff * 2, (unsigned) BACKOFF_MAX_MS) : BACKOFF_MIN_MS;
                                if (status == 401 || status == 403)
                                        log_error("The store refused lmkd's token (HTTP %ld: %s); retrying in %u s.", status,
                                                  body, backoff / 1000);
                                else
                                        log_warning("Pushing batch %" PRIu64 " failed (%s); retrying in about %u s.", seq,
                                                    body[0] ? body : "no answer", backoff / 1000);
                                pthread_mutex_lock(&p->lock);
                                p->stats.failures++;
                                pthread_mutex_unlock(&p->lock);
                        }
                }
                pthread_mutex_lock(&p->lock);
                p->stats.backoff_ms = backoff;
                if (p->stop)
                        break;
                if (r >= 0 && backoff == 0)
                        continue; /* more may be waiting */
                {
                        /* jitter: 50-150% of the backoff, so nodes that lost
                         * the store together do not return together */
                        uint64_t wait_ms = backoff ? backoff / 2 + (uint64_t) rand_r(&p->rand_state) % backoff : 3600 * 1000;
                        struct timespec ts;

                        clock_gettime(CLOCK_MONOTONIC, &ts);
                        ts.tv_sec += (time_t) (wait_ms / 1000);
                        ts.tv_nsec += (long) (wait_ms % 1000) * 1000000;
                        if (ts.tv_nsec >= 1000000000) {
                                ts.tv_sec++;
                                ts.tv_nsec -= 1000000000;
                        }
                        /* a new batch ends an idle wait, not a backoff */
                        while (!p->stop && !(backoff == 0 && p->kicked))
                                if (pthread_cond_timedwait(&p->cond, &p->lock, &ts) == ETIMEDOUT)
                                        break;
                        p->kicked = false;
                }
        }
        pthread_mutex_unlock(&p->lock);
        return NULL;
}

int pusher_start(Spool *spool, const char *store_url, const char *token, const char *ca_file, Pusher **ret) {
        pthread_condattr_t ca;
        Pusher *p;
        size_t n;
        int r;

        p = calloc(1, sizeof(*p));
        if (!p)
                return -ENOMEM;
        p->spool = spool;
        p->rand_state = (unsigned) getpid() ^ (unsigned) now_ns(CLOCK_MONOTONIC);
        n = strlen(store_url);
        while (n > 0 && store_url[n - 1] == '/')
                n--;
        if (asprintf(&p->url, "%.*s/api/v1/ingest", (int) n, store_url) < 0) {
                free(p);
                return -ENOMEM;
        }
        if (asprintf(&p->auth, "Authorization: Bearer %s", token) < 0) {
                free(p->url);
                free(p);
                return -ENOMEM;
        }
        if (ca_file && !(p->ca_file = strdup(ca_file))) {
                free(p->url);
                free(p->auth);
                free(p);
                return -ENOMEM;
        }
        pthread_mutex_init(&p->lock, NULL);
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&p->cond, &ca);
        pthread_condattr_destroy(&ca);
        r = -pthread_create(&p->thread, NULL, run, p);
        if (r < 0) {
                free(p->url);
                free(p->auth);
                free(p->ca_file);
                free(p);
                return r;
        }
        *ret = p;
        return 0;
}

void pusher_kick(Pusher *p) {
        pthread_mutex_lock(&p->lock);
        p->kicked = true;
        pthread_cond_signal(&p->cond);
        pthread_mutex_unlock(&p->lock);
}

void pusher_drain(Pusher *p, unsigned timeout_ms) {
        uint64_t end = now_ns(CLOCK_MONOTONIC) + (uint64_t) timeout_ms * 1000000;
        PushStats start, now;
        SpoolStats ss;

        pusher_stats(p, &start);
        pusher_kick(p);
        for (;;) {
                spool_stats(p->spool, &ss);
                pusher_stats(p, &now);
                if (ss.queued == 0 || now.failures != start.failures || now_ns(CLOCK_MONOTONIC) >= end)
                        return;
                (void) usleep(20000);
        }
}

Pusher *pusher_stop(Pusher *p) {
        if (!p)
                return NULL;
        pthread_mutex_lock(&p->lock);
        p->stop = true;
        pthread_cond_signal(&p->cond);
        pthread_mutex_unlock(&p->lock);
        pthread_join(p->thread, NULL);
        pthread_mutex_destroy(&p->lock);
        pthread_cond_destroy(&p->cond);
        explicit_bzero(p->auth, strlen(p->auth));
        free(p->auth);
        free(p->url);
        free(p->ca_file);
        free(p);
        return NULL;
}

void pusher_stats(Pusher *p, PushStats *ret) {
        pthread_mutex_lock(&p->lock);
        *ret = p->stats;
        pthread_mutex_unlock(&p->lock);
}

int read_token_file(const char *path, char **ret, char **ret_error) {
        _cleanup_free_ char *text = NULL, *token = NULL;
        size_t n;
        int r;

        r = token_file_read(path, &text, ret_error);
        if (r < 0)
                return r;
        /* the token alone on the first line; blanks after it are the editor's */
        n = strcspn(text, "\n");
        while (n > 0 && (text[n - 1] == ' ' || text[n - 1] == '\t'))
                n--;
        token = strndup(text, n);
        token_erase(text);
        if (!token)
                return -ENOMEM;
        if (!token_is_valid(token)) {
                token_erase(token);
                if (ret_error && asprintf(ret_error, "Token file %s: expected the token alone on the first line, "
                                          "%d to %d printable characters without spaces.", path,
                                          TOKEN_MIN_LENGTH, TOKEN_MAX_LENGTH) < 0)
                        *ret_error = NULL;
                return -EBADMSG;
        }
        *ret = TAKE_PTR(token);
        return 0;
}
