/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Everything a BEGIN or END does beyond the inline fast path in lmk.h:
 * first use of a site, the per-thread rate check, nesting beyond
 * LMK_MAX_DEPTH, and ENDs that do not match the top of the stack. Also the
 * function API, which does the same out of line for caller-owned handles. */

#include <errno.h>
#include <limits.h>
#include <time.h>

#include "lmk-internal.h"

/* When this thread last checked its rate, CLOCK_MONOTONIC_COARSE in ns;
 * 0 = not yet. Static TLS like lmk_tls, so no allocation on first use. */
static __thread uint64_t last_check_ns __attribute__((tls_model("initial-exec")));

/* Called on every LMK_RATE_PERIOD-th enabled BEGIN of the thread. */
static bool rate_exceeded(void) {
        uint64_t window = lmk_setup()->rate_window_ns;
        uint64_t now, last;
        struct timespec ts;

        if (window == 0 || clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) < 0)
                return false;
        now = (uint64_t) ts.tv_sec * UINT64_C(1000000000) + (uint64_t) ts.tv_nsec;
        last = last_check_ns;
        last_check_ns = now;
        return last != 0 && now - last < window;
}

/* The barriers keep the store between the code before and the code after
 * it, as in the inline markers. */
static void set_depth(unsigned int depth) {
        LMK__BARRIER();
        lmk_tls.depth = depth;
        LMK__BARRIER();
}

static void push(unsigned int id) {
        unsigned int depth = lmk_tls.depth;

        if (depth < LMK_MAX_DEPTH) {
                lmk_tls.stack[depth] = id;
                set_depth(depth + 1);
                return;
        }

        /* Beyond the stack only the depth counts, so that the ENDs of the
         * unstored regions leave the stored ones in place. A BEGIN without
         * END in a loop must not wrap it to 0. */
        __atomic_fetch_add(&lmk_abi.n_overflow, 1, __ATOMIC_RELAXED);
        if (depth != UINT_MAX)
                set_depth(depth + 1);
}

/* lmk_tls.calls already counts this BEGIN. */
static void begin_counted(unsigned int id) {
        /* The check lands on a region's BEGIN in proportion to its call
         * rate: the region switched off is most likely the hottest. */
        if (lmk_tls.calls % LMK_RATE_PERIOD == 0 && rate_exceeded()) {
                lmk_region_switch_off(id, LMK_REGION_OFF_RATE);
                return;
        }
        push(id);
}

static void end_region(unsigned int id, bool off) {
        unsigned int depth = lmk_tls.depth;

        if (off) {
                /* Only a BEGIN from before the switch-off left anything
                 * to close, and then (unless misused) on top. */
                if (depth - 1 < LMK_MAX_DEPTH && lmk_tls.stack[depth - 1] == id)
                        set_depth(depth - 1);
                return;
        }

        if (depth == 0) {
                __atomic_fetch_add(&lmk_abi.n_unmatched, 1, __ATOMIC_RELAXED);
                return;
        }
        if (depth > LMK_MAX_DEPTH) {
                /* The region on top was not stored: trust the END. */
                set_depth(depth - 1);
                return;
        }
        for (unsigned int i = depth; i-- > 0;)
                if (lmk_tls.stack[i] == id) {
                        /* Close down to the END's own region: the regions
                         * above it lost their ENDs (early return, longjmp,
                         * exception through C code). */
                        if (i != depth - 1)
                                __atomic_fetch_add(&lmk_abi.n_mismatched, 1, __ATOMIC_RELAXED);
                        set_depth(i);
                        return;
                }
        __atomic_fetch_add(&lmk_abi.n_unmatched, 1, __ATOMIC_RELAXED);
}

static int site_register(struct lmk_site *site) {
        if (!site->name)
                return -EINVAL;
        return lmk_region_register(site, site->name, SIZE_MAX, NULL, lmk_setup());
}

/* The inline BEGIN counted this call already. */
_public_ void lmk__begin_slow(struct lmk_site *site) {
        int state = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);

        if (state == LMK__UNREGISTERED) {
                if (site_register(site) < 0)
                        return;
                state = __atomic_load_n(&site->state, __ATOMIC_ACQUIRE);
                /* calls counts enabled BEGINs only. */
                if (state < 0)
                        lmk_tls.calls--;
        }
        /* Off (from the start, or since the inline path looked): push
         * nothing, the END will find nothing of its own on top. */
        if (state > 0)
                begin_counted((unsigned int) state);
}

_public_ void lmk__end_slow(struct lmk_site *site) {
        unsigned int id = __atomic_load_n(&site->id, __ATOMIC_RELAXED);

        if (id == 0) {
                if (site_register(site) < 0)
                        return;
                id = site->id;
        }
        end_region(id, __atomic_load_n(&site->state, __ATOMIC_ACQUIRE) < 0);
}

_public_ int lmk_site_register(struct lmk_site *site, const char *name, size_t name_len, const char *where) {
        if (!site)
                return -EINVAL;
        return lmk_region_register(site, name, name_len, where, lmk_setup());
}

/* A caller-owned handle is never on a region's site list (liblmk cannot know
 * when its memory goes away), so the table's flag says whether it is off. */
static unsigned int handle_id(struct lmk_site *site) {
        unsigned int id = __atomic_load_n(&site->id, __ATOMIC_ACQUIRE);

        if (id == 0 && site_register(site) > 0)
                id = site->id;
        return id;
}

_public_ void lmk_site_begin(struct lmk_site *site) {
        unsigned int id = handle_id(site);

        if (id == 0 || lmk_region_is_off(id))
                return;
        lmk_tls.calls++;
        begin_counted(id);
}

_public_ void lmk_site_end(struct lmk_site *site) {
        unsigned int id = handle_id(site);

        if (id == 0)
                return;
        end_region(id, lmk_region_is_off(id));
}
