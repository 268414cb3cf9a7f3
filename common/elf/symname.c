/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "macro.h"
#include "symname.h"
#include "utf8.h"

/* The Itanium C++ ABI's demangler, from GCC's libsupc++.a, linked
 * statically: the same code as libiberty's cplus_demangle, without loading
 * libstdc++.so into lmkd (collectors/meson.build says what each costs).
 * Declared here because <cxxabi.h> is C++. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static char *demangle_cxx(const char *raw, size_t n) {
        _cleanup_free_ char *z = NULL;
        int status = -1;
        char *s;

        /* Only "_Z…" names: given anything else, __cxa_demangle reads it as
         * a type ("i" would come back as "int"). */
        if (n < 3 || n > SYMNAME_MANGLED_MAX || raw[0] != '_' || raw[1] != 'Z' || memchr(raw, 0, n))
                return NULL;
        z = strndup(raw, n);
        if (!z)
                return NULL;
        s = __cxa_demangle(z, NULL, NULL, &status);
        if (status != 0) {
                free(s);
                return NULL;
        }
        return s;
}

/* gfortran names a module procedure "__" module "_MOD_" procedure (also
 * for the OpenMP regions outlined from it: "__m_MOD_p._omp_fn.0"). */
static char *fortran_module_procedure(const char *raw, size_t n) {
        const char *mod = raw + 2, *sep;
        char *s;

        if (n < 2 + 1 + 5 + 1 || raw[0] != '_' || raw[1] != '_')
                return NULL;
        sep = memmem(mod, n - 2, "_MOD_", 5);
        if (!sep || sep == mod || sep + 5 == raw + n)
                return NULL;
        if (asprintf(&s, "%.*s::%.*s", (int) (sep - mod), mod, (int) (raw + n - (sep + 5)), sep + 5) < 0)
                return NULL;
        return s;
}

int symname_show(const char *raw, size_t n, bool cut, char out[static SYMNAME_MAX + 1]) {
        _cleanup_free_ char *shown = NULL, *valid = NULL;
        const char *text = raw;
        size_t len = n, take;
        bool whole;

        if (!cut) {
                shown = demangle_cxx(raw, n);
                if (!shown)
                        shown = fortran_module_procedure(raw, n);
                if (shown) {
                        text = shown;
                        len = strlen(shown);
                }
        }
        /* Only the part that can be shown is looked at: a demangled name
         * may be long, and a character is 4 bytes at most. */
        take = MIN(len, (size_t) SYMNAME_MAX + 4);
        whole = take == len;
        valid = utf8_make_valid(text, take);
        if (!valid)
                return -ENOMEM;
        for (char *p = valid; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f)
                        *p = '?';
        len = strlen(valid);
        if (whole && !cut && len <= SYMNAME_MAX) {
                memcpy(out, valid, len + 1);
                return (int) len;
        }
        /* Cut: room for "...", and never inside a UTF-8 sequence. */
        len = MIN(len, (size_t) SYMNAME_MAX - 3);
        while (len > 0 && ((unsigned char) valid[len] & 0xC0) == 0x80)
                len--;
        memcpy(out, valid, len);
        memcpy(out + len, "...", 4);
        return (int) len + 3;
}
