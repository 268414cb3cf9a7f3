/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "procmaps.h"

static int parse_hex(const char **p, const char *end, char stop, uint64_t *ret) {
        uint64_t v = 0;
        const char *s = *p;
        int n = 0;

        for (; s < end && *s != stop; s++, n++) {
                unsigned d;

                if (*s >= '0' && *s <= '9')
                        d = (unsigned) (*s - '0');
                else if (*s >= 'a' && *s <= 'f')
                        d = (unsigned) (*s - 'a' + 10);
                else if (*s >= 'A' && *s <= 'F')
                        d = (unsigned) (*s - 'A' + 10);
                else
                        return -EINVAL;
                if (n >= 16)
                        return -EINVAL;
                v = (v << 4) | d;
        }
        if (n == 0 || s >= end)
                return -EINVAL;
        *p = s + 1; /* skip the stop character */
        *ret = v;
        return 0;
}

static int parse_dec(const char **p, const char *end, uint64_t *ret) {
        uint64_t v = 0;
        const char *s = *p;
        int n = 0;

        for (; s < end && *s >= '0' && *s <= '9'; s++, n++) {
                if (v > (UINT64_MAX - 9) / 10)
                        return -EINVAL;
                v = v * 10 + (uint64_t) (*s - '0');
        }
        if (n == 0)
                return -EINVAL;
        *p = s;
        *ret = v;
        return 0;
}

int procmaps_parse_line(char *line, ProcMapsEntry *ret) {
        static const char deleted[] = " (deleted)";
        const char *p = line, *end;
        uint64_t start, end_addr, pgoff, maj, min, ino;
        ProcMapsEntry e = {};
        char *path;
        size_t len;

        len = strcspn(line, "\n");
        line[len] = '\0';
        end = line + len;

        if (parse_hex(&p, end, '-', &start) < 0 || parse_hex(&p, end, ' ', &end_addr) < 0)
                return -EINVAL;
        if (end_addr <= start)
                return -EINVAL;
        if (end - p < 5 || p[4] != ' ')
                return -EINVAL;
        if ((p[0] != 'r' && p[0] != '-') || (p[1] != 'w' && p[1] != '-') ||
            (p[2] != 'x' && p[2] != '-') || (p[3] != 'p' && p[3] != 's'))
                return -EINVAL;
        e.readable = p[0] == 'r';
        e.writable = p[1] == 'w';
        e.executable = p[2] == 'x';
        e.shared = p[3] == 's';
        p += 5;
        if (parse_hex(&p, end, ' ', &pgoff) < 0)
                return -EINVAL;
        if (parse_hex(&p, end, ':', &maj) < 0 || parse_hex(&p, end, ' ', &min) < 0)
                return -EINVAL;
        if (maj > 0xfff || min > 0xfffff)
                return -EINVAL;
        if (parse_dec(&p, end, &ino) < 0)
                return -EINVAL;
        if (p < end && *p != ' ')
                return -EINVAL;
        while (p < end && *p == ' ')
                p++;

        path = line + (p - line);
        len = strlen(path);
        if (len >= sizeof(deleted) - 1 && strcmp(path + len - (sizeof(deleted) - 1), deleted) == 0) {
                path[len - (sizeof(deleted) - 1)] = '\0';
                e.deleted = true;
        }

        e.start = start;
        e.end = end_addr;
        e.pgoff = pgoff;
        e.maj = (unsigned) maj;
        e.min = (unsigned) min;
        e.ino = ino;
        e.path = path;
        *ret = e;
        return 0;
}

int procmaps_parse(char *buf, size_t size, procmaps_cb_t cb, void *userdata) {
        char *p = buf, *end = buf + size;
        int bad = 0;

        while (p < end) {
                char *nl = memchr(p, '\n', (size_t) (end - p));
                char *next = nl ? nl + 1 : end;
                ProcMapsEntry e;
                int r;

                /* A NUL byte inside a line just ends that line early: it then
                 * fails to parse and is counted, nothing else. */
                if (nl)
                        *nl = '\0';
                r = procmaps_parse_line(p, &e);
                if (r < 0)
                        bad++;
                else {
                        r = cb(&e, userdata);
                        if (r < 0)
                                return r;
                }
                p = next;
        }
        return bad;
}
