/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "batch/arena.h"

#define ARENA_ALIGN alignof(max_align_t)

typedef struct Block {
        struct Block *next;
        size_t size, used;
        alignas(max_align_t) unsigned char data[];
} Block;

struct Arena {
        Block *head; /* the block allocations come from; the others before it */
};

static Block *block_new(size_t size) {
        Block *b;

        if (size > SIZE_MAX - sizeof(Block))
                return NULL;
        b = malloc(sizeof(Block) + size);
        if (!b)
                return NULL;
        b->next = NULL;
        b->size = size;
        b->used = 0;
        return b;
}

Arena *arena_new(size_t first_block) {
        Arena *a = malloc(sizeof(Arena));

        if (!a)
                return NULL;
        a->head = block_new(MAX(first_block, (size_t) 4096));
        if (!a->head) {
                free(a);
                return NULL;
        }
        return a;
}

void *arena_alloc(Arena *a, size_t size) {
        Block *b = a->head;
        size_t at = ALIGN_TO(b->used, ARENA_ALIGN);

        if (size > SIZE_MAX - ARENA_ALIGN)
                return NULL;
        if (at > b->size || size > b->size - at) {
                /* Each new block at least doubles, so a batch of any size
                 * needs few of them. */
                size_t want = MAX(ALIGN_TO(size, ARENA_ALIGN), b->size > SIZE_MAX / 2 ? b->size : 2 * b->size);
                Block *n = block_new(want);

                if (!n)
                        return NULL;
                n->next = b;
                a->head = b = n;
                at = 0;
        }
        b->used = at + size;
        return b->data + at;
}

void *arena_calloc(Arena *a, size_t n, size_t size) {
        void *p;

        if (size != 0 && n > SIZE_MAX / size)
                return NULL;
        p = arena_alloc(a, n * size);
        if (p)
                memset(p, 0, n * size);
        return p;
}

Arena *arena_free(Arena *a) {
        if (!a)
                return NULL;
        for (Block *b = a->head, *next; b; b = next) {
                next = b->next;
                free(b);
        }
        free(a);
        return NULL;
}
