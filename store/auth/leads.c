/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hashmap.h"
#include "auth/leads.h"
#include "macro.h"
#include "util.h"

#define LEADS_LINES_MAX 100000
#define LEADS_PER_LINE_MAX 1000

/* user → the accounts they lead */
typedef struct UserAccounts {
        char *user;
        size_t n;
        char **accounts; /* n + 1, NULL-terminated */
} UserAccounts;

struct Leads {
        Hashmap *by_user;
};

Leads *leads_new(void) {
        Leads *l = calloc(1, sizeof(*l));

        if (!l)
                return NULL;
        l->by_user = hashmap_new(&string_hash_ops);
        if (!l->by_user) {
                free(l);
                return NULL;
        }
        return l;
}

Leads *leads_free(Leads *l) {
        UserAccounts *u;
        size_t i = 0;

        if (!l)
                return NULL;
        while (hashmap_iterate(l->by_user, &i, (void **) &u, NULL)) {
                for (size_t k = 0; k < u->n; k++)
                        free(u->accounts[k]);
                free(u->accounts);
                free(u->user);
                free(u);
        }
        hashmap_free(l->by_user);
        free(l);
        return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(Leads *, leads_free);

static bool name_ok(const char *s, size_t n) {
        if (n == 0 || n > LEADS_NAME_MAX)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@+-", s[i]) ||
                    s[i] == '\0')
                        return false;
        return true;
}

static int add(Leads *l, const char *user, size_t ulen, const char *account, size_t alen) {
        _cleanup_free_ char *key = strndup(user, ulen);
        UserAccounts *u;
        char **v;
        int r;

        if (!key)
                return -ENOMEM;
        u = hashmap_get(l->by_user, key);
        if (!u) {
                u = calloc(1, sizeof(*u));
                if (!u)
                        return -ENOMEM;
                u->user = TAKE_PTR(key);
                u->accounts = calloc(1, sizeof(char *));
                if (!u->accounts || (r = hashmap_put(l->by_user, u->user, u)) < 0) {
                        free(u->accounts);
                        free(u->user);
                        free(u);
                        return -ENOMEM;
                }
        }
        for (size_t k = 0; k < u->n; k++)
                if (strlen(u->accounts[k]) == alen && memcmp(u->accounts[k], account, alen) == 0)
                        return 0;
        v = reallocarray(u->accounts, u->n + 2, sizeof(char *));
        if (!v)
                return -ENOMEM;
        u->accounts = v;
        v[u->n] = strndup(account, alen);
        if (!v[u->n])
                return -ENOMEM;
        v[++u->n] = NULL;
        return 0;
}

static int bad(char **ret_error, size_t line, const char *why) {
        if (ret_error && asprintf(ret_error, "line %zu: %s", line, why) < 0)
                *ret_error = NULL;
        return -EINVAL;
}

int leads_parse(const char *text, size_t len, Leads **ret, char **ret_error) {
        _cleanup_(leads_freep) Leads *l = leads_new();
        const char *p = text, *end = text + len;
        size_t line = 0;
        int r;

        if (!l)
                return -ENOMEM;
        while (p < end) {
                const char *eol = memchr(p, '\n', (size_t) (end - p)), *stop, *w, *account;
                size_t wl, alen, n = 0;

                if (!eol)
                        eol = end;
                if (++line > LEADS_LINES_MAX)
                        return bad(ret_error, line, "more than 100,000 lines");
                stop = memchr(p, '#', (size_t) (eol - p)) ?: eol;
                w = p;
                account = NULL;
                alen = 0;
                for (;;) {
                        while (w < stop && (*w == ' ' || *w == '\t' || *w == '\r'))
                                w++;
                        if (w == stop)
                                break;
                        wl = 0;
                        while (w + wl < stop && w[wl] != ' ' && w[wl] != '\t' && w[wl] != '\r')
                                wl++;
                        if (!name_ok(w, wl))
                                return bad(ret_error, line,
                                           "names are 1-64 characters of A-Z a-z 0-9 _ . @ + -");
                        if (!account) {
                                account = w;
                                alen = wl;
                        } else {
                                if (++n > LEADS_PER_LINE_MAX)
                                        return bad(ret_error, line, "more than 1,000 leads");
                                r = add(l, w, wl, account, alen);
                                if (r < 0)
                                        return r;
                        }
                        w += wl;
                }
                if (account && n == 0)
                        return bad(ret_error, line, "an account needs at least one lead");
                p = eol + 1;
        }
        *ret = TAKE_PTR(l);
        return 0;
}

int leads_load_file(const char *path, Leads **ret, char **ret_error) {
        _cleanup_free_ char *buf = NULL, *why = NULL;
        size_t n;
        int r;

        r = read_full_file(path, 16 * 1024 * 1024, &buf, &n);
        if (r < 0) {
                if (ret_error && asprintf(ret_error, "%s: %s", path, strerror(-r)) < 0)
                        *ret_error = NULL;
                return r;
        }
        if (memchr(buf, '\0', n)) {
                if (ret_error && asprintf(ret_error, "%s: holds a NUL byte", path) < 0)
                        *ret_error = NULL;
                return -EINVAL;
        }
        r = leads_parse(buf, n, ret, &why);
        if (r < 0 && ret_error && asprintf(ret_error, "%s: %s", path, why ?: strerror(-r)) < 0)
                *ret_error = NULL;
        return r;
}

const char *const *leads_accounts_of(const Leads *l, const char *user, size_t *ret_n) {
        const UserAccounts *u = l && user ? hashmap_get(l->by_user, user) : NULL;

        if (ret_n)
                *ret_n = u ? u->n : 0;
        return u && u->n ? (const char *const *) u->accounts : NULL;
}
