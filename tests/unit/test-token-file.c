/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The one policy for token files (lmkd, lmk-store, lmk): only the owner may
 * read or write them, they are bounded, and they are text; each refusal says
 * what is wrong and how to fix it. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "tests.h"
#include "token-file.h"
#include "util.h"

static char dir[] = "/tmp/lmk-token-XXXXXX";
static char path[256];

static void put(const char *data, size_t n, mode_t mode) {
        int fd;

        (void) unlink(path);
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        ASSERT_TRUE(fd >= 0);
        ASSERT_OK(loop_write(fd, data, n));
        close(fd);
        ASSERT_TRUE(chmod(path, mode) == 0);
}

#define put_text(s, mode) put((s), strlen(s), (mode))

/* Reads path expecting error err, with each of the words in the message. */
static void refused(int err, const char *want1, const char *want2) {
        _cleanup_free_ char *text = NULL, *why = NULL;
        int r;

        r = token_file_read(path, &text, &why);
        if (r != -err)
                test_fail("%s: expected -%d, got %d (%s)", path, err, r, why ?: "no message");
        ASSERT_NULL(text);
        ASSERT_NOT_NULL(why);
        if (!strstr(why, path) || (want1 && !strstr(why, want1)) || (want2 && !strstr(why, want2)))
                test_fail("message \"%s\" lacks the file name, \"%s\" or \"%s\"", why, want1 ?: "", want2 ?: "");
}

static char *accepted(void) {
        char *text = NULL, *why = NULL;
        int r;

        r = token_file_read(path, &text, &why);
        if (r < 0)
                test_fail("%s refused: %s", path, why ?: strerror(-r));
        ASSERT_NULL(why);
        return text;
}

TEST(private_modes_accepted) {
        _cleanup_free_ char *a = NULL, *b = NULL;

        put_text("node-token-6f1c2a9e0b7d4e35\n", 0600);
        a = accepted();
        ASSERT_STREQ(a, "node-token-6f1c2a9e0b7d4e35\n");
        put_text("node-token-6f1c2a9e0b7d4e35\n", 0400);
        b = accepted();
        ASSERT_STREQ(b, "node-token-6f1c2a9e0b7d4e35\n");
}

TEST(shared_modes_refused_with_the_fix) {
        char fix[300];
        const mode_t modes[] = { 0640, 0644, 0604, 0660, 0620, 0602, 0666 };

        snprintf(fix, sizeof(fix), "chmod 600 %s", path);
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                put_text("node-token-6f1c2a9e0b7d4e35\n", modes[i]);
                refused(EACCES, fix, NULL);
        }
        put_text("node-token-6f1c2a9e0b7d4e35\n", 0644);
        refused(EACCES, "read by all users", "0644");
        put_text("node-token-6f1c2a9e0b7d4e35\n", 0640);
        refused(EACCES, "read by its group", "0640");
        put_text("node-token-6f1c2a9e0b7d4e35\n", 0620);
        refused(EACCES, "changed by its group", NULL);
}

TEST(owner) {
        char fix[300];

        if (geteuid() != 0) {
                fprintf(stderr, "(not root: cannot give a file to another user; owner check not exercised)\n");
                return;
        }
        put_text("node-token-6f1c2a9e0b7d4e35\n", 0600);
        ASSERT_TRUE(chown(path, 65534, 65534) == 0);
        snprintf(fix, sizeof(fix), "chown 0 %s", path);
        refused(EPERM, "uid 65534", fix);
}

TEST(empty) {
        put_text("", 0600);
        refused(ENODATA, "empty", NULL);
        put_text(" \n\t\n", 0600);
        refused(ENODATA, "empty", NULL);
}

TEST(too_big) {
        _cleanup_free_ char *big = malloc(TOKEN_FILE_MAX + 1);

        ASSERT_NOT_NULL(big);
        memset(big, 'a', TOKEN_FILE_MAX + 1);
        put(big, TOKEN_FILE_MAX + 1, 0600);
        refused(EFBIG, "bytes", NULL);
}

