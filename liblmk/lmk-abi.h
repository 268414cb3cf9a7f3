/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef LMK_ABI_H
#define LMK_ABI_H

/*
 * lmk-abi.h - the state liblmk shares with lmkd, ABI version 1.
 *
 * liblmk writes it into the application's memory; lmkd's BPF sampling
 * program and lmkd read it from there (docs/liblmk-abi.md says when and
 * how). This header is the one definition of its layout: lmk.h, the BPF
 * programs (through bpf/lmk-bpf.h) and lmkd include it, and the asserts
 * below stop any of them from compiling if a layout moves. A layout change
 * is a new LMK_ABI_VERSION, never an edit here.
 *
 * It compiles as C89 and C++98 and later (it is part of lmk.h), and in BPF
 * programs, which have no libc: there the kernel's __u32/__u64/__s64 come
 * from vmlinux.h or <linux/types.h>.
 */

#if defined(__bpf__)
#  ifndef __VMLINUX_H__
#    include <linux/types.h>
#  endif
typedef __u32 lmk_u32;
typedef __u64 lmk_u64;
typedef __s64 lmk_s64;
#  define LMK__ABI_OFFSETOF(type, member) __builtin_offsetof(type, member)
#else
#  include <stddef.h>
#  include <stdint.h>
typedef uint32_t lmk_u32;
typedef uint64_t lmk_u64;
typedef int64_t lmk_s64;
#  define LMK__ABI_OFFSETOF(type, member) offsetof(type, member)
#endif

#define LMK_ABI_VERSION 1
#define LMK_ABI_MAGIC "LMKABI1"         /* struct lmk_abi.magic, NUL included */

/* Regions a thread's stack holds; deeper BEGINs are only counted. */
#define LMK_MAX_DEPTH 16

/* struct lmk_region: name and place in the code, NUL-terminated. */
#define LMK_REGION_NAME_SIZE 56
#define LMK_REGION_WHERE_SIZE 64

/* lmk_region.flags, lmk_region_state() and the lmk:region_off probe's
 * reason: why a region is switched off. */
#define LMK_REGION_OFF_RATE 1   /* called more often than LMK_MAX_RATE */
#define LMK_REGION_OFF_ENV 2    /* LMK_DISABLE was set */
#define LMK_REGION_OFF_FULL 4   /* the region table was full (catch-all entry) */

/* Per-thread state, the static TLS variable lmk_tls. lmkd's sampling
 * program reads it at thread pointer + lmk_abi.tls_offset. */
struct lmk_thread {
        lmk_u32 depth;                          /* open regions; may exceed LMK_MAX_DEPTH */
        lmk_u32 stack[LMK_MAX_DEPTH];           /* region ids, stack[0] outermost */
        lmk_u32 calls;                          /* enabled BEGINs on this thread */
};

/* One entry of the region table at lmk_abi.regions; its id is its index + 1. */
struct lmk_region {
        lmk_u32 id;                             /* index + 1 */
        lmk_u32 flags;                          /* LMK_REGION_OFF_* */
        char name[LMK_REGION_NAME_SIZE];        /* NUL-terminated, truncated */
        char where[LMK_REGION_WHERE_SIZE];      /* "file:line function" of the registering site */
};

/* Per-process descriptor, the exported symbol lmk_abi. */
struct lmk_abi {
        char magic[8];                          /* LMK_ABI_MAGIC */
        lmk_u32 version;                        /* LMK_ABI_VERSION */
        lmk_u32 thread_size;                    /* sizeof(struct lmk_thread) */
        lmk_s64 tls_offset;                     /* &lmk_tls - thread pointer; 0 = not yet known */
        lmk_u64 regions;                        /* address of struct lmk_region[capacity] */
        lmk_u32 n_regions;                      /* entries [0, n_regions) are complete */
        lmk_u32 capacity;
        lmk_u64 n_mismatched;                   /* END closed regions above its own */
        lmk_u64 n_unmatched;                    /* END with no matching BEGIN, ignored */
        lmk_u64 n_overflow;                     /* BEGIN beyond LMK_MAX_DEPTH */
        lmk_u64 n_disabled;                     /* regions switched off for overhead */
};

/* Compile-time checks of the layouts, in every language the header serves:
 * C89 and C++98 have no static assertion, a negative array size stands in. */
#if defined(__cplusplus) && __cplusplus >= 201103L
#  define LMK__ABI_ASSERT(name, cond) static_assert(cond, "liblmk ABI v1: " #name)
#elif !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
#  define LMK__ABI_ASSERT(name, cond) _Static_assert(cond, "liblmk ABI v1: " #name)
#else
#  define LMK__ABI_ASSERT(name, cond) typedef char lmk__abi_assert_##name[(cond) ? 1 : -1]
#endif

LMK__ABI_ASSERT(u32_size, sizeof(lmk_u32) == 4);
LMK__ABI_ASSERT(u64_size, sizeof(lmk_u64) == 8 && sizeof(lmk_s64) == 8);

LMK__ABI_ASSERT(thread_stack, LMK__ABI_OFFSETOF(struct lmk_thread, stack) == 4);
LMK__ABI_ASSERT(thread_calls, LMK__ABI_OFFSETOF(struct lmk_thread, calls) == 68);
LMK__ABI_ASSERT(thread_size, sizeof(struct lmk_thread) == 72);

LMK__ABI_ASSERT(region_name, LMK__ABI_OFFSETOF(struct lmk_region, name) == 8);
LMK__ABI_ASSERT(region_where, LMK__ABI_OFFSETOF(struct lmk_region, where) == 64);
LMK__ABI_ASSERT(region_size, sizeof(struct lmk_region) == 128);

LMK__ABI_ASSERT(abi_magic, sizeof(LMK_ABI_MAGIC) == 8);
LMK__ABI_ASSERT(abi_version, LMK__ABI_OFFSETOF(struct lmk_abi, version) == 8);
LMK__ABI_ASSERT(abi_thread_size, LMK__ABI_OFFSETOF(struct lmk_abi, thread_size) == 12);
LMK__ABI_ASSERT(abi_tls_offset, LMK__ABI_OFFSETOF(struct lmk_abi, tls_offset) == 16);
LMK__ABI_ASSERT(abi_regions, LMK__ABI_OFFSETOF(struct lmk_abi, regions) == 24);
LMK__ABI_ASSERT(abi_n_regions, LMK__ABI_OFFSETOF(struct lmk_abi, n_regions) == 32);
LMK__ABI_ASSERT(abi_capacity, LMK__ABI_OFFSETOF(struct lmk_abi, capacity) == 36);
LMK__ABI_ASSERT(abi_n_mismatched, LMK__ABI_OFFSETOF(struct lmk_abi, n_mismatched) == 40);
LMK__ABI_ASSERT(abi_n_unmatched, LMK__ABI_OFFSETOF(struct lmk_abi, n_unmatched) == 48);
LMK__ABI_ASSERT(abi_n_overflow, LMK__ABI_OFFSETOF(struct lmk_abi, n_overflow) == 56);
LMK__ABI_ASSERT(abi_n_disabled, LMK__ABI_OFFSETOF(struct lmk_abi, n_disabled) == 64);
LMK__ABI_ASSERT(abi_size, sizeof(struct lmk_abi) == 72);

#endif /* LMK_ABI_H */
