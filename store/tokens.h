/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdio.h>

#include "macro.h"

/* Bearer tokens and what they may do. The token file has one
 *   ROLE TOKEN [NODE]
 * per line (ROLE is "node" or "admin"; a node token may be bound to the one
 * node name it may push for); '#' starts a comment. */

typedef enum Role {
        ROLE_NONE = 0,
        ROLE_NODE,
        ROLE_ADMIN,
} Role;

#define TOKEN_MIN_LENGTH 16
#define TOKEN_MAX_LENGTH 512

typedef struct TokenSet TokenSet;

/* Reads the token file from f. On -EINVAL, *ret_line is the offending line
 * number (1-based); -EEXIST for a token listed twice, also with its line. */
int token_set_load(FILE *f, TokenSet **ret, unsigned *ret_line);
TokenSet *token_set_free(TokenSet *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(TokenSet *, token_set_free);

size_t token_set_size(const TokenSet *s, Role role);

/* ROLE_NONE for an unknown token. *ret_node is the node name a node token is
 * bound to, or NULL. */
Role token_set_lookup(const TokenSet *s, const char *token, const char **ret_node);

const char *role_to_string(Role r);
