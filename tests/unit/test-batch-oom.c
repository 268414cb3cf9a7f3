/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmkd's batch when memory runs out: every allocation batch_json() makes
 * (the tree batch_build() writes), in json-c and lmkd alike, is failed in
 * turn, and each time the call either fails with -ENOMEM and hands
 * nothing back, or (where the failure cost nothing) gives the very batch
 * it gives with memory to spare. json-c writes a value that failed to
 * allocate (NULL) as null, so an unchecked allocation shows up here as a
 * batch with a null in it. Writing the tree out is json-c's: its 0.16
 * drops text where its buffer cannot grow, so that part is not failed.
 *
 * Allocations are failed by this program's own malloc(), calloc() and
 * realloc() over glibc's, which json-c calls too. AddressSanitizer and
 * valgrind put their own allocators there: under them the test skips. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "batch-fixture.h"
#include "batch/inflate.h"

#if defined(__SANITIZE_ADDRESS__)
#define HAVE_FAULTS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define HAVE_FAULTS 0
#endif
#endif
#ifndef HAVE_FAULTS
#define HAVE_FAULTS 1
#endif

/* Allocations left until the one that fails; 0: none fails. */
static unsigned long countdown;
static bool failed;

#if HAVE_FAULTS
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void __libc_free(void *p);

static bool fail_now(void) {
        if (countdown == 0 || --countdown > 0)
                return false;
        failed = true;
        errno = ENOMEM;
        return true;
}

void *malloc(size_t size) {
        return fail_now() ? NULL : __libc_malloc(size);
}

void *calloc(size_t n, size_t size) {
        return fail_now() ? NULL : __libc_calloc(n, size);
}

void *realloc(void *p, size_t size) {
        return fail_now() ? NULL : __libc_realloc(p, size);
}

void free(void *p) {
        __libc_free(p);
}
#endif

static char *text_of(json_object *root) {
        char *text = strdup(json_object_to_json_string_ext(root, BATCH_JSON_FLAGS));

        ASSERT_NOT_NULL(text);
        json_object_put(root);
        return text;
}

TEST(every_allocation_fails_once) {
        _cleanup_free_ char *want = NULL, *built = NULL;
        unsigned long n, refused = 0;
        json_object *root = NULL;
        void *gz;
        size_t size, len;
        Sent s;
        int r;

        sent_init(&s);
        /* with memory to spare (and the user names looked up and kept):
         * the tree is what batch_build() writes */
        ASSERT_OK(batch_json(&s.iv, &s.info, &root));
        want = text_of(root);
        ASSERT_OK(batch_build(&s.iv, &s.info, &gz, &size));
        ASSERT_OK(inflate_bounded(gz, size, 32 << 20, &built, &len));
        free(gz);
        ASSERT_STREQ(built, want);

        for (n = 1;; n++) {
                _cleanup_free_ char *got = NULL;

                root = NULL;
                failed = false;
                countdown = n;
                r = batch_json(&s.iv, &s.info, &root);
                countdown = 0;
                if (r < 0) {
                        if (r != -ENOMEM)
                                test_fail("allocation %lu failed: batch_json() gave %d, not -ENOMEM", n, r);
                        ASSERT_NULL(root);
                        refused++;
                        continue;
                }
                got = text_of(root);
                if (!streq(got, want))
                        test_fail("allocation %lu failed and batch_json() made another batch:\n%s\nnot:\n%s",
                                  n, got, want);
                if (!failed)
                        break;
        }
        fprintf(stderr, "%lu allocations, %lu of them refused the batch when they failed\n", n - 1, refused);
        ASSERT_TRUE(refused > 100);
        sent_done(&s);
}

/* Whether json-c's allocations come to this program's malloc(): not
 * under a tool that puts its own in their place (valgrind). */
static bool faults_reach_json_c(void) {
        json_object *o;

        failed = false;
        countdown = 1;
        o = json_object_new_object();
        countdown = 0;
        json_object_put(o);
        return failed && !o;
}

int main(void) {
        if (!HAVE_FAULTS)
                test_skip("AddressSanitizer allocates; this test fails allocations through glibc's");
        if (!faults_reach_json_c())
                test_skip("json-c's allocations do not come through this program's malloc() (valgrind?)");
        RUN(every_allocation_fails_once);
        return 0;
}
