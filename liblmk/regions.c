/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* The region table: one id per phase name in the process, the sites that
 * use each region (so a switch-off reaches all of them), and the objects
 * whose sites must be forgotten when they are dlclose'd. Everything here
 * runs on slow paths under one mutex. */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lmk-internal.h"
#include "probes.h"

/* Registered by glibc's crt for C++ destructors of shared objects: its
 * handlers with a given object handle run when that object is unloaded. */
int __cxa_atexit(void (*func)(void *), void *arg, void *dso_handle);

#define NAME_MAX_LEN (LMK_REGION_NAME_SIZE - 1)
#define INDEX_SIZE (2 * LMK_REGIONS_MAX)  /* open addressing, load <= 1/2 */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct lmk_site *region_sites[LMK_REGIONS_MAX];
static uint16_t name_index[INDEX_SIZE];         /* region id, 0 = empty */

struct dso_hook {
        void *dso;
        struct dso_hook *next;
};
static struct dso_hook *dso_hooks;

static void lock_for_fork(void) {
        pthread_mutex_lock(&lock);
}

static void unlock_after_fork(void) {
        pthread_mutex_unlock(&lock);
}

/* A child forked while another thread registered would inherit a locked
 * mutex and hang at its first registration. */
int lmk_regions_setup(void) {
        return -pthread_atfork(lock_for_fork, unlock_after_fork, unlock_after_fork);
}

static uint32_t name_hash(const char *name, size_t len) {
        uint32_t h = 2166136261u;       /* FNV-1a */

        for (size_t i = 0; i < len; i++)
                h = (h ^ (unsigned char) name[i]) * 16777619u;
        return h;
}

/* Returns the slot of name in name_index: the one holding its id, or the
 * empty one where it belongs. */
static size_t index_slot(const char *name, size_t len) {
        size_t i = name_hash(name, len) % INDEX_SIZE;

        for (;;) {
                unsigned int id = name_index[i];

                if (id == 0)
                        return i;
                if (strncmp(lmk_regions[id - 1].name, name, len) == 0 && lmk_regions[id - 1].name[len] == '\0')
                        return i;
                i = (i + 1) % INDEX_SIZE;
        }
}

/* "file:line function" fitted into where[]: leading directories of the
 * file go first, they say least about the place. */
static void format_where(char *where, const char *file, int line, const char *func) {
        const char *f = file;

        for (;;) {
                const char *slash;
                int n = snprintf(where, LMK_REGION_WHERE_SIZE, "%s:%d %s", f, line, func ?: "");

                if (n >= 0 && (size_t) n < LMK_REGION_WHERE_SIZE)
                        return;
                slash = strchr(f, '/');
                if (!slash)
                        return;         /* snprintf truncated it, still NUL-terminated */
                f = slash + 1;
        }
}

static void region_publish(struct lmk_region *r) {
        /* lmkd reads n_regions, then the entries below it. */
        __atomic_store_n(&lmk_abi.n_regions, r->id, __ATOMIC_RELEASE);
        LMK_PROBE_REGION(r->id, r->name, r->where);
        if (r->flags)
                LMK_PROBE_REGION_OFF(r->id, r->flags);
}

static struct lmk_region *region_new(const char *name, size_t len, uint32_t flags) {
        struct lmk_region *r = &lmk_regions[lmk_abi.n_regions];

        r->id = lmk_abi.n_regions + 1;
        r->flags = flags;
        memcpy(r->name, name, len);
        r->name[len] = '\0';
        return r;
}

/* The entry every name that no longer fits maps to, created on first need. */
static unsigned int region_full(void) {
        static const char name[] = "(lmk: region table full)";
        size_t slot = index_slot(name, sizeof(name) - 1);
        struct lmk_region *r;

        if (name_index[slot])
                return name_index[slot];
        r = region_new(name, sizeof(name) - 1, LMK_REGION_OFF_FULL);
        name_index[slot] = r->id;
        region_publish(r);
        return r->id;
}

/* Called with the lock held. Returns the region id of name, registering it
 * with the given place in the code if it is new. */
static unsigned int region_find_or_add(const char *name, size_t len, const struct lmk_site *site, const char *where,
                                       const struct lmk_settings *s) {
        size_t slot = index_slot(name, len);
        struct lmk_region *r;

        if (name_index[slot])
                return name_index[slot];
        if (lmk_abi.n_regions >= LMK_REGIONS_MAX - 1)
                return region_full();

        r = region_new(name, len, s->disabled ? LMK_REGION_OFF_ENV : 0);
        if (where)
                snprintf(r->where, LMK_REGION_WHERE_SIZE, "%s", where);
        else if (site->file)
                format_where(r->where, site->file, site->line, site->func);
        name_index[slot] = r->id;
        region_publish(r);
        return r->id;
}

