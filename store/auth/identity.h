/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "auth/tokens.h"

/* Who asks: the identity behind a query. An admin token sees everything; a
 * person proves who they are with a MUNGE credential, the way a Slurm
 * cluster already knows its users (the same munged and key), and sees their
 * own jobs and those of the accounts they lead (leads.h).
 *
 * The lmk command makes one credential per request, with the payload
 * "lmk-store METHOD PATH" (the path without its query), so a credential
 * seen on the way cannot be used for another request; munged refuses to
 * decode one twice (replay) and after its time-to-live (300 s by default). */

#define IDENTITY_PAYLOAD_PREFIX "lmk-store "
#define IDENTITY_CREDENTIAL_MAX 4096

typedef struct Identity {
        bool admin;             /* an admin (token or --admin-users): no restriction */
        bool by_token;          /* an admin token, the one whose ref (tokens.h) is token_ref */
        uint8_t token_ref[TOKEN_REF_SIZE];
        uid_t uid;
        char *user;             /* the uid's name on the store's host, else the number */
        char **accounts;        /* the accounts the user leads, NULL-terminated, or NULL */
        char *node;             /* a node token's: the node it is bound to, or NULL */
} Identity;

void identity_done(Identity *id);
/* identity_done() and free(); accepts NULL. */
Identity *identity_free(Identity *id);

/* Whether the identity may see a job of user and account. */
bool identity_may_see(const Identity *id, const char *user, const char *account);


/* Decodes a MUNGE credential (through munged's socket, NULL: the default)
 * and checks that its payload is IDENTITY_PAYLOAD_PREFIX METHOD PATH. On
 * success fills ret->uid and ret->user. -EACCES with a reason in *ret_why
 * (to free) for a credential that is invalid, expired, replayed, for
 * another request or from root's uid 0 mapped nowhere; -EOPNOTSUPP in a
 * build without MUNGE; -EHOSTDOWN when munged does not answer. */
int identity_from_munge(const char *socket, const char *credential, const char *method, const char *path,
                        Identity *ret, char **ret_why);

/* A site with single sign-on puts lmk-store behind its reverse proxy, which
 * names the user in a header (--user-header, e.g. X-Remote-User). The store
 * believes that header only from the proxies' addresses (--trusted-proxies,
 * a list of IPv4/IPv6 addresses separated by commas or blanks). */
#define TRUSTED_PROXIES_MAX 64

typedef struct TrustedProxies {
        size_t n;
        struct in6_addr addr[TRUSTED_PROXIES_MAX];
} TrustedProxies;

/* -EINVAL for something that is not an address, -E2BIG past the maximum. */
int trusted_proxies_parse(const char *s, TrustedProxies *ret);
bool trusted_proxies_contain(const TrustedProxies *t, const struct sockaddr *sa);

/* Whether a name from a proxy's header is a user name lmk takes: 1-64
 * characters of A-Z a-z 0-9 _ . @ + - (user@REALM included). */
bool identity_user_valid(const char *s);
bool identity_user_char(char c);
/* An identity for a user a trusted proxy named. -ENOMEM. */
int identity_from_proxy(const char *user, Identity *ret);
