/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "powercap.h"
#include "util.h"

#define POWERCAP_ROOT "/sys/class/powercap"

/* A zone's name file: a short identifier, or -EINVAL. */
static int read_zone_name(int dir_fd, const char *zone, char *buf, size_t size) {
        _cleanup_free_ char *s = NULL;
        char path[PATH_MAX];
        int fd, r;
        size_t n;

        snprintf(path, sizeof(path), "%s/name", zone);
        fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = read_full_fd(fd, 256, &s, &n);
        close(fd);
        if (r < 0)
                return r;
        while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == ' '))
                s[--n] = '\0';
        if (n == 0 || n >= size || strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != n)
                return -EINVAL;
        memcpy(buf, s, n + 1);
        return 0;
}

static int read_u64_fd(int fd, uint64_t *ret) {
        char buf[32];
        ssize_t n;

        n = pread(fd, buf, sizeof(buf) - 1, 0);
        if (n < 0)
                return -errno;
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
                n--;
        buf[n] = '\0';
        return safe_atou64(buf, 10, ret);
}

static int read_u64_at(int dir_fd, const char *zone, const char *file, uint64_t *ret) {
        char path[PATH_MAX];
        int fd, r;

        snprintf(path, sizeof(path), "%s/%s", zone, file);
        fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = read_u64_fd(fd, ret);
        close(fd);
        return r;
}

/* "intel-rapl:N" (level 1) or "intel-rapl:N:M" (level 2); 0 otherwise. */
static int zone_level(const char *d, unsigned *ret_package) {
        unsigned a, b;
        int end = 0;

        if (sscanf(d, "intel-rapl:%u%n", &a, &end) == 1 && d[end] == '\0') {
                *ret_package = a;
                return 1;
        }
        end = 0;
        if (sscanf(d, "intel-rapl:%u:%u%n", &a, &b, &end) == 2 && d[end] == '\0') {
                *ret_package = a;
                return 2;
        }
        return 0;
}

static int name_cmp(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* Adds one zone; what cannot be read is left out, remembering EACCES. */
static int add_zone(Powercap *p, int dir_fd, const char *d, bool *ret_denied) {
        char name[POWERCAP_ZONE_NAME_MAX], parent[POWERCAP_ZONE_NAME_MAX], path[PATH_MAX];
        PowercapZone *z;
        unsigned package;
        int level, fd, r;

        level = zone_level(d, &package);
        if (level == 0 || p->n == POWERCAP_MAX_ZONES || read_zone_name(dir_fd, d, name, sizeof(name)) < 0)
                return 0;
        z = &p->zones[p->n];
        *z = (PowercapZone) { .fd = -EBADF };
        if (level == 1 && strncmp(name, "package-", 8) == 0) {
                snprintf(z->name, sizeof(z->name), "%s", name);
                z->kind = "package";
        } else if (level == 2 && streq(name, "dram")) {
                char parent_dir[64];

                snprintf(parent_dir, sizeof(parent_dir), "intel-rapl:%u", package);
                if (read_zone_name(dir_fd, parent_dir, parent, sizeof(parent)) < 0)
                        snprintf(parent, sizeof(parent), "package-%u", package);
                if (snprintf(z->name, sizeof(z->name), "%s/dram", parent) >= (int) sizeof(z->name))
                        return 0;
                z->kind = "dram";
        } else
                return 0;
        if (read_u64_at(dir_fd, d, "max_energy_range_uj", &z->max_uj) < 0 || z->max_uj == 0)
                return 0;
        snprintf(path, sizeof(path), "%s/energy_uj", d);
        fd = openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
                if (errno == EACCES || errno == EPERM)
                        *ret_denied = true;
                return 0;
        }
        r = read_u64_fd(fd, &z->last_uj);
        if (r < 0 || z->last_uj > z->max_uj) {
                if (r == -EACCES || r == -EPERM)
                        *ret_denied = true;
                close(fd);
                return 0;
        }
        z->fd = fd;
        p->n++;
        return 0;
}

int powercap_open(const char *root, Powercap **ret) {
        _cleanup_(powercap_freep) Powercap *p = NULL;
        _cleanup_(closedirp) DIR *d = NULL;
        char *names[POWERCAP_MAX_ZONES * 4];
        struct dirent *de;
        bool denied = false;
        size_t n = 0;
        int r = 0;

        d = opendir(root ?: POWERCAP_ROOT);
        if (!d)
                return errno == ENOENT || errno == ENOTDIR ? -ENOENT : -errno;
        p = calloc(1, sizeof(Powercap));
        if (!p)
                return -ENOMEM;
        /* by name, so that zones come in the same order on every node */
        while ((de = readdir(d)) && n < ELEMENTSOF(names)) {
                unsigned package;

                if (zone_level(de->d_name, &package) == 0)
                        continue;
                if (!(names[n] = strdup(de->d_name))) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        if (r == 0) {
                qsort(names, n, sizeof(char *), name_cmp);
                for (size_t i = 0; i < n; i++)
                        (void) add_zone(p, dirfd(d), names[i], &denied);
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        if (r < 0)
                return r;
        if (p->n == 0)
                return denied ? -EACCES : -ENOENT;
        *ret = TAKE_PTR(p);
        return 0;
}

Powercap *powercap_free(Powercap *p) {
        if (!p)
                return NULL;
        for (size_t i = 0; i < p->n; i++)
                safe_close(p->zones[i].fd);
        free(p);
        return NULL;
}

double powercap_read(Powercap *p) {
        double sum = 0;

        for (size_t i = 0; i < p->n; i++) {
                PowercapZone *z = &p->zones[i];
                uint64_t now, delta;

                if (read_u64_fd(z->fd, &now) < 0 || now > z->max_uj) {
                        z->bad_reads++;
                        continue;
                }
                if (now >= z->last_uj)
                        delta = now - z->last_uj;
                else {
                        /* counted up to max_uj, then on from 0 */
                        delta = z->max_uj - z->last_uj + now;
                        z->wraps++;
                }
                z->last_uj = now;
                z->joules += (double) delta / 1e6;
                z->joules_total += (double) delta / 1e6;
                sum += (double) delta / 1e6;
        }
        return sum;
}

void powercap_reset(Powercap *p) {
        for (size_t i = 0; i < p->n; i++)
                p->zones[i].joules = 0;
}

double powercap_joules(const Powercap *p) {
        double sum = 0;

        for (size_t i = 0; i < p->n; i++)
                sum += p->zones[i].joules;
        return sum;
}
