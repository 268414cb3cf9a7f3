/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "macro.h"
#include "token-file.h"

/* Bearer tokens and what they may do. The token file has one
 *   ROLE TOKEN [NODE]
 * per line (ROLE is "node" or "admin"; a node token may be bound to the one
 * node name it may push for); '#' starts a comment. */

typedef enum Role {
        ROLE_NONE = 0,
        ROLE_NODE,
        ROLE_ADMIN,
} Role;

typedef struct TokenSet TokenSet;

/* Reads the token file from f. On -EINVAL, *ret_line is the offending line
 * number (1-based); -EEXIST for a token listed twice, also with its line. */
int token_set_load(FILE *f, TokenSet **ret, unsigned *ret_line);
/* Reads the token file at path under common/token-file.h's policy (mode
 * 0600, owner, size, strict text) and parses it. On failure, *ret_error
 * (if not NULL) is a sentence naming the file, what is wrong (with its line)
 * and how to fix it; free() it. */
int token_set_load_file(const char *path, TokenSet **ret, char **ret_error);
TokenSet *token_set_free(TokenSet *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(TokenSet *, token_set_free);

size_t token_set_size(const TokenSet *s, Role role);

/* ROLE_NONE for an unknown token. *ret_node is the node name a node token is
 * bound to, or NULL. */
Role token_set_lookup(const TokenSet *s, const char *token, const char **ret_node);

/* An admin token's name in a browser session it signed in (session.h): a
 * keyed hash of the token (HMAC-SHA256 under the session key, its first
 * TOKEN_REF_SIZE bytes), which tells nothing about the token to whoever
 * lacks the key, and stays the same across restarts and the stores that
 * share the key. A session names its token so that it ends when the token
 * leaves the token file. token_set_derive_refs() works out the refs of the
 * set's admin tokens under key; the two lookups below need it first. */
#define TOKEN_REF_SIZE 16
void token_set_derive_refs(TokenSet *s, const uint8_t *key, size_t key_size);
/* The ref of an admin token of the set: false for any other string. */
bool token_set_admin_ref(const TokenSet *s, const char *token, uint8_t ret[static TOKEN_REF_SIZE]);
/* Whether an admin token of the set has this ref. */
bool token_set_has_admin_ref(const TokenSet *s, const uint8_t ref[static TOKEN_REF_SIZE]);

const char *role_to_string(Role r);
