/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A session cookie or login ticket as a browser sends it: any bytes are
 * refused or, when the input carries a valid MAC (the fuzzer is given the
 * key: the first input bytes are a payload it signs), parsed into claims
 * that sign back to the same token. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t key[SESSION_KEY_SIZE] = "lmk fuzz key, not a secret.....";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *token = malloc(size + 1);
        SessionClaims c, again;
        char *signed_token = NULL;
        int r;

        if (!token)
                return 0;
        memcpy(token, data, size);
        token[size] = '\0';
        for (int kind = 0; kind < 2; kind++) {
                r = session_verify(key, kind ? SESSION_TICKET : SESSION_COOKIE_KIND, token, 1800000000, &c);
                if (r >= 0 && (c.expires <= 1800000000 || !*c.user))
                        abort(); /* accepted past its time, or without a user */
                if (r < 0 && r != -EBADMSG && r != -EKEYEXPIRED && r != -EMEDIUMTYPE)
                        abort();
        }
        /* what the store signs, it takes back unchanged */
        memset(&c, 0, sizeof(c));
        c.kind = size % 2 ? SESSION_TICKET : SESSION_COOKIE_KIND;
        c.expires = 1900000000;
        c.uid = size > 0 ? data[0] : -1;
        memcpy(c.user, token, strnlen(token, sizeof(c.user) - 1));
        if (session_sign(key, &c, &signed_token) >= 0) {
                if (session_verify(key, c.kind, signed_token, 1800000000, &again) < 0 ||
                    strcmp(again.user, c.user) != 0 || again.uid != c.uid || again.nonce != c.nonce)
                        abort();
                free(signed_token);
        }
        free(token);
        return 0;
}
