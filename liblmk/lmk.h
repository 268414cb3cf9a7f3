/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LMK_H
#define LMK_H

/*
 * lmk.h - phase markers for lmk's always-on sampler (liblmk).
 *
 *   #include <lmk.h>
 *
 *   LMK_BEGIN("solve");
 *   ...
 *   LMK_END("solve");
 *
 *   void step(void) { LMK_SCOPE("step"); ... }      (C++: ends at scope exit)
 *
 * Build with `pkg-config --cflags --libs lmk`. Markers cost a few stores into
 * thread-local memory, which lmkd's sampling program reads when it samples
 * the thread; they need no daemon and never abort the program. Misuse
 * (unbalanced or missing END, nesting deeper than LMK_MAX_DEPTH) is counted,
 * not fatal. A marker called more often than LMK_MAX_RATE times per second
 * per thread (default 10000) switches itself off; LMK_DISABLE=1 switches all
 * off. See lmk-markers(3) and docs/liblmk.md; the layout of lmk_tls and
 * lmk_abi is lmkd's ABI (docs/liblmk-abi.md) and never changes within
 * LMK_ABI_VERSION.
 *
 * The header is C89 (with GNU extensions for the inline markers), C++98 and
 * later. Compilers without GNU C extensions get only the function API.
 */

#include <stddef.h>
#include <stdint.h>

/* LMK_ABI_VERSION, LMK_MAX_DEPTH, LMK_REGION_OFF_*, struct lmk_thread,
 * struct lmk_region, struct lmk_abi: the layout lmkd reads. */
#include "lmk-abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Every LMK_RATE_PERIOD-th BEGIN of a thread checks the thread's call rate. */
#define LMK_RATE_PERIOD 1024

/*
 * A call site (macros) or a caller-owned handle (function API). Zero or
 * LMK_SITE_INIT initialises it; liblmk fills it in at the first BEGIN or END.
 * A handle must stay at the same address while it is in use; all fields are
 * private to liblmk.
 */
struct lmk_site {
        int state;                      /* region id when on, -id when off; before registration
                                           LMK__UNREGISTERED (macro sites) or 0 (handles) */
        unsigned int id;                /* region id once registered */
        const char *name;
        const char *file;
        const char *func;
        void *dso;                      /* &__dso_handle of the object holding a macro site */
        struct lmk_site *next;          /* next macro site of the same region */
        int line;
};

#define LMK_SITE_INIT { 0, 0, NULL, NULL, NULL, NULL, NULL, 0 }

#if defined(__GNUC__)
extern __thread struct lmk_thread lmk_tls __attribute__((tls_model("initial-exec")));
#endif
extern struct lmk_abi lmk_abi;

/*
 * Function API, for languages that cannot inline the macros (Fortran through
 * lmk.f90, Python, Julia, Rust ...). `site` is a caller-owned handle that
 * lives as long as it is used (static storage or Fortran `save`).
 *
 * lmk_site_register() names the handle's region (the first name_len bytes of
 * name, at most up to a NUL; names longer than 55 bytes are truncated, and
 * names equal in their first 55 bytes are one region). `where` (may be NULL)
 * tells lmkd where the region is in the code. Returns the region id (> 0) or
 * -EINVAL for an empty name. Registering a registered handle again returns
 * its id and changes nothing.
 *
 * lmk_site_begin()/lmk_site_end() open and close the handle's region. A
 * handle that was never registered and has no name does nothing.
 */
int lmk_site_register(struct lmk_site *site, const char *name, size_t name_len, const char *where);
void lmk_site_begin(struct lmk_site *site);
void lmk_site_end(struct lmk_site *site);

/* The region's LMK_REGION_OFF_* flags (0: on), or -ENOENT if no site has
 * registered that name yet (LMK_REGION_OFF_FULL once the region table is
 * full), -EINVAL for NULL. */
int lmk_region_state(const char *name);

/* Slow paths of the inline markers; not API. */
void lmk__begin_slow(struct lmk_site *site);
void lmk__end_slow(struct lmk_site *site);

#if defined(__GNUC__)

/* The sampling program runs on the interrupted thread's own CPU: plain
 * stores suffice as long as the compiler keeps them in program order and
 * does not move the marked code's memory accesses across them. */
#define LMK__BARRIER() __asm__ __volatile__("" ::: "memory")

/* A macro site's state before its first use: positive, so that a BEGIN
 * takes the enabled path and leaves it through the slow call it has anyway,
 * and a switched-off BEGIN is a single test and branch. */
