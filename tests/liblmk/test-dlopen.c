/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * test-dlopen LIBLMK PLUGIN: liblmk loaded with dlopen by a program not
 * linked with it (its TLS then comes from glibc's static TLS surplus), and
 * a plugin with marker sites that is unloaded while its region lives on:
 * switching that region off later must not touch the unloaded sites.
 */

#include <dlfcn.h>
#include <lmk.h>
#include <pthread.h>

#include "tests.h"

static struct {
        struct lmk_abi *abi;
        int (*site_register)(struct lmk_site *site, const char *name, size_t name_len, const char *where);
        void (*site_begin)(struct lmk_site *site);
        void (*site_end)(struct lmk_site *site);
        int (*region_state)(const char *name);
} lmk;

static void *lib;
static const char *plugin_path;

static struct lmk_thread *tls(void) {
        /* dlsym of a TLS symbol gives the calling thread's instance. */
        struct lmk_thread *t = dlsym(lib, "lmk_tls");

        ASSERT_NOT_NULL(t);
        return t;
}

static int64_t tls_offset_here(void) {
        return (char *) tls() - (char *) __builtin_thread_pointer();
}

static void *thread_offset(void *arg) {
        *(int64_t *) arg = tls_offset_here();
        return NULL;
}

#define LOOKUP(field, symbol)                                   \
        do {                                                    \
                *(void **) &lmk.field = dlsym(lib, symbol);     \
                ASSERT_NOT_NULL(lmk.field);                     \
        } while (0)

TEST(load) {
        int64_t offset = 0;
        pthread_t t;

        LOOKUP(abi, "lmk_abi");
        LOOKUP(site_register, "lmk_site_register");
        LOOKUP(site_begin, "lmk_site_begin");
        LOOKUP(site_end, "lmk_site_end");
        LOOKUP(region_state, "lmk_region_state");

        ASSERT_TRUE(memcmp(lmk.abi->magic, "LMKABI1", 8) == 0);
        ASSERT_TRUE(lmk.abi->tls_offset != 0);
        ASSERT_EQ(tls_offset_here(), lmk.abi->tls_offset);
        ASSERT_EQ(pthread_create(&t, NULL, thread_offset, &offset), 0);
        ASSERT_EQ(pthread_join(t, NULL), 0);
        ASSERT_EQ(offset, lmk.abi->tls_offset);
}

TEST(markers) {
        static struct lmk_site h;
        int id = lmk.site_register(&h, "dl", 2, NULL);

        ASSERT_TRUE(id > 0);
        lmk.site_begin(&h);
        ASSERT_EQ(tls()->depth, 1);
        ASSERT_EQ(tls()->stack[0], (unsigned int) id);
        lmk.site_end(&h);
        ASSERT_EQ(tls()->depth, 0);
        ASSERT_EQ(lmk.abi->n_unmatched + lmk.abi->n_mismatched, 0);
}

/* Switches the named region off the way a hot loop would. */
static void switch_off(struct lmk_site *h, const char *name) {
        ASSERT_TRUE(lmk.site_register(h, name, strlen(name), NULL) > 0);
        for (int i = 0; i < 1000000 && lmk.region_state(name) == 0; i++) {
                lmk.site_begin(h);
                lmk.site_end(h);
        }
        ASSERT_EQ(lmk.region_state(name), LMK_REGION_OFF_RATE);
        ASSERT_EQ(tls()->depth, 0);
}

TEST(plugin_unloaded) {
        static struct lmk_site h1, h2;
        int (*run)(const char *which);
        void *plugin = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);

        if (!plugin)
                test_fail("dlopen %s: %s", plugin_path, dlerror());
        *(void **) &run = dlsym(plugin, "plugin_run");
        ASSERT_NOT_NULL(run);
        ASSERT_EQ(run("1"), 1);
        ASSERT_EQ(run("2"), 1);

        /* While loaded, a switch-off reaches the plugin's sites. */
        switch_off(&h2, "plugin-2");
        ASSERT_EQ(run("2"), 0);
        ASSERT_EQ(run("1"), 1);

        ASSERT_EQ(dlclose(plugin), 0);
        ASSERT_NULL(dlopen(plugin_path, RTLD_NOW | RTLD_NOLOAD));

        /* Its sites' memory is gone: this must not write there. */
        switch_off(&h1, "plugin-1");

        /* Loaded again, fresh sites register into a switched-off region. */
        plugin = dlopen(plugin_path, RTLD_NOW | RTLD_LOCAL);
        ASSERT_NOT_NULL(plugin);
        *(void **) &run = dlsym(plugin, "plugin_run");
        ASSERT_EQ(run("1"), 0);
        ASSERT_EQ(tls()->depth, 0);
        ASSERT_EQ(dlclose(plugin), 0);
        ASSERT_EQ(lmk.abi->n_disabled, 2);
}

int main(int argc, char **argv) {
        if (argc != 3)
                test_fail("usage: test-dlopen LIBLMK PLUGIN");
        lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
        if (!lib)
                test_fail("dlopen %s: %s", argv[1], dlerror());
        plugin_path = argv[2];

        RUN(load);
        RUN(markers);
        RUN(plugin_unloaded);

        ASSERT_EQ(dlclose(lib), 0);
        return 0;
}
