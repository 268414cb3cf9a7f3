/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "buildid.h"
#include "funcname.h"
#include "macro.h"
#include "symbols/debug-names.h"

#define PAGE 4096u

static int unhex(const char *s, uint8_t ret[static BUILD_ID_MAX], size_t *ret_n) {
        size_t len = strlen(s);

        if (len == 0 || len % 2 != 0 || len / 2 > BUILD_ID_MAX || strspn(s, "0123456789abcdef") != len)
                return -EINVAL;
        for (size_t i = 0; i < len / 2; i++) {
                int hi = s[2 * i] <= '9' ? s[2 * i] - '0' : s[2 * i] - 'a' + 10;
                int lo = s[2 * i + 1] <= '9' ? s[2 * i + 1] - '0' : s[2 * i + 1] - 'a' + 10;

                ret[i] = (uint8_t) (hi << 4 | lo);
        }
        *ret_n = len / 2;
        return 0;
}

static int cmp_offset(const void *a, const void *b) {
        const FuncSym *x = a, *y = b;

        return CMP(x->offset, y->offset);
}

/* The FuncSym of offset among the n distinct sorted ones. */
static const FuncSym *find(const FuncSym *syms, size_t n, uint64_t offset) {
        FuncSym key = { .offset = offset };

        return bsearch(&key, syms, n, sizeof(FuncSym), cmp_offset);
}

int debug_names_resolve(int fd, int loads_fd, const char *build_id, FunctionName *names, size_t n) {
        _cleanup_free_ FuncSym *syms = NULL;
        _cleanup_free_ char *storage = NULL;
        uint8_t id[BUILD_ID_MAX];
        size_t id_n, m = 0;
        int named = 0, r;

        r = unhex(build_id, id, &id_n);
        if (r < 0)
                return r;
        if (n > FUNCNAME_OFFSETS_MAX)
                return -EINVAL;
        syms = calloc(MAX(n, (size_t) 1), sizeof(*syms));
        if (!syms)
                return -ENOMEM;
        /* funcname takes distinct offsets: an entry and a page may share one */
        for (size_t i = 0; i < n; i++)
                syms[i].offset = (uint64_t) names[i].offset;
        qsort(syms, n, sizeof(*syms), cmp_offset);
        for (size_t i = 0; i < n; i++)
                if (m == 0 || syms[m - 1].offset != syms[i].offset)
                        syms[m++] = syms[i];
        r = funcname_resolve_split(fd, loads_fd, id, id_n, syms, m, &storage, NULL);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                const FuncSym *f = find(syms, m, (uint64_t) names[i].offset);
                bool whole = f && f->name &&
                             (names[i].entry || (f->same_from <= f->offset && f->same_to - f->offset >= PAGE));
                const char *name = whole ? f->name : "";

                free(names[i].name);
                names[i].name = strdup(name);
                if (!names[i].name)
                        return -ENOMEM;
                named += *name != 0;
        }
        return named;
}
