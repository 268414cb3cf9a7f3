/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One line of /proc/<pid>/maps:
 *   start-end perms offset major:minor inode   path
 * The path (may be empty, may contain spaces, may end in " (deleted)")
 * points into the caller's buffer. */
typedef struct ProcMapsEntry {
        uint64_t start;
        uint64_t end;
        uint64_t pgoff;
        uint64_t ino;
        unsigned maj;
        unsigned min;
        bool readable, writable, executable, shared;
        bool deleted;           /* path ended in " (deleted)", which was cut off */
        const char *path;       /* "" for anonymous mappings */
} ProcMapsEntry;

/* Parses one line (without or with its newline; the line is modified to
 * NUL-terminate the path). -EINVAL on anything malformed. */
int procmaps_parse_line(char *line, ProcMapsEntry *ret);

/* Calls cb for every well-formed line of buf (a whole maps file, which need
 * not end in a newline; buf[size] must be NUL, as read_full_file() leaves it). Malformed lines are skipped and counted; returns the
 * number of malformed lines, or the first negative value cb returned. */
typedef int (*procmaps_cb_t)(const ProcMapsEntry *e, void *userdata);
int procmaps_parse(char *buf, size_t size, procmaps_cb_t cb, void *userdata);
