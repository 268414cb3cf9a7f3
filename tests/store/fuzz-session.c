/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A session cookie or login ticket as a browser sends it: any bytes are
 * refused or, when the input carries a valid MAC (the fuzzer is given the
 * key: the first input bytes are a payload it signs), parsed into claims
 * that sign back to the same token. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t key[SESSION_KEY_SIZE] = "lmk fuzz key, not a secret.....";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const SessionKind kinds[] = { SESSION_TICKET, SESSION_COOKIE_KIND, SESSION_MARK };
        char *token = malloc(size + 1);
        SessionClaims c, again;
        char *signed_token = NULL;
        int r;

        if (!token)
                return 0;
        memcpy(token, data, size);
        token[size] = '\0';
        for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
                r = session_verify(key, kinds[k], token, 1800000000, &c);
                if (r >= 0 && (c.expires <= 1800000000 || !*c.user || c.kind != kinds[k]))
                        abort(); /* accepted past its time, without a user, or of another kind */
                if (r < 0 && r != -EBADMSG && r != -EKEYEXPIRED && r != -EMEDIUMTYPE)
                        abort();
        }
        /* what the store signs, it takes back unchanged */
        memset(&c, 0, sizeof(c));
        c.kind = kinds[size % 3];
        c.expires = 1900000000;
        c.uid = size > 0 ? data[0] : -1;
        c.admin = size > 1 && data[1] & 1;
        if (c.admin)
                memcpy(c.ref, data, size < TOKEN_REF_SIZE ? size : TOKEN_REF_SIZE);
        memcpy(c.user, token, strnlen(token, sizeof(c.user) - 1));
        if (session_sign(key, &c, &signed_token) >= 0) {
                if (session_verify(key, c.kind, signed_token, 1800000000, &again) < 0 ||
                    strcmp(again.user, c.user) != 0 || again.uid != c.uid || again.nonce != c.nonce ||
                    again.admin != c.admin || memcmp(again.ref, c.ref, TOKEN_REF_SIZE) != 0 ||
                    !session_same_identity(&again, &c))
                        abort();
                free(signed_token);
        }
        free(token);
        return 0;
}
