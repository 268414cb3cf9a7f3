/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk-bench-rusage [--cgroup DIR] PROGRAM [ARGS...]: runs the program and,
 * when it ends, prints "rusage-all CPU_S FAULTS" with what the kernel
 * accounted to it and the children it waited for (wait4): a referee for a
 * whole job step, launcher included. With --cgroup, it first moves itself
 * into that cgroup (writing 0 to DIR/cgroup.procs), so the program lives
 * there from its fork on, and adds what it used itself from then on (its
 * fork, its wait): the cgroup's counts and the figures cover the same work.
 * Also prints "rusage-child" (the program and its children alone) and
 * "rusage-life" (the step with the wrapper's whole life, before the move
 * too: a process's figures as its threads keep them). Costs the step well
 * under a millisecond, where a Python wrapper would cost tens. Exits with
 * the program's status. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static double seconds(const struct rusage *ru) {
        return (double) ru->ru_utime.tv_sec + (double) ru->ru_utime.tv_usec / 1e6 + (double) ru->ru_stime.tv_sec +
               (double) ru->ru_stime.tv_usec / 1e6;
}

static int enter_cgroup(const char *dir) {
        char path[PATH_MAX];
        int fd;

        if (snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= (int) sizeof(path))
                return -1;
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -1;
        if (write(fd, "0", 1) != 1) {
                close(fd);
                return -1;
        }
        return close(fd);
}

int main(int argc, char **argv) {
        struct rusage ru, self0 = {}, self1 = {};
        int status, first = 1;
        pid_t pid;

        if (argc > 2 && strcmp(argv[1], "--cgroup") == 0) {
                if (enter_cgroup(argv[2]) < 0) {
                        perror(argv[2]);
                        return 1;
                }
                first = 3;
                (void) getrusage(RUSAGE_SELF, &self0);
        }
        if (argc <= first) {
                fprintf(stderr, "usage: %s [--cgroup DIR] PROGRAM [ARGS...]\n", argv[0]);
                return 2;
        }
        pid = fork();
        if (pid < 0) {
                perror("fork");
                return 1;
        }
        if (pid == 0) {
                execvp(argv[first], argv + first);
                perror(argv[first]);
                _exit(127);
        }
        if (wait4(pid, &status, 0, &ru) < 0) {
                perror("wait4");
                return 1;
        }
        (void) getrusage(RUSAGE_SELF, &self1);
        if (first == 1)
                self0 = self1;
        printf("rusage-all %.6f %ld\n", seconds(&ru) + seconds(&self1) - seconds(&self0),
               ru.ru_minflt + ru.ru_majflt + (self1.ru_minflt + self1.ru_majflt) - (self0.ru_minflt + self0.ru_majflt));
        /* the program alone, and the step with this wrapper's whole life */
        printf("rusage-child %.6f %ld\n", seconds(&ru), ru.ru_minflt + ru.ru_majflt);
        printf("rusage-life %.6f %ld\n", seconds(&ru) + seconds(&self1),
               ru.ru_minflt + ru.ru_majflt + self1.ru_minflt + self1.ru_majflt);
        fflush(stdout);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
