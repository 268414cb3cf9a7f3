/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "addrmap.h"
#include "tests.h"

static ObjectTable *t;

static Object *file(const char *path, uint64_t ino) {
        Object *o = object_table_get_file(t, 0x801, ino, path);
        ASSERT_NOT_NULL(o);
        return o;
}

static const char *at(const AddrMap *m, uint64_t addr) {
        const Mapping *x = addrmap_find(m, addr);
        return x ? x->obj->path : NULL;
}

TEST(boundaries) {
        AddrMap m = {};
        Object *a = file("/lib/a.so", 1);

        ASSERT_OK(addrmap_insert(t, &m, 0x1000, 0x3000, 0, a));
        ASSERT_NULL(at(&m, 0xfff));
        ASSERT_STREQ(at(&m, 0x1000), "/lib/a.so");     /* first byte */
        ASSERT_STREQ(at(&m, 0x2fff), "/lib/a.so");     /* last byte */
        ASSERT_NULL(at(&m, 0x3000));                    /* end is exclusive */
        ASSERT_NULL(at(&m, UINT64_MAX));
        ASSERT_NULL(at(&m, 0));
        ASSERT_ERROR(addrmap_insert(t, &m, 0x5000, 0x5000, 0, a), EINVAL);
        ASSERT_ERROR(addrmap_insert(t, &m, 0x6000, 0x5000, 0, a), EINVAL);
        addrmap_clear(t, &m);
        object_unref(t, a);
        ASSERT_EQ(object_table_size(t), 0);
}

TEST(remap_over_old) {
        AddrMap m = {};
        Object *a = file("/lib/a.so", 1), *b = file("/lib/b.so", 2);
        const Mapping *x;

        ASSERT_OK(addrmap_insert(t, &m, 0x10000, 0x20000, 0x1000, a));
        /* b lands in the middle of a: a is split around it */
        ASSERT_OK(addrmap_insert(t, &m, 0x14000, 0x16000, 0, b));
        ASSERT_EQ(m.n, 3);
        ASSERT_STREQ(at(&m, 0x13fff), "/lib/a.so");
        ASSERT_STREQ(at(&m, 0x14000), "/lib/b.so");
        ASSERT_STREQ(at(&m, 0x15fff), "/lib/b.so");
        ASSERT_STREQ(at(&m, 0x16000), "/lib/a.so");
        x = addrmap_find(&m, 0x16000);
        ASSERT_U64_EQ(x->pgoff, 0x1000 + 0x6000);       /* the tail keeps its file offset */
        ASSERT_EQ(a->refs, 3);                          /* ours + head + tail */

        /* b covers a's tail and part of the next: both trimmed */
        ASSERT_OK(addrmap_insert(t, &m, 0x1f000, 0x21000, 0, b));
        ASSERT_STREQ(at(&m, 0x1efff), "/lib/a.so");
        ASSERT_STREQ(at(&m, 0x1f000), "/lib/b.so");

        /* a mapping that covers everything replaces everything */
        ASSERT_OK(addrmap_insert(t, &m, 0x0, 0x100000, 0, a));
        ASSERT_EQ(m.n, 1);
        ASSERT_EQ(b->refs, 1);
        ASSERT_STREQ(at(&m, 0x14000), "/lib/a.so");

        ASSERT_OK(addrmap_remove(t, &m, 0x1000, 0x2000));
        ASSERT_EQ(m.n, 2);
        ASSERT_NULL(at(&m, 0x1800));
        ASSERT_STREQ(at(&m, 0xfff), "/lib/a.so");
        ASSERT_STREQ(at(&m, 0x2000), "/lib/a.so");

        addrmap_clear(t, &m);
        object_unref(t, a);
        object_unref(t, b);
        ASSERT_EQ(object_table_size(t), 0);
}

TEST(many) {
        AddrMap m = {}, copy;
        Object *o = file("/lib/many.so", 3);

        /* inserted out of order, found in order */
        for (uint64_t i = 0; i < 1000; i++) {
                uint64_t k = (i * 7919) % 1000;
                ASSERT_OK(addrmap_insert(t, &m, k * 0x10000, k * 0x10000 + 0x8000, k, o));
        }
        ASSERT_EQ(m.n, 1000);
        for (uint64_t k = 0; k < 1000; k++) {
                const Mapping *x = addrmap_find(&m, k * 0x10000 + 0x7fff);
                ASSERT_NOT_NULL(x);
                ASSERT_U64_EQ(x->pgoff, k);
                ASSERT_NULL(addrmap_find(&m, k * 0x10000 + 0x8000));
        }
        ASSERT_OK(addrmap_copy(&copy, &m));
        ASSERT_EQ(o->refs, 2001);
        addrmap_clear(t, &m);
        ASSERT_NOT_NULL(addrmap_find(&copy, 0x10000));
        addrmap_clear(t, &copy);
        object_unref(t, o);
        ASSERT_EQ(object_table_size(t), 0);
}

int main(void) {
        t = object_table_new();
        RUN(boundaries);
        RUN(remap_over_old);
        RUN(many);
        object_table_free(t);
        return 0;
}
