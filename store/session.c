/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "identity.h"
#include "session.h"
#include "util.h"

#define KEY_FILE_MAX 4096
#define PAYLOAD_MAX 160

int session_key_load(const char *path, uint8_t key[static SESSION_KEY_SIZE]) {
        _cleanup_close_ int fd = -EBADF;
        uint8_t buf[KEY_FILE_MAX];
        struct sha256_ctx h;
        struct stat st;
        ssize_t n;

        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EBADFD;
        /* whoever can read the key can be anyone */
        if (st.st_mode & 0077)
                return -EPERM;
        n = read(fd, buf, sizeof(buf));
        if (n < 0)
                return -errno;
        if ((size_t) n < SESSION_KEY_SIZE) {
                explicit_bzero(buf, sizeof(buf));
                return -EINVAL;
        }
        sha256_init(&h);
        sha256_update(&h, (size_t) n, buf);
        sha256_digest(&h, SESSION_KEY_SIZE, key);
        explicit_bzero(buf, sizeof(buf));
        return 0;
}

int session_key_random(uint8_t key[static SESSION_KEY_SIZE]) {
        ssize_t n = getrandom(key, SESSION_KEY_SIZE, 0);

        if (n < 0)
                return -errno;
        return n == SESSION_KEY_SIZE ? 0 : -EIO;
}

static void mac(const uint8_t key[static SESSION_KEY_SIZE], const char *payload, size_t n,
                uint8_t out[static SHA256_DIGEST_SIZE]) {
        struct hmac_sha256_ctx h;

        hmac_sha256_set_key(&h, SESSION_KEY_SIZE, key);
        hmac_sha256_update(&h, n, (const uint8_t *) payload);
        hmac_sha256_digest(&h, SHA256_DIGEST_SIZE, out);
}

static void hex_encode(const uint8_t *p, size_t n, char *out) {
        static const char digits[] = "0123456789abcdef";

        for (size_t i = 0; i < n; i++) {
                out[2 * i] = digits[p[i] >> 4];
                out[2 * i + 1] = digits[p[i] & 15];
        }
        out[2 * n] = '\0';
}

static int hex_digit(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* Lower-case hex of exactly 2 * n digits. */
static int hex_decode(const char *s, size_t len, uint8_t *out, size_t n) {
        if (len != 2 * n)
                return -EBADMSG;
        for (size_t i = 0; i < n; i++) {
                int hi = hex_digit(s[2 * i]), lo = hex_digit(s[2 * i + 1]);

                if (hi < 0 || lo < 0)
                        return -EBADMSG;
                out[i] = (uint8_t) (hi << 4 | lo);
        }
        return 0;
}

int session_sign(const uint8_t key[static SESSION_KEY_SIZE], SessionClaims *c, char **ret) {
        char payload[PAYLOAD_MAX], *t;
        uint8_t m[SHA256_DIGEST_SIZE];
        int n;

        if (!identity_user_valid(c->user) || (c->kind != SESSION_TICKET && c->kind != SESSION_COOKIE_KIND))
                return -EINVAL;
        if (getrandom(&c->nonce, sizeof(c->nonce), 0) != sizeof(c->nonce))
                return -EIO;
        n = snprintf(payload, sizeof(payload), "1:%c:%c:%" PRId64 ":%" PRId64 ":%016" PRIx64 ":%s",
                     (char) c->kind, c->admin ? 'a' : 'u', c->uid, c->expires, c->nonce, c->user);
        if (n < 0 || (size_t) n >= sizeof(payload))
                return -EINVAL;
        mac(key, payload, (size_t) n, m);
        t = malloc(2 * (size_t) n + 1 + 2 * SHA256_DIGEST_SIZE + 1);
        if (!t)
                return -ENOMEM;
        hex_encode((const uint8_t *) payload, (size_t) n, t);
        t[2 * n] = '.';
        hex_encode(m, SHA256_DIGEST_SIZE, t + 2 * n + 1);
        *ret = t;
        return 0;
}

/* "1:K:R:UID:EXPIRES:NONCE:USER", all of it checked. */
static int parse_payload(const char *p, SessionClaims *c) {
        char kind, role;
        int64_t uid, expires;
        uint64_t nonce;
        int used = 0;

        if (sscanf(p, "1:%c:%c:%" SCNd64 ":%" SCNd64 ":%16" SCNx64 ":%n", &kind, &role, &uid, &expires, &nonce,
                   &used) != 5 || used == 0)
                return -EBADMSG;
        if ((kind != SESSION_TICKET && kind != SESSION_COOKIE_KIND) || (role != 'a' && role != 'u') ||
            uid < -1 || !identity_user_valid(p + used) || strlen(p + used) >= sizeof(c->user))
                return -EBADMSG;
        *c = (SessionClaims) { .kind = kind, .admin = role == 'a', .uid = uid, .expires = expires, .nonce = nonce };
        strcpy(c->user, p + used);
        return 0;
}

int session_verify(const uint8_t key[static SESSION_KEY_SIZE], SessionKind kind, const char *token, int64_t now,
                   SessionClaims *ret) {
        uint8_t m[SHA256_DIGEST_SIZE], want[SHA256_DIGEST_SIZE];
        char payload[PAYLOAD_MAX];
        const char *dot;
        size_t plen;
        int r;

        if (!token || strnlen(token, SESSION_TOKEN_MAX + 1) > SESSION_TOKEN_MAX)
                return -EBADMSG;
        dot = strchr(token, '.');
        if (!dot || (size_t) (dot - token) % 2 != 0)
                return -EBADMSG;
        plen = (size_t) (dot - token) / 2;
        if (plen == 0 || plen >= sizeof(payload))
                return -EBADMSG;
        if ((r = hex_decode(token, 2 * plen, (uint8_t *) payload, plen)) < 0 ||
            (r = hex_decode(dot + 1, strlen(dot + 1), m, sizeof(m))) < 0)
                return r;
        payload[plen] = '\0';
        if (memchr(payload, '\0', plen))
                return -EBADMSG;
        mac(key, payload, plen, want);
        if (!memeql_sec(m, want, sizeof(m)))
                return -EBADMSG;
        /* signed by us: what follows only reads our own writing */
        r = parse_payload(payload, ret);
        if (r < 0)
                return r;
        if (ret->kind != kind)
                return -EMEDIUMTYPE;
        if (now >= ret->expires)
                return -EKEYEXPIRED;
        return 0;
}

void session_used_init(SessionUsed *u) {
        pthread_mutex_init(&u->lock, NULL);
        u->n = 0;
}

void session_used_done(SessionUsed *u) {
        pthread_mutex_destroy(&u->lock);
}

int session_used_take(SessionUsed *u, uint64_t nonce, int64_t expires, int64_t now) {
        int r = 0;

        pthread_mutex_lock(&u->lock);
        for (size_t i = 0; i < u->n;) {
                if (u->items[i].expires <= now) {
                        u->items[i] = u->items[--u->n];
                        continue;
                }
                if (u->items[i].nonce == nonce) {
                        r = -EALREADY;
                        goto out;
                }
                i++;
        }
        if (u->n == SESSION_USED_MAX) {
                r = -ENOSPC;
                goto out;
        }
        u->items[u->n].nonce = nonce;
        u->items[u->n].expires = expires;
        u->n++;
out:
        pthread_mutex_unlock(&u->lock);
        return r;
}