#define LMK__UNREGISTERED 0x7fffffff

static __inline__ __attribute__((always_inline, unused)) void lmk__begin(struct lmk_site *site)
{
        int state = __atomic_load_n(&site->state, __ATOMIC_RELAXED);

        if (__builtin_expect(state > 0, 1)) {
                unsigned int depth = lmk_tls.depth;
                unsigned int calls = lmk_tls.calls + 1;

                lmk_tls.calls = calls;
                if (__builtin_expect((calls % LMK_RATE_PERIOD) != 0 && depth < LMK_MAX_DEPTH &&
                                     state != LMK__UNREGISTERED, 1)) {
                        lmk_tls.stack[depth] = (unsigned int) state;
                        LMK__BARRIER();
                        lmk_tls.depth = depth + 1;
                        LMK__BARRIER();
                } else
                        lmk__begin_slow(site);
        }
}

static __inline__ __attribute__((always_inline, unused)) void lmk__end(struct lmk_site *site)
{
        int state = __atomic_load_n(&site->state, __ATOMIC_RELAXED);
        unsigned int depth = lmk_tls.depth;
        /* depth - 1 wraps for depth 0: one compare covers the empty and the
         * overflowed stack, whose top is not stored. ~0u matches no state. */
        unsigned int top = depth - 1 < LMK_MAX_DEPTH ? lmk_tls.stack[depth - 1] : ~0u;

        if (state > 0) {
                if (__builtin_expect(top == (unsigned int) state, 1)) {
                        LMK__BARRIER();
                        lmk_tls.depth = depth - 1;
                        LMK__BARRIER();
                } else
                        lmk__end_slow(site);
        } else if (top == 0u - (unsigned int) state) {
                /* Switched off: only a BEGIN from before the switch-off
                 * left something to close. A zero handle (state 0) never
                 * matches: stack entries are ids, never 0. */
                LMK__BARRIER();
                lmk_tls.depth = depth - 1;
                LMK__BARRIER();
        }
}

/* Every object (executable or library) has its own __dso_handle; liblmk uses
 * it to forget an object's sites when the object is dlclose'd. */
extern void *__dso_handle __attribute__((visibility("hidden")));

#if (defined(__cplusplus) && __cplusplus >= 201103L) || \
    (!defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L)
#  define LMK__FUNC __func__
#else
#  define LMK__FUNC (__extension__ __FUNCTION__)
#endif

/* "" name "" makes anything but a string literal a compile error. */
#define LMK__SITE(name) \
        { LMK__UNREGISTERED, 0, "" name "", __FILE__, LMK__FUNC, &__dso_handle, NULL, __LINE__ }

/* LMK_BEGIN("name") opens the region "name"; LMK_END("name") closes it.
 * Both are statements; BEGIN and END of one region may be in different
 * functions or files. */
#define LMK_BEGIN(name)                                                 \
        do {                                                            \
                static struct lmk_site lmk__site_ = LMK__SITE(name);    \
                lmk__begin(&lmk__site_);                                \
        } while (0)

#define LMK_END(name)                                                   \
        do {                                                            \
                static struct lmk_site lmk__site_ = LMK__SITE(name);    \
                lmk__end(&lmk__site_);                                  \
        } while (0)

#endif /* __GNUC__ */

#ifdef __cplusplus
} /* extern "C" */

#if defined(__GNUC__)
namespace lmk {

/* Opens the site's region for the lifetime of the object, also when the
 * scope is left by return or exception. Use through LMK_SCOPE. */
class scope {
public:
        explicit scope(struct lmk_site &site) : site_(site) { lmk__begin(&site_); }
        ~scope() { lmk__end(&site_); }
private:
        scope(const scope &);
        scope &operator=(const scope &);
        struct lmk_site &site_;
};

} /* namespace lmk */

#define LMK__CAT_(a, b) a##b
#define LMK__CAT(a, b) LMK__CAT_(a, b)

/* LMK_SCOPE("name"); opens "name" until the end of the enclosing scope
 * (one LMK_SCOPE per line). */
#define LMK_SCOPE(name)                                                         \
        static struct lmk_site LMK__CAT(lmk__site_, __LINE__) = LMK__SITE(name); \
        ::lmk::scope LMK__CAT(lmk__scope_, __LINE__)(LMK__CAT(lmk__site_, __LINE__))

#endif /* __GNUC__ */
#endif /* __cplusplus */

#endif /* LMK_H */
