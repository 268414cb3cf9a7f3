/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>
#include <pthread.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "auth/identity.h"
#include "auth/session.h"
#include "hashmap.h"
#include "util.h"

#define KEY_FILE_MAX 4096
#define PAYLOAD_MAX 192

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

int session_seal(const uint8_t key[static SESSION_KEY_SIZE], const SessionClaims *c, char **ret) {
        char payload[PAYLOAD_MAX], ref[2 * TOKEN_REF_SIZE + 1] = "-", *t;
        uint8_t m[SHA256_DIGEST_SIZE];
        int n;

        if (!identity_user_valid(c->user) ||
            (c->kind != SESSION_TICKET && c->kind != SESSION_COOKIE_KIND && c->kind != SESSION_MARK))
                return -EINVAL;
        if (c->admin)
                hex_encode(c->ref, TOKEN_REF_SIZE, ref);
        n = snprintf(payload, sizeof(payload), "2:%c:%c:%" PRId64 ":%" PRId64 ":%016" PRIx64 ":%s:%s",
                     (char) c->kind, c->admin ? 'a' : 'u', c->uid, c->expires, c->nonce, ref, c->user);
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

int session_sign(const uint8_t key[static SESSION_KEY_SIZE], SessionClaims *c, char **ret) {
        if (getrandom(&c->nonce, sizeof(c->nonce), 0) != sizeof(c->nonce))
                return -EIO;
        return session_seal(key, c, ret);
}

/* "2:K:R:UID:EXPIRES:NONCE:REF:USER", all of it checked; REF is "-" for a
 * person. Version 1 named an admin without saying which token, or since
 * when a person was one: those are refused. */
static int parse_payload(const char *p, SessionClaims *c) {
        char kind, role, ref[2 * TOKEN_REF_SIZE + 1];
        int64_t uid, expires;
        uint64_t nonce;
        int used = 0;

        if (sscanf(p, "2:%c:%c:%" SCNd64 ":%" SCNd64 ":%16" SCNx64 ":%32[-0-9a-f]:%n", &kind, &role, &uid,
                   &expires, &nonce, ref, &used) != 6 || used == 0)
                return -EBADMSG;
        if ((kind != SESSION_TICKET && kind != SESSION_COOKIE_KIND && kind != SESSION_MARK) ||
            (role != 'a' && role != 'u') || uid < -1 || !identity_user_valid(p + used) ||
            strlen(p + used) >= sizeof(c->user))
                return -EBADMSG;
        *c = (SessionClaims) { .kind = kind, .admin = role == 'a', .uid = uid, .expires = expires, .nonce = nonce };
        if (c->admin ? hex_decode(ref, strlen(ref), c->ref, TOKEN_REF_SIZE) < 0 : !streq(ref, "-"))
                return -EBADMSG;
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

bool session_same_identity(const SessionClaims *a, const SessionClaims *b) {
        if (a->admin || b->admin)
                return a->admin && b->admin && memeql_sec(a->ref, b->ref, TOKEN_REF_SIZE);
        return streq(a->user, b->user);
}

void session_confirm_code(const uint8_t key[static SESSION_KEY_SIZE], const SessionClaims *ticket,
                          const SessionClaims *current, char ret[static SESSION_CONFIRM_SIZE + 1]) {
        char what[64];
        uint8_t m[SHA256_DIGEST_SIZE];
        int n;

        n = snprintf(what, sizeof(what), "confirm:%016" PRIx64 ":%016" PRIx64, ticket->nonce, current->nonce);
        mac(key, what, (size_t) n, m);
        hex_encode(m, SESSION_CONFIRM_SIZE / 2, ret);
}

bool session_confirm_check(const uint8_t key[static SESSION_KEY_SIZE], const SessionClaims *ticket,
                           const SessionClaims *current, const char *code) {
        char want[SESSION_CONFIRM_SIZE + 1];

        if (!code || strlen(code) != SESSION_CONFIRM_SIZE)
                return false;
        session_confirm_code(key, ticket, current, want);
        return memeql_sec(want, code, SESSION_CONFIRM_SIZE);
}

/* The times an identity minted its last tickets, a ring. */
typedef struct Mints {
        int64_t at[SESSION_TICKETS_MAX];
        unsigned next;
        char who[]; /* the key */
} Mints;

struct SessionMints {
        pthread_mutex_t lock;
        Hashmap *by_who;
        int64_t swept; /* when entries past their window were last dropped */
};

int session_mints_new(SessionMints **ret) {
        SessionMints *m = calloc(1, sizeof(SessionMints));

        if (!m)
                return -ENOMEM;
        m->by_who = hashmap_new(&string_hash_ops);
        if (!m->by_who) {
                free(m);
                return -ENOMEM;
        }
        pthread_mutex_init(&m->lock, NULL);
        *ret = m;
        return 0;
}

SessionMints *session_mints_free(SessionMints *m) {
        Mints *e;
        size_t i;

        if (!m)
                return NULL;
        HASHMAP_FOREACH(e, m->by_who, i)
                free(e);
        hashmap_free(m->by_who);
        pthread_mutex_destroy(&m->lock);
        free(m);
        return NULL;
}

static int64_t newest(const Mints *e) {
        return e->at[(e->next + SESSION_TICKETS_MAX - 1) % SESSION_TICKETS_MAX];
}

/* Drops the identities whose last ticket has expired, once per ticket
 * lifetime: the map holds those that minted lately, however many came
 * before. */
static void sweep(SessionMints *m, int64_t now) {
        _cleanup_free_ Mints **old = NULL;
        size_t n = 0, i;
        Mints *e;

        if (now - m->swept < SESSION_TICKET_TTL || hashmap_size(m->by_who) == 0)
                return;
        old = calloc(hashmap_size(m->by_who), sizeof(Mints *));
        if (!old)
                return; /* next time */
        m->swept = now;
        HASHMAP_FOREACH(e, m->by_who, i)
                if (now - newest(e) >= SESSION_TICKET_TTL)
                        old[n++] = e;
        for (i = 0; i < n; i++) {
                hashmap_remove(m->by_who, old[i]->who);
                free(old[i]);
        }
}

int session_mints_take(SessionMints *m, const char *who, int64_t now, unsigned *ret_retry_after) {
        Mints *e;
        int r = 0;

        pthread_mutex_lock(&m->lock);
        sweep(m, now);
        e = hashmap_get(m->by_who, who);
        if (!e) {
                e = calloc(1, sizeof(Mints) + strlen(who) + 1);
                if (!e) {
                        r = -ENOMEM;
                        goto out;
                }
                strcpy(e->who, who);
                for (size_t i = 0; i < SESSION_TICKETS_MAX; i++)
                        e->at[i] = INT64_MIN / 2;
                r = hashmap_put(m->by_who, e->who, e);
                if (r < 0) {
                        free(e);
                        goto out;
                }
        }
        /* the oldest of the last SESSION_TICKETS_MAX is next to be replaced */
        if (now - e->at[e->next] < SESSION_TICKET_TTL) {
                *ret_retry_after = (unsigned) (SESSION_TICKET_TTL - (now - e->at[e->next]));
                r = -EUSERS;
                goto out;
        }
        e->at[e->next] = now;
        e->next = (e->next + 1) % SESSION_TICKETS_MAX;
out:
        pthread_mutex_unlock(&m->lock);
        return r;
}

bool session_next_valid(const char *n) {
        if (!n || strlen(n) > 512 || strstr(n, "//") || strstr(n, ".."))
                return false;
        if (strncmp(n, "jobs", 4) != 0 && strncmp(n, "site", 4) != 0)
                return false;
        for (const char *p = n; *p; p++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/?=&%+", *p))
                        return false;
        return true;
}
