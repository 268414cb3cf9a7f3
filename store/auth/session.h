/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "auth/tokens.h"

/* Browser sessions (docs/web.md). A browser cannot make MUNGE credentials,
 * so `lmk web` makes one for POST /api/v1/sessions and gets a login ticket:
 * a link the browser follows once, within SESSION_TICKET_TTL seconds, to
 * get a session cookie (HttpOnly, SameSite=Strict) good for --session-ttl.
 * A session never mints a ticket: only MUNGE, a token or a trusted proxy
 * do, so that a session ends when its time is up.
 *
 * Both are signed, not stored: "HEXPAYLOAD.HEXMAC", where the payload names
 * what it is (ticket, session or mark), who minted it (a person, or an
 * admin token and which: its ref, tokens.h), the uid and user, when it
 * expires and a random nonce, and the MAC is HMAC-SHA256 under the store's
 * session key (--session-key FILE, shared by the stores behind one name;
 * else random at start, which ends every session on restart). What a
 * session may do is worked out at each request from the store's
 * configuration then (--admin-users, the leads, the tokens): the claims
 * say only who it is. A ticket works once: the stores record its nonce in
 * their database until it expires (StorageOps.use_ticket).
 *
 * The mark is a second cookie beside the session (SameSite=Lax), with the
 * session's claims and nonce: a browser sends it even on a link from
 * another site, which the session cookie is not, so the store knows who
 * the browser is signed in as before it follows a login link that would
 * sign it in as someone else. It is never an identity. */

#define SESSION_KEY_SIZE 32
#define SESSION_TICKET_TTL 120
#define SESSION_DEFAULT_TTL (8 * 3600)
#define SESSION_TOKEN_MAX 512
#define SESSION_COOKIE "lmk_session"
#define SESSION_MARK_COOKIE "lmk_signed_in"
/* Tickets one identity may have minted within SESSION_TICKET_TTL (one
 * store's count). */
#define SESSION_TICKETS_MAX 10
/* A login confirmation's code (session_confirm_code()), in hex. */
#define SESSION_CONFIRM_SIZE 32

typedef enum SessionKind {
        SESSION_TICKET = 't',
        SESSION_COOKIE_KIND = 's',
        SESSION_MARK = 'm',
} SessionKind;

typedef struct SessionClaims {
        SessionKind kind;
        bool admin;     /* minted with an admin token: the one whose ref is ref */
        uint8_t ref[TOKEN_REF_SIZE];
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
/* The same with the claims' own nonce (a mark beside its session). */
int session_seal(const uint8_t key[static SESSION_KEY_SIZE], const SessionClaims *c, char **ret);
/* Checks a token of the given kind at time now: -EBADMSG malformed or
 * signed with another key, -EKEYEXPIRED past its time, -EMEDIUMTYPE the
 * other kind. */
int session_verify(const uint8_t key[static SESSION_KEY_SIZE], SessionKind kind, const char *token, int64_t now,
                   SessionClaims *ret);
/* Whether two claims name the same identity: the same admin token, or
 * the same person. */
bool session_same_identity(const SessionClaims *a, const SessionClaims *b);

/* The code that confirms, on the store's own page, that the browser
 * signed in as current is to follow ticket: a MAC of both nonces, which no
 * other site can know (the nonce of current is in the browser's HttpOnly
 * cookies). */
void session_confirm_code(const uint8_t key[static SESSION_KEY_SIZE], const SessionClaims *ticket,
                          const SessionClaims *current, char ret[static SESSION_CONFIRM_SIZE + 1]);
bool session_confirm_check(const uint8_t key[static SESSION_KEY_SIZE], const SessionClaims *ticket,
                           const SessionClaims *current, const char *code);

/* Tickets minted per identity, so that nobody mints without bound: one
 * entry per identity that minted within SESSION_TICKET_TTL, dropped after. */
typedef struct SessionMints SessionMints;

int session_mints_new(SessionMints **ret);
SessionMints *session_mints_free(SessionMints *m);
/* Counts a ticket minted for who (any string naming an identity) at now
 * (seconds of a clock that does not step): 0, or -EUSERS when who has
 * minted SESSION_TICKETS_MAX within SESSION_TICKET_TTL, with the seconds
 * until the next may be minted in *ret_retry_after; -ENOMEM. */
int session_mints_take(SessionMints *m, const char *who, int64_t now, unsigned *ret_retry_after);

/* Where a login link may lead (its next=): one of the store's pages,
 * relative, nothing that could leave the store (no scheme, no "//", no
 * ".."). */
bool session_next_valid(const char *next);
