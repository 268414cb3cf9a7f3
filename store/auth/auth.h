/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "auth/identity.h"
#include "auth/leads.h"
#include "auth/session.h"
#include "auth/tokens.h"
#include "http/http.h"
#include "metrics/metrics.h"

/* Who asks a request and whether they may use its route
 * (docs/lmk-store.md): a bearer token, a MUNGE credential, a user a trusted
 * proxy names, or a browser's session cookie; then, for a person, whether
 * they are an admin, which accounts they lead, and whether the site opens
 * its site-wide views to them. */

/* Who may use a route (http.h's Route.access). */
struct Access {
        Role role;      /* ROLE_NODE: nodes push; ROLE_ADMIN: queries (admins and people) */
        bool site_view; /* site-wide aggregates: people see them unless the site says no */
        bool credential; /* a session cookie is not enough: MUNGE, a token or a proxy */
};

typedef struct AuthConfig {
        const char *munge_socket;      /* munged's socket; NULL: the default */
        const char *user_header;       /* the header a trusted proxy names the user in, or NULL */
        TrustedProxies trusted_proxies;
        bool site_views_admin_only;    /* site-wide views only for admin tokens */
        char **admin_users;            /* people who are admins, NULL-terminated, or NULL */
        unsigned session_ttl_s;        /* browser sessions */
        uint8_t session_key[SESSION_KEY_SIZE];
} AuthConfig;

typedef struct Auth {
        AuthConfig config;
        Metrics *metrics;       /* counts the refusals */

        pthread_rwlock_t tokens_lock;
        TokenSet *tokens;

        /* who leads which account (SIGHUP) */
        pthread_rwlock_t leads_lock;
        Leads *leads;

        SessionMints *mints; /* login tickets minted per identity */
} Auth;

/* The locks; a->config, a->tokens and a->leads may be set after. */
void auth_init(Auth *a, Metrics *metrics);
/* Before the first request: the admin tokens' refs (tokens.h), the record
 * of login tickets. */
int auth_start(Auth *a);
/* Frees what a holds, started or not. */
void auth_done(Auth *a);

/* http.h's HttpHooks.admit: req->identity, allocated here, says who asks
 * (nobody for a route open to anyone); false when reply holds the
 * refusal. */
bool auth_admit(Auth *a, const Route *route, Request *req, Reply *reply);
/* HttpHooks.done: frees req->identity. */
void auth_request_done(Request *req);

/* Counts and logs (at debug level) a request refused for who asked. */
void auth_denied(Auth *a, const Request *req, const char *reason);
/* Whether a site-wide view is closed to the request's identity. */
bool auth_site_view_closed(Auth *a, const Request *req);

/* Replace the tokens and who leads which account (SIGHUP); take
 * ownership. */
void auth_set_tokens(Auth *a, TokenSet *tokens);
void auth_set_leads(Auth *a, Leads *leads);
