/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "tests.h"
#include "tokens.h"

static int load(const char *text, TokenSet **ret, unsigned *ret_line) {
        FILE *f = fmemopen((void *) text, strlen(text), "r");
        int r;

        ASSERT_NOT_NULL(f);
        r = token_set_load(f, ret, ret_line);
        fclose(f);
        return r;
}

TEST(good) {
        TokenSet *s = NULL;
        const char *node = NULL;
        unsigned line = 0;

        ASSERT_OK(load("# lmk-store tokens\n"
                       "\n"
                       "node   node-token-0123456789   # shared by all nodes\n"
                       "node\tcn001-token-0123456789\tcn001\n"
                       "admin admin-token-0123456789\n", &s, &line));
        ASSERT_EQ(token_set_size(s, ROLE_NODE), 2);
        ASSERT_EQ(token_set_size(s, ROLE_ADMIN), 1);

        ASSERT_EQ(token_set_lookup(s, "node-token-0123456789", &node), ROLE_NODE);
        ASSERT_NULL(node);
        ASSERT_EQ(token_set_lookup(s, "cn001-token-0123456789", &node), ROLE_NODE);
        ASSERT_STREQ(node, "cn001");
        ASSERT_EQ(token_set_lookup(s, "admin-token-0123456789", NULL), ROLE_ADMIN);
        ASSERT_EQ(token_set_lookup(s, "admin-token-012345678", NULL), ROLE_NONE);
        ASSERT_EQ(token_set_lookup(s, "admin-token-01234567890", NULL), ROLE_NONE);
        ASSERT_EQ(token_set_lookup(s, "", NULL), ROLE_NONE);
        token_set_free(s);
}

TEST(bad) {
        TokenSet *s = NULL;
        unsigned line = 0;

        ASSERT_ERROR(load("admin admin-token-0123456789\nroot root-token-0123456789\n", &s, &line), EINVAL);
        ASSERT_EQ(line, 2);
        ASSERT_ERROR(load("admin short\n", &s, &line), EINVAL);
        ASSERT_EQ(line, 1);
        ASSERT_ERROR(load("admin\n", &s, &line), EINVAL);
        ASSERT_ERROR(load("admin admin-token-0123456789 cn001\n", &s, &line), EINVAL);
        ASSERT_ERROR(load("node node-token-0123456789 cn001 extra\n", &s, &line), EINVAL);
        ASSERT_ERROR(load("node tok\x01n-0123456789abcdef\n", &s, &line), EINVAL);
        ASSERT_ERROR(load("node node-token-0123456789\n\nadmin node-token-0123456789\n", &s, &line), EEXIST);
        ASSERT_EQ(line, 3);
        ASSERT_NULL(s);
}

TEST(empty) {
        TokenSet *s = NULL;
        unsigned line = 0;

        ASSERT_OK(load("# nothing yet\n", &s, &line));
        ASSERT_EQ(token_set_size(s, ROLE_NODE), 0);
        ASSERT_EQ(token_set_lookup(s, "anything-0123456789", NULL), ROLE_NONE);
        token_set_free(s);
}

int main(void) {
        RUN(good);
        RUN(bad);
        RUN(empty);
        return 0;
}
