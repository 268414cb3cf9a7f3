/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk-bench-idle N: forks N children that sleep in pause() until this
 * process ends, prints "ready" once all exist, and ends them (and itself)
 * when its standard input closes. The benchmark holds the pipe, so the
 * children go away even if the benchmark dies. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
        char *end = NULL, buf[64];
        pid_t parent = getpid(), *kids;
        long n = argc == 2 ? strtol(argv[1], &end, 10) : 0;

        if (argc != 2 || *end || n < 1 || n > 100000) {
                fprintf(stderr, "usage: %s N\n", argv[0]);
                return 2;
        }
        kids = calloc((size_t) n, sizeof(*kids));
        if (!kids)
                return 1;
        for (long i = 0; i < n; i++) {
                kids[i] = fork();
                if (kids[i] < 0) {
                        perror("fork");
                        n = i;
                        break;
                }
                if (kids[i] == 0) {
                        prctl(PR_SET_PDEATHSIG, SIGKILL);
                        if (getppid() != parent)
                                _exit(0);
                        for (;;)
                                pause();
                }
        }
        printf("ready %ld\n", n);
        fflush(stdout);
        while (read(STDIN_FILENO, buf, sizeof(buf)) > 0 || errno == EINTR)
                errno = 0;
        for (long i = 0; i < n; i++)
                kill(kids[i], SIGKILL);
        for (long i = 0; i < n; i++)
                waitpid(kids[i], NULL, 0);
        free(kids);
        return 0;
}
