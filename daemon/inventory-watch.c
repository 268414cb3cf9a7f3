/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>

#include "inventory-watch.h"
#include "inventory/inventory.h"
#include "log.h"
#include "util.h"

#define IOPRIO_CLASS_IDLE 3
#define IOPRIO_CLASS_SHIFT 13
#define IOPRIO_WHO_PROCESS 1

struct InventoryWatch {
        pthread_t thread;
        pthread_mutex_t lock;
        pthread_cond_t wake;
        bool stop;
        unsigned interval;
        InventoryOptions options;
        char *pending;          /* JSON waiting for a batch */
        char pending_digest[65];
        char spooled_digest[65];
};

/* The scan must not take CPU or disk time from jobs: SCHED_IDLE and the
 * idle I/O class for this thread only (lmkd itself runs at Nice=-5). */
static void lower_priority(void) {
        pid_t tid = (pid_t) syscall(SYS_gettid);
        struct sched_param sp = {};

        if (sched_setscheduler(tid, SCHED_IDLE, &sp) < 0)
                log_debug("Inventory: cannot use SCHED_IDLE: %m");
        if (setpriority(PRIO_PROCESS, (id_t) tid, 19) < 0)
                log_debug("Inventory: cannot lower the nice value: %m");
        if (syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, tid, IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT) < 0)
                log_debug("Inventory: cannot use the idle I/O class: %m");
}

static void scan_once(InventoryWatch *w) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        char *json = NULL;
        size_t size;
        uint64_t t0 = now_ns(CLOCK_MONOTONIC);
        int r;

        r = inventory_scan(&w->options, &inv);
        if (r >= 0)
                r = inventory_to_json(inv, &json, &size);
        if (r < 0) {
                log_warning_errno(r, "Failed to take the software inventory: %m");
                return;
        }
        for (size_t i = 0; i < inv->n_problems; i++)
                log_debug("Inventory: %s", inv->problems[i]);
        pthread_mutex_lock(&w->lock);
        if (streq(inv->digest, w->spooled_digest) || streq(inv->digest, w->pending_digest)) {
                free(json);
                json = NULL;
        } else {
                free(w->pending);
                w->pending = json;
                memcpy(w->pending_digest, inv->digest, sizeof(w->pending_digest));
        }
        pthread_mutex_unlock(&w->lock);
        log_info("Software inventory: %zu packages, %zu files, %zu problems, in %.2f s%s.", inv->n_packages,
                 inv->n_files, inv->n_problems + inv->problems_left_out,
                 (double) (now_ns(CLOCK_MONOTONIC) - t0) / 1e9, json ? "; the next batch carries it" : "");
}

static void *run(void *arg) {
        InventoryWatch *w = arg;

        lower_priority();
        pthread_mutex_lock(&w->lock);
        while (!w->stop) {
                struct timespec until;

                pthread_mutex_unlock(&w->lock);
                scan_once(w);
                pthread_mutex_lock(&w->lock);
                clock_gettime(CLOCK_REALTIME, &until);
                until.tv_sec += w->interval;
                while (!w->stop && pthread_cond_timedwait(&w->wake, &w->lock, &until) != ETIMEDOUT)
                        ;
        }
        pthread_mutex_unlock(&w->lock);
        return NULL;
}

int inventory_watch_start(const LmkdConfig *o, InventoryWatch **ret) {
        static const char *const none[] = { NULL };
        InventoryWatch *w;
        int r;

        *ret = NULL;
        if (o->inventory_interval == 0)
                return 0;
        w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->interval = o->inventory_interval;
        for (int m = 0; m < _INVENTORY_MANAGER_MAX; m++)
                w->options.roots[m] = o->inventory_off[m] ? none :
                                      (const char *const *) o->inventory_roots[m];
        pthread_mutex_init(&w->lock, NULL);
        pthread_cond_init(&w->wake, NULL);
        r = -pthread_create(&w->thread, NULL, run, w);
        if (r < 0) {
                pthread_mutex_destroy(&w->lock);
                pthread_cond_destroy(&w->wake);
                free(w);
                return r;
        }
        *ret = w;
        return 0;
}

void inventory_watch_stop(InventoryWatch *w) {
        if (!w)
                return;
        pthread_mutex_lock(&w->lock);
        w->stop = true;
        pthread_cond_signal(&w->wake);
        pthread_mutex_unlock(&w->lock);
        pthread_join(w->thread, NULL);
        pthread_mutex_destroy(&w->lock);
        pthread_cond_destroy(&w->wake);
        free(w->pending);
        free(w);
}

int inventory_watch_pending(InventoryWatch *w, char **ret_json, char ret_digest[static 65]) {
        int r = 0;

        *ret_json = NULL;
        if (!w)
                return 0;
        pthread_mutex_lock(&w->lock);
        if (w->pending) {
                *ret_json = strdup(w->pending);
                memcpy(ret_digest, w->pending_digest, 65);
                r = *ret_json ? 1 : -ENOMEM;
        }
        pthread_mutex_unlock(&w->lock);
        return r;
}

void inventory_watch_spooled(InventoryWatch *w, const char *digest) {
        if (!w)
                return;
        pthread_mutex_lock(&w->lock);
        memcpy(w->spooled_digest, digest, sizeof(w->spooled_digest));
        if (w->pending && streq(w->pending_digest, digest)) {
                free(w->pending);
                w->pending = NULL;
                w->pending_digest[0] = '\0';
        }
        pthread_mutex_unlock(&w->lock);
}
