/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <string.h>

#include "hashmap.h"
#include "auth/tokens.h"

typedef struct Token {
        Role role;
        char *node;
        uint8_t ref[TOKEN_REF_SIZE]; /* admin tokens, once derived */
        char token[]; /* the hashmap key */
} Token;

struct TokenSet {
        Hashmap *by_token;
        size_t n_node, n_admin;
        Token **admins; /* n_admin of them, for the lookup by ref */
        bool refs;      /* derived */
};

const char *role_to_string(Role r) {
        switch (r) {
        case ROLE_NODE:
                return "node";
        case ROLE_ADMIN:
                return "admin";
        default:
                return "none";
        }
}

TokenSet *token_set_free(TokenSet *s) {
        Token *t;
        size_t i;

        if (!s)
                return NULL;
        HASHMAP_FOREACH(t, s->by_token, i) {
                explicit_bzero(t->token, strlen(t->token));
                free(t->node);
                free(t);
        }
        hashmap_free(s->by_token);
        free(s->admins);
        free(s);
        return NULL;
}

int token_set_load(FILE *f, TokenSet **ret, unsigned *ret_line) {
        _cleanup_(token_set_freep) TokenSet *s = NULL;
        _cleanup_free_ char *line = NULL;
        size_t alloc = 0;
        unsigned lineno = 0;
        ssize_t n;

        s = calloc(1, sizeof(TokenSet));
        if (!s)
                return -ENOMEM;
        s->by_token = hashmap_new(&string_hash_ops);
        if (!s->by_token)
                return -ENOMEM;

        while ((n = getline(&line, &alloc, f)) >= 0) {
                char *words[4] = {}, *save = NULL, *w;
                size_t nw = 0;
                Token *t;
                Role role;
                int r;

                lineno++;
                if ((size_t) n != strlen(line)) {
                        *ret_line = lineno;
                        return -EINVAL;
                }
                line[strcspn(line, "#")] = '\0';
                for (w = strtok_r(line, " \t\r\n", &save); w; w = strtok_r(NULL, " \t\r\n", &save)) {
                        if (nw >= ELEMENTSOF(words)) {
                                *ret_line = lineno;
                                return -EINVAL;
                        }
                        words[nw++] = w;
                }
                if (nw == 0)
                        continue;
                if (streq(words[0], "node") && (nw == 2 || nw == 3))
                        role = ROLE_NODE;
                else if (streq(words[0], "admin") && nw == 2)
                        role = ROLE_ADMIN;
                else {
                        *ret_line = lineno;
                        return -EINVAL;
                }
                if (!token_is_valid(words[1])) {
                        *ret_line = lineno;
                        return -EINVAL;
                }
                if (hashmap_get(s->by_token, words[1])) {
                        *ret_line = lineno;
                        return -EEXIST;
                }

                t = calloc(1, sizeof(Token) + strlen(words[1]) + 1);
                if (!t)
                        return -ENOMEM;
                t->role = role;
                strcpy(t->token, words[1]);
                if (nw == 3 && !(t->node = strdup(words[2]))) {
                        free(t);
                        return -ENOMEM;
                }
                r = hashmap_put(s->by_token, t->token, t);
                if (r < 0) {
                        free(t->node);
                        free(t);
                        return r;
                }
                if (role == ROLE_NODE)
                        s->n_node++;
                else {
                        Token **a = reallocarray(s->admins, s->n_admin + 1, sizeof(Token *));

                        if (!a)
                                return -ENOMEM;
                        s->admins = a;
                        s->admins[s->n_admin++] = t;
                }
        }
        if (ferror(f))
                return -EIO;
        if (line)
                explicit_bzero(line, alloc);

        *ret = TAKE_PTR(s);
        return 0;
}

int token_set_load_file(const char *path, TokenSet **ret, char **ret_error) {
        _cleanup_free_ char *text = NULL;
        unsigned line = 0;
        FILE *f;
        int r;

        r = token_file_read(path, &text, ret_error);
        if (r < 0)
                return r;
        f = fmemopen(text, strlen(text), "r");
        if (!f) {
                r = -errno;
                token_erase(text);
                return r;
        }
        r = token_set_load(f, ret, &line);
        fclose(f);
        token_erase(text);
        if (r == -EEXIST && ret_error && asprintf(ret_error, "%s:%u: token listed twice.", path, line) < 0)
                *ret_error = NULL;
        if (r == -EINVAL && ret_error &&
            asprintf(ret_error, "%s:%u: expected \"node TOKEN [NODE]\" or \"admin TOKEN\" with a token of %d to "
                     "%d printable characters.", path, line, TOKEN_MIN_LENGTH, TOKEN_MAX_LENGTH) < 0)
                *ret_error = NULL;
        return r;
}

size_t token_set_size(const TokenSet *s, Role role) {
        return role == ROLE_NODE ? s->n_node : role == ROLE_ADMIN ? s->n_admin : 0;
}

Role token_set_lookup(const TokenSet *s, const char *token, const char **ret_node) {
        Token *t;

        /* The map only compares tokens whose 64-bit hash matches, so lookup
         * time says nothing about how much of a guessed token is right. */
        t = hashmap_get(s->by_token, token);
        if (!t)
                return ROLE_NONE;
        if (ret_node)
                *ret_node = t->node;
        return t->role;
}

void token_set_derive_refs(TokenSet *s, const uint8_t *key, size_t key_size) {
        for (size_t i = 0; i < s->n_admin; i++) {
                struct hmac_sha256_ctx h;

                hmac_sha256_set_key(&h, key_size, key);
                hmac_sha256_update(&h, sizeof("lmk admin token"), (const uint8_t *) "lmk admin token");
                hmac_sha256_update(&h, strlen(s->admins[i]->token), (const uint8_t *) s->admins[i]->token);
                hmac_sha256_digest(&h, TOKEN_REF_SIZE, s->admins[i]->ref);
                explicit_bzero(&h, sizeof(h));
        }
        s->refs = true;
}

bool token_set_admin_ref(const TokenSet *s, const char *token, uint8_t ret[static TOKEN_REF_SIZE]) {
        Token *t = hashmap_get(s->by_token, token);

        if (!t || t->role != ROLE_ADMIN || !s->refs)
                return false;
        memcpy(ret, t->ref, TOKEN_REF_SIZE);
        return true;
}

bool token_set_has_admin_ref(const TokenSet *s, const uint8_t ref[static TOKEN_REF_SIZE]) {
        bool found = false;

        /* every one compared, in constant time: a few admin tokens */
        for (size_t i = 0; s->refs && i < s->n_admin; i++)
                found |= memeql_sec(s->admins[i]->ref, ref, TOKEN_REF_SIZE);
        return found;
}
