/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "node-software.h"
#include "util.h"

/* A node has a few thousand libraries; more files than this in the folders
 * looked at means something else lives there, and the scan stops. */
#define SCAN_FILES_MAX 100000

static const char *const default_dirs[] = {
        "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib/powerpc64le-linux-gnu",
        "/usr/lib64", "/usr/lib", "/usr/local/lib", "/usr/local/lib64", NULL,
};

void node_software_done(NodeSoftware *s) {
        for (size_t i = 0; i < s->n; i++)
                free(s->v[i].path);
        *s = (NodeSoftware) {};
}

static int note(NodeSoftware *s, const LibFamily *f, const char *path) {
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->v[i].family, f->family) && streq(s->v[i].purpose, f->purpose))
                        return 0;
        if (s->n >= NODE_SOFTWARE_MAX)
                return 0;
        s->v[s->n].path = strdup(path);
        if (!s->v[s->n].path)
                return -ENOMEM;
        snprintf(s->v[s->n].purpose, sizeof(s->v[s->n].purpose), "%s", f->purpose);
        snprintf(s->v[s->n].family, sizeof(s->v[s->n].family), "%s", f->family);
        s->n++;
        return 0;
}

static int scan_dir(const LibFamilies *t, const char *dir, unsigned depth, NodeSoftware *s) {
        DIR *d = opendir(dir);
        struct dirent *de;
        int r = 0;

        if (!d)
                return 0;
        while ((de = readdir(d)) && s->files < SCAN_FILES_MAX) {
                char path[PATH_MAX], real[PATH_MAX];
                const LibFamily *f;
                struct stat st;

                if (de->d_name[0] == '.')
                        continue;
                if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int) sizeof(path))
                        continue;
                if (de->d_type == DT_DIR) {
                        if (depth > 0 && (r = scan_dir(t, path, depth - 1, s)) < 0)
                                break;
                        continue;
                }
                if (fnmatch("*.so*", de->d_name, 0) != 0)
                        continue;
                s->files++;
                /* a name reached through alternatives or a symlink counts as
                 * the file it is: that is how lmkd reports mapped objects */
                if (!realpath(path, real) || stat(real, &st) < 0 || !S_ISREG(st.st_mode))
                        continue;
                f = lib_families_match(t, real);
                if (f && (r = note(s, f, real)) < 0)
                        break;
        }
        closedir(d);
        return r;
}

int node_software_scan(const LibFamilies *t, const char *const *dirs, NodeSoftware *ret) {
        NodeSoftware s = {};
        int r;

        for (const char *const *d = dirs ?: default_dirs; *d; d++) {
                r = scan_dir(t, *d, 1, &s);
                if (r < 0) {
                        node_software_done(&s);
                        return r;
                }
        }
        *ret = s;
        return 0;
}
