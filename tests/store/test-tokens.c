/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <fcntl.h>
#include <sys/stat.h>

#include "tests.h"
#include "auth/tokens.h"
#include "util.h"

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

static void write_tokens(const char *path, const char *text, mode_t mode) {
        int fd;

        (void) unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(loop_write(fd, text, strlen(text)));
        close(fd);
        ASSERT_TRUE(chmod(path, mode) == 0);
}

/* From a file: common/token-file.h's policy first, then the format, each
 * refusal in a sentence that names the file. */
TEST(file) {
        char dir[] = "/tmp/lmk-tokens-XXXXXX", path[64], cmd[96];
        const char *good = "node node-token-0123456789 cn001\nadmin admin-token-0123456789\n";
        TokenSet *s = NULL;
        char *why = NULL;

        ASSERT_NOT_NULL(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/tokens", dir);

        write_tokens(path, good, 0600);
        ASSERT_OK(token_set_load_file(path, &s, &why));
        ASSERT_NULL(why);
        ASSERT_EQ(token_set_lookup(s, "admin-token-0123456789", NULL), ROLE_ADMIN);
        s = token_set_free(s);

        /* group-readable was a warning before; now one policy refuses it */
        write_tokens(path, good, 0640);
        ASSERT_ERROR(token_set_load_file(path, &s, &why), EACCES);
        ASSERT_TRUE(strstr(why, "chmod 600") && strstr(why, path));
        ASSERT_NULL(s);
        free(why);

        /* CR was a separator before; a CRLF file is now named as such */
        write_tokens(path, "admin admin-token-0123456789\r\n", 0600);
        ASSERT_ERROR(token_set_load_file(path, &s, &why), EBADMSG);
        ASSERT_TRUE(strstr(why, "carriage return"));
        free(why);

        write_tokens(path, "admin admin-token-0123456789\nroot x\n", 0600);
        ASSERT_ERROR(token_set_load_file(path, &s, &why), EINVAL);
        ASSERT_TRUE(strstr(why, ":2: expected"));
        free(why);

        write_tokens(path, "admin admin-token-0123456789\nnode admin-token-0123456789\n", 0600);
        ASSERT_ERROR(token_set_load_file(path, &s, &why), EEXIST);
        ASSERT_TRUE(strstr(why, ":2: token listed twice"));
        free(why);

        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
}

int main(void) {
        RUN(good);
        RUN(bad);
        RUN(empty);
        RUN(file);
        return 0;
}
