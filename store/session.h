/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Browser sessions (docs/web.md). A browser cannot make MUNGE credentials,
 * so `lmk web` makes one for POST /api/v1/sessions and gets a login ticket:
 * a link the browser follows once, within SESSION_TICKET_TTL seconds, to
 * get a session cookie (HttpOnly, SameSite=Strict) good for --session-ttl.
 *
 * Both are signed, not stored: "HEXPAYLOAD.HEXMAC", where the payload names
 * what it is (ticket or session), the role (person or admin), the uid and
 * user, when it expires and a random nonce, and the MAC is HMAC-SHA256 under
 * the store's session key (--session-key FILE, shared by the stores behind
 * one name; else random at start, which ends every session on restart). A
 * ticket's nonce is remembered until it expires, so each works once. */

#define SESSION_KEY_SIZE 32
#define SESSION_TICKET_TTL 120
#define SESSION_DEFAULT_TTL (8 * 3600)
#define SESSION_TOKEN_MAX 512
#define SESSION_COOKIE "lmk_session"

typedef enum SessionKind {
        SESSION_TICKET = 't',
        SESSION_COOKIE_KIND = 's',
} SessionKind;

typedef struct SessionClaims {
        SessionKind kind;
        bool admin;
        int64_t uid;    /* -1: not known (an admin token, a proxy's user) */
        char user[65];
        int64_t expires;
        uint64_t nonce;
} SessionClaims;

/* Reads a key file: at least SESSION_KEY_SIZE bytes of secret, hashed to
 * the key, readable by its owner only. -EPERM for a file others may read,
 * -EINVAL for one too short. */
int session_key_load(const char *path, uint8_t key[static SESSION_KEY_SIZE]);
int session_key_random(uint8_t key[static SESSION_KEY_SIZE]);

/* Signs claims (nonce drawn here) into a token; -EINVAL for a user name
 * identity_user_valid() refuses. */
int session_sign(const uint8_t key[static SESSION_KEY_SIZE], SessionClaims *c, char **ret);
/* Checks a token of the given kind at time now: -EBADMSG malformed or
 * signed with another key, -EKEYEXPIRED past its time, -EMEDIUMTYPE the
 * other kind. */
int session_verify(const uint8_t key[static SESSION_KEY_SIZE], SessionKind kind, const char *token, int64_t now,
                   SessionClaims *ret);

/* Tickets already used, until they expire. */
#define SESSION_USED_MAX 4096

typedef struct SessionUsed {
        pthread_mutex_t lock;
        size_t n;
        struct {
                uint64_t nonce;
                int64_t expires;
        } items[SESSION_USED_MAX];
} SessionUsed;

void session_used_init(SessionUsed *u);
void session_used_done(SessionUsed *u);
/* Marks a ticket used: -EALREADY if it was, -ENOSPC when too many tickets
 * are in flight at once. */
int session_used_take(SessionUsed *u, uint64_t nonce, int64_t expires, int64_t now);