/* Runs when an object holding macro sites is dlclose'd (and at exit): its
 * sites' memory goes away, so a later switch-off must not write there. */
static void dso_unloaded(void *dso) {
        pthread_mutex_lock(&lock);
        for (unsigned int i = 0; i < lmk_abi.n_regions; i++)
                for (struct lmk_site **p = &region_sites[i]; *p;)
                        if ((*p)->dso == dso)
                                *p = (*p)->next;
                        else
                                p = &(*p)->next;
        for (struct dso_hook **p = &dso_hooks; *p; p = &(*p)->next)
                if ((*p)->dso == dso) {
                        struct dso_hook *h = *p;

                        *p = h->next;
                        free(h);
                        break;
                }
        pthread_mutex_unlock(&lock);
}

/* Called with the lock held: makes sure the object's sites are forgotten
 * when it is unloaded. Returns -ENOMEM if that cannot be arranged. */
static int dso_track(void *dso) {
        struct dso_hook *h;

        for (h = dso_hooks; h; h = h->next)
                if (h->dso == dso)
                        return 0;
        h = malloc(sizeof(*h));
        if (!h)
                return -ENOMEM;
        /* Takes glibc's exit-handler lock under ours; no deadlock, glibc
         * drops that lock before it calls a handler like dso_unloaded. */
        if (__cxa_atexit(dso_unloaded, dso, dso) != 0) {
                free(h);
                return -ENOMEM;
        }
        h->dso = dso;
        h->next = dso_hooks;
        dso_hooks = h;
        return 0;
}

int lmk_region_register(struct lmk_site *site, const char *name, size_t name_len, const char *where,
                        const struct lmk_settings *settings) {
        unsigned int id;
        size_t len;

        if (!name)
                return -EINVAL;
        len = strnlen(name, name_len < NAME_MAX_LEN ? name_len : NAME_MAX_LEN);
        if (len == 0)
                return -EINVAL;

        pthread_mutex_lock(&lock);

        /* Two threads may race to the same site's first use. */
        id = site->id;
        if (id != 0)
                goto done;

        id = region_find_or_add(name, len, site, where, settings);
        if (!site->name)
                site->name = lmk_regions[id - 1].name;
        __atomic_store_n(&site->id, id, __ATOMIC_RELAXED);

        if (site->dso) {
                if (dso_track(site->dso) < 0) {
                        /* Untracked, the site could not be reached by a
                         * switch-off: off from the start is the safe side. */
                        __atomic_store_n(&site->state, -(int) id, __ATOMIC_RELEASE);
                        goto done;
                }
                site->next = region_sites[id - 1];
                region_sites[id - 1] = site;
        }
        __atomic_store_n(&site->state, lmk_region_is_off(id) ? -(int) id : (int) id, __ATOMIC_RELEASE);

done:
        pthread_mutex_unlock(&lock);
        return (int) id;
}

void lmk_region_switch_off(unsigned int id, uint32_t reason) {
        struct lmk_region *r = &lmk_regions[id - 1];

        pthread_mutex_lock(&lock);
        if (!(r->flags & LMK_REGION_OFF_ANY)) {
                __atomic_store_n(&r->flags, r->flags | reason, __ATOMIC_RELEASE);
                for (struct lmk_site *s = region_sites[id - 1]; s; s = s->next)
                        __atomic_store_n(&s->state, -(int) id, __ATOMIC_RELEASE);
                if (reason == LMK_REGION_OFF_RATE)
                        __atomic_fetch_add(&lmk_abi.n_disabled, 1, __ATOMIC_RELAXED);
                LMK_PROBE_REGION_OFF(id, reason);
        }
        pthread_mutex_unlock(&lock);
}

_public_ int lmk_region_state(const char *name) {
        size_t len, slot;
        int r;

        if (!name)
                return -EINVAL;
        len = strnlen(name, NAME_MAX_LEN);

        pthread_mutex_lock(&lock);
        slot = index_slot(name, len);
        if (name_index[slot])
                r = (int) lmk_regions[name_index[slot] - 1].flags;
        else if (lmk_abi.n_regions >= LMK_REGIONS_MAX)
                /* Not kept by name, but any marker naming it is off. */
                r = LMK_REGION_OFF_FULL;
        else
                r = -ENOENT;
        pthread_mutex_unlock(&lock);
        return r;
}
