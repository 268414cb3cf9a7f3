/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if HAVE_MUNGE
#include <munge.h>
#endif

#include <arpa/inet.h>

#include "auth/identity.h"
#include "http/conn-guard.h"
#include "macro.h"
#include "util.h"

void identity_done(Identity *id) {
        if (!id)
                return;
        free(id->user);
        for (char **a = id->accounts; a && *a; a++)
                free(*a);
        free(id->accounts);
        free(id->node);
        *id = (Identity) {};
}

Identity *identity_free(Identity *id) {
        identity_done(id);
        free(id);
        return NULL;
}

bool identity_may_see(const Identity *id, const char *user, const char *account) {
        if (id->admin)
                return true;
        if (user && id->user && streq(user, id->user))
                return true;
        for (char **a = id->accounts; account && a && *a; a++)
                if (streq(*a, account))
                        return true;
        return false;
}

_printf_(3, 4)
static int why(char **ret_why, int r, const char *fmt, ...) {
        va_list ap;

        if (ret_why) {
                va_start(ap, fmt);
                if (vasprintf(ret_why, fmt, ap) < 0)
                        *ret_why = NULL;
                va_end(ap);
        }
        return r;
}

static char *user_name(uid_t uid) {
        struct passwd pw, *res = NULL;
        char buf[4096], *s;

        if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_name[0])
                return strdup(res->pw_name);
        if (asprintf(&s, "%u", (unsigned) uid) < 0)
                return NULL;
        return s;
}

int identity_from_munge(const char *socket, const char *credential, const char *method, const char *path,
                        Identity *ret, char **ret_why) {
#if HAVE_MUNGE
        _cleanup_free_ char *want = NULL;
        void *payload = NULL;
        munge_ctx_t ctx;
        munge_err_t e;
        uid_t uid;
        gid_t gid;
        int len = 0, r = 0;

        if (strlen(credential) > IDENTITY_CREDENTIAL_MAX)
                return why(ret_why, -EACCES, "the MUNGE credential is over %d bytes", IDENTITY_CREDENTIAL_MAX);
        if (asprintf(&want, IDENTITY_PAYLOAD_PREFIX "%s %s", method, path) < 0)
                return -ENOMEM;
        ctx = munge_ctx_create();
        if (!ctx)
                return -ENOMEM;
        if (socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
                munge_ctx_destroy(ctx);
                return -EINVAL;
        }
        e = munge_decode(credential, ctx, &payload, &len, &uid, &gid);
        if (e == EMUNGE_SOCKET || e == EMUNGE_TIMEOUT)
                r = why(ret_why, -EHOSTDOWN, "munged does not answer: %s", munge_ctx_strerror(ctx) ?: munge_strerror(e));
        else if (e != EMUNGE_SUCCESS)
                r = why(ret_why, -EACCES, "the MUNGE credential is refused: %s",
                        munge_ctx_strerror(ctx) ?: munge_strerror(e));
        else if (len < 0 || (size_t) len != strlen(want) || memcmp(payload, want, (size_t) len) != 0)
                r = why(ret_why, -EACCES, "the MUNGE credential was made for another request than %s", want);
        munge_ctx_destroy(ctx);
        free(payload);
        if (r < 0)
                return r;
        *ret = (Identity) { .uid = uid, .user = user_name(uid) };
        return ret->user ? 0 : -ENOMEM;
#else
        return why(ret_why, -EOPNOTSUPP, "%s", "this lmk-store was built without MUNGE");
#endif
}

int trusted_proxies_parse(const char *s, TrustedProxies *ret) {
        TrustedProxies t = {};
        const char *p = s;

        while (*p) {
                char word[INET6_ADDRSTRLEN + 1];
                size_t n;
                struct in_addr v4;

                p += strspn(p, " \t,");
                n = strcspn(p, " \t,");
                if (n == 0)
                        break;
                if (n >= sizeof(word))
                        return -EINVAL;
                memcpy(word, p, n);
                word[n] = '\0';
                if (t.n == TRUSTED_PROXIES_MAX)
                        return -E2BIG;
                if (inet_pton(AF_INET, word, &v4) == 1) {
                        struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr = v4 };
                        address_key((const struct sockaddr *) &sin, &t.addr[t.n]);
                } else if (inet_pton(AF_INET6, word, &t.addr[t.n]) != 1)
                        return -EINVAL;
                t.n++;
                p += n;
        }
        *ret = t;
        return 0;
}

bool trusted_proxies_contain(const TrustedProxies *t, const struct sockaddr *sa) {
        struct in6_addr a;

        if (!t || t->n == 0 || !sa || (sa->sa_family != AF_INET && sa->sa_family != AF_INET6))
                return false;
        address_key(sa, &a);
        for (size_t i = 0; i < t->n; i++)
                if (memcmp(&a, &t->addr[i], sizeof(a)) == 0)
                        return true;
        return false;
}

bool identity_user_char(char c) {
        return c && strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.@+-", c);
}

bool identity_user_valid(const char *s) {
        size_t n = strlen(s);

        if (n == 0 || n > 64)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!identity_user_char(s[i]))
                        return false;
        return true;
}

int identity_from_proxy(const char *user, Identity *ret) {
        *ret = (Identity) { .uid = (uid_t) -1, .user = strdup(user) };
        return ret->user ? 0 : -ENOMEM;
}