TEST(binary_junk) {
        put("tok\0en-6f1c2a9e0b7d4e35\n", 24, 0600);
        refused(EBADMSG, "NUL byte at offset 3", NULL);
        put_text("\x7f" "ELF\x02\x01\x01\n", 0600);
        refused(EBADMSG, "control character 0x7f", NULL);
        put_text("admin admin-token-0123456789\nnode \x01node-token-0123456789\n", 0600);
        refused(EBADMSG, "control character 0x01", "line 2");
        put_text("node-token-\xff\xfe\n", 0600);
        refused(EBADMSG, "not UTF-8", "byte 11");
        put_text("node-token-\xc0\xaf\n", 0600);  /* an overlong '/' */
        refused(EBADMSG, "not UTF-8", NULL);
}

TEST(crlf) {
        put_text("admin admin-token-0123456789\r\n", 0600);
        refused(EBADMSG, "carriage return on line 1", "sed -i");
}

TEST(trailing_whitespace_kept_for_the_caller) {
        _cleanup_free_ char *t = NULL;

        /* blanks are the callers' to split on; the text comes back as it is */
        put_text("node-token-6f1c2a9e0b7d4e35  \t\n", 0600);
        t = accepted();
        ASSERT_STREQ(t, "node-token-6f1c2a9e0b7d4e35  \t\n");
        /* UTF-8 in a comment is fine */
        put_text("# jeton de l'équipe\nnode-token-6f1c2a9e0b7d4e35\n", 0600);
        free(accepted());
}

TEST(not_a_regular_file) {
        char fifo[300];
        _cleanup_free_ char *text = NULL, *why = NULL;

        /* a FIFO must not hang the reader */
        snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
        ASSERT_TRUE(mkfifo(fifo, 0600) == 0);
        ASSERT_ERROR(token_file_read(fifo, &text, &why), EINVAL);
        ASSERT_TRUE(strstr(why, "not a regular file"));
        free(why);
        why = NULL;
        ASSERT_ERROR(token_file_read(dir, &text, &why), EINVAL);
        free(why);
        why = NULL;
        ASSERT_TRUE(token_file_read("/nonexistent/token", &text, &why) == -ENOENT);
        ASSERT_TRUE(strstr(why, "/nonexistent/token"));
}

TEST(symlink_to_private_file) {
        char link[300];
        _cleanup_free_ char *text = NULL, *why = NULL;

        put_text("node-token-6f1c2a9e0b7d4e35\n", 0600);
        snprintf(link, sizeof(link), "%s/link", dir);
        ASSERT_TRUE(symlink(path, link) == 0);
        ASSERT_OK(token_file_read(link, &text, &why));
        /* the mode checked is the file's, not the link's 0777 */
        ASSERT_TRUE(chmod(path, 0644) == 0);
        free(text);
        text = NULL;
        ASSERT_ERROR(token_file_read(link, &text, &why), EACCES);
}

TEST(token_is_valid) {
        ASSERT_TRUE(token_is_valid("node-token-6f1c2a9e0b7d4e35"));
        ASSERT_FALSE(token_is_valid("short"));
        ASSERT_FALSE(token_is_valid("node-token 6f1c2a9e0b7d4e35"));
        ASSERT_FALSE(token_is_valid("node-token-6f1c2a9e0b7d4e35\t"));
        ASSERT_FALSE(token_is_valid("node-token-6f1c2a9e0b7d4e3\xc3\xa9"));
}

int main(void) {
        char cmd[300];

        ASSERT_NOT_NULL(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/token", dir);
        RUN(private_modes_accepted);
        RUN(shared_modes_refused_with_the_fix);
        RUN(owner);
        RUN(empty);
        RUN(too_big);
        RUN(binary_junk);
        RUN(crlf);
        RUN(trailing_whitespace_kept_for_the_caller);
        RUN(not_a_regular_file);
        RUN(symlink_to_private_file);
        RUN(token_is_valid);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
