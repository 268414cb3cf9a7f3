/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk web [JOB]: a link that signs this user's browser in to the store's
 * pages (docs/web.md). The store takes the user's MUNGE credential (or an
 * admin's token) and answers with a login ticket that works once, for two
 * minutes; following it gives the browser a session cookie. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "util.h"

/* How long a login link works (the store's SESSION_TICKET_TTL): a page
 * older than that leads nowhere. */
#define TICKET_TTL_S 120
#define PAGE_PREFIX "lmk-web-"
#define PAGE_SUFFIX ".html"

static void fputs_html(const char *s, FILE *f) {
        for (; *s; s++)
                switch (*s) {
                case '&': fputs("&amp;", f); break;
                case '<': fputs("&lt;", f); break;
                case '>': fputs("&gt;", f); break;
                case '"': fputs("&quot;", f); break;
                case '\'': fputs("&#39;", f); break;
                default: fputc(*s, f);
                }
}

/* Pages of earlier runs whose links have expired: ours by name, a regular
 * file of this user, nothing else. */
static void remove_old_pages(int dir_fd) {
        _cleanup_(closedirp) DIR *d = NULL;
        int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 3);
        struct dirent *e;
        time_t now = time(NULL);

        if (fd < 0 || !(d = fdopendir(fd))) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        while ((e = readdir(d))) {
                size_t n = strlen(e->d_name);
                struct stat st;

                if (n != strlen(PAGE_PREFIX "XXXXXX" PAGE_SUFFIX) || strncmp(e->d_name, PAGE_PREFIX, 8) != 0 ||
                    !streq(e->d_name + n - 5, PAGE_SUFFIX))
                        continue;
                if (fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
                    st.st_uid != getuid() || now - st.st_mtime < TICKET_TTL_S)
                        continue;
                (void) unlinkat(dir_fd, e->d_name, 0);
        }
}

/* The link holds the login ticket: on xdg-open's command line, and the
 * browser's that it starts, every user of the machine could read it in
 * /proc/PID/cmdline. The browser is given a page instead, a file only this
 * user can read in their runtime directory (XDG_RUNTIME_DIR: theirs alone,
 * and gone at logout), which goes on to the link at once. */
static int write_page(const char *url, char **ret_path) {
        const char *dir = getenv("XDG_RUNTIME_DIR");
        _cleanup_close_ int dir_fd = -EBADF;
        _cleanup_free_ char *path = NULL;
        struct stat st;
        FILE *f;
        int fd, r;

        if (!dir || dir[0] != '/')
                return -ENOENT;
        dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (dir_fd < 0)
                return -errno;
        if (fstat(dir_fd, &st) < 0)
                return -errno;
        if (st.st_uid != getuid() || (st.st_mode & 0077))
                return -EPERM;
        remove_old_pages(dir_fd);
        if (asprintf(&path, "%s/" PAGE_PREFIX "XXXXXX" PAGE_SUFFIX, dir) < 0)
                return -ENOMEM;
        fd = mkostemps(path, strlen(PAGE_SUFFIX), O_CLOEXEC); /* 0600 */
        if (fd < 0)
                return -errno;
        f = fdopen(fd, "w");
        if (!f) {
                r = -errno;
                close(fd);
                (void) unlink(path);
                return r;
        }
        fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><meta name=\"referrer\" content=\"no-referrer\">"
              "<meta http-equiv=\"refresh\" content=\"0; url=", f);
        fputs_html(url, f);
        fputs("\"><title>lmk web</title></head>\n<body><p><a href=\"", f);
        fputs_html(url, f);
        fputs("\">Sign in to lmk</a></p></body></html>\n", f);
        if (fclose(f) != 0) {
                r = -errno;
                (void) unlink(path);
                return r;
        }
        *ret_path = TAKE_PTR(path);
        return 0;
}

/* xdg-open where there is a desktop; the link is printed in any case. */
static void open_link(const char *url) {
        _cleanup_free_ char *page = NULL;
        pid_t pid;
        int r;

        if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY")) {
                fprintf(stderr, "lmk: no desktop here (DISPLAY is not set): open the link yourself.\n");
                return;
        }
        r = write_page(url, &page);
        if (r < 0) {
                const char *dir = getenv("XDG_RUNTIME_DIR");

                fprintf(stderr, "lmk: no private directory to hand the link to the browser unseen by other users "
                        "(XDG_RUNTIME_DIR %s%s%s): open it yourself.\n", dir ?: "is not set", dir ? ": " : "",
                        !dir ? "" : r == -EPERM ? "not this user's alone" : strerror(-r));
                return;
        }
        pid = fork();
        if (pid == 0) {
                execlp("xdg-open", "xdg-open", page, (char *) NULL);
                _exit(127);
        }
        if (pid > 0)
                (void) waitpid(pid, NULL, 0);
}

int do_web(Cli *cli, int argc, char **argv) {
        const char *job = NULL, *cluster = NULL, *login;
        bool site = false, open_it = false;
        const CliOption options[] = {
                { "cluster", 0, CLI_STRING, .string = &cluster },
                { "site", 0, CLI_FLAG, .flag = &site },
                { "open", 0, CLI_FLAG, .flag = &open_it },
        };
        _cleanup_(json_object_putp) json_object *body = NULL, *o = NULL;
        _cleanup_free_ char *next = NULL, *url = NULL;
        CliQuery query; /* web POSTs: no query */
        size_t n;
        int r;

        r = cli_parse(cli, "web", options, 1, argc, argv, &query);
        if (r < 0)
                return r;
        if (r < argc)
                job = argv[r];
        if (job && site)
                return cli_error(cli, EINVAL, "web: a job or --site, not both");
        if (cluster && !job)
                return cli_error(cli, EINVAL, "web: --cluster names a job's cluster; name the job too");

        if (job && asprintf(&next, "jobs/%s%s%s", job, cluster ? "?cluster=" : "", cluster ?: "") < 0)
                return cli_error(cli, ENOMEM, "Out of memory.");
        body = json_object_new_object();
        if (!body || (next && json_object_object_add(body, "next", json_object_new_string(next)) < 0) ||
            (site && json_object_object_add(body, "next", json_object_new_string("site")) < 0))
                return cli_error(cli, ENOMEM, "Out of memory.");

        r = cli_request(cli, "POST", "/api/v1/sessions", NULL, body, &o);
        if (r < 0)
                return r;
        login = jstr(o, "login");
        if (!login)
                return cli_error(cli, EBADMSG, "The store's answer holds no login link.");
        n = strlen(cli->store);
        while (n > 0 && cli->store[n - 1] == '/')
                n--;
        if (asprintf(&url, "%.*s/%s", (int) n, cli->store, login) < 0)
                return cli_error(cli, ENOMEM, "Out of memory.");
        if (cli->json) {
                json_object_object_add(o, "url", json_object_new_string(url));
                cli_print_json(o);
                return 0;
        }
        printf("Open this link in your browser; it works once, within %" PRId64 " seconds:\n\n  %s\n\n"
               "It signs the browser in as %s%s for %" PRId64 " hours.\n",
               jint(o, "expires") - (int64_t) time(NULL), url, jstr(o, "user") ?: "?",
               json_object_get_boolean(jget(o, "admin")) ? " (admin)" : "", jint(o, "session_seconds") / 3600);
        if (open_it)
                open_link(url);
        return 0;
}
