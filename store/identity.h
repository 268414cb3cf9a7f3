/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

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
        bool admin;             /* an admin token: no restriction */
        uid_t uid;
        char *user;             /* the uid's name on the store's host, else the number */
        char **accounts;        /* the accounts the user leads, NULL-terminated, or NULL */
} Identity;

void identity_done(Identity *id);

/* Whether the identity may see a job of user and account. */
bool identity_may_see(const Identity *id, const char *user, const char *account);

/* The led accounts as a JSON array ("[]" when none), for SQL. NULL on ENOMEM. */
char *identity_accounts_json(const Identity *id);

/* Decodes a MUNGE credential (through munged's socket, NULL: the default)
 * and checks that its payload is IDENTITY_PAYLOAD_PREFIX METHOD PATH. On
 * success fills ret->uid and ret->user. -EACCES with a reason in *ret_why
 * (to free) for a credential that is invalid, expired, replayed, for
 * another request or from root's uid 0 mapped nowhere; -EOPNOTSUPP in a
 * build without MUNGE; -EHOSTDOWN when munged does not answer. */
int identity_from_munge(const char *socket, const char *credential, const char *method, const char *path,
                        Identity *ret, char **ret_why);
