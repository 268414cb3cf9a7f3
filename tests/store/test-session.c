/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Browser sessions' parts without a server (store/auth/session.h): the count of
 * tickets per identity with a clock the test sets, the mark that keeps its
 * session's nonce, the code that confirms a switch, who is the same
 * identity, and admin tokens' refs. */
#include "auth/session.h"
#include "tests.h"
#include "util.h"

static const uint8_t key[SESSION_KEY_SIZE] = "lmk test key, not a secret.....";

TEST(mints) {
        SessionMints *m = NULL;
        unsigned retry = 0;

        ASSERT_OK(session_mints_new(&m));
        /* ten within the window, one a second */
        for (int64_t t = 1000; t < 1000 + SESSION_TICKETS_MAX; t++)
                ASSERT_OK(session_mints_take(m, "user:alice", t, &retry));
        ASSERT_ERROR(session_mints_take(m, "user:alice", 1010, &retry), EUSERS);
        /* the first of them frees a place when it is SESSION_TICKET_TTL old */
        ASSERT_EQ(retry, SESSION_TICKET_TTL - 10);
        ASSERT_ERROR(session_mints_take(m, "user:alice", 1000 + SESSION_TICKET_TTL - 1, &retry), EUSERS);
        ASSERT_EQ(retry, 1);
        ASSERT_OK(session_mints_take(m, "user:alice", 1000 + SESSION_TICKET_TTL, &retry));
        ASSERT_ERROR(session_mints_take(m, "user:alice", 1000 + SESSION_TICKET_TTL, &retry), EUSERS);
        ASSERT_EQ(retry, 1);
        /* others are not counted with her */
        ASSERT_OK(session_mints_take(m, "user:bob", 1010, &retry));
        ASSERT_OK(session_mints_take(m, "token:00112233445566778899aabbccddeeff", 1010, &retry));
        /* many identities, then one long after: the sweep drops them all
         * (freed, which ASan checks), and one that comes back starts afresh */
        for (int i = 0; i < 5000; i++) {
                char who[32];

                snprintf(who, sizeof(who), "user:u%d", i);
                ASSERT_OK(session_mints_take(m, who, 2000, &retry));
        }
        for (int64_t t = 5000; t < 5000 + SESSION_TICKETS_MAX; t++)
                ASSERT_OK(session_mints_take(m, "user:u7", t, &retry));
        ASSERT_ERROR(session_mints_take(m, "user:u7", 5000, &retry), EUSERS);
        session_mints_free(m);
}

TEST(mark_and_confirm) {
        SessionClaims c = { .kind = SESSION_COOKIE_KIND, .uid = 4242, .expires = 1900000000, .user = "alice" },
                      t = { .kind = SESSION_TICKET, .uid = 4243, .expires = 1900000000, .user = "bob" },
                      got, got_ticket;
        char *cookie = NULL, *mark = NULL, *ticket = NULL, code[SESSION_CONFIRM_SIZE + 1];

        ASSERT_OK(session_sign(key, &c, &cookie));
        c.kind = SESSION_MARK;
        ASSERT_OK(session_seal(key, &c, &mark));
        /* the mark is the session's claims and nonce, and not a session */
        ASSERT_ERROR(session_verify(key, SESSION_COOKIE_KIND, mark, 1800000000, &got), EMEDIUMTYPE);
        ASSERT_OK(session_verify(key, SESSION_MARK, mark, 1800000000, &got));
        ASSERT_EQ(got.nonce, c.nonce);
        ASSERT_STREQ(got.user, "alice");
        ASSERT_OK(session_sign(key, &t, &ticket));
        ASSERT_OK(session_verify(key, SESSION_TICKET, ticket, 1800000000, &got_ticket));
        ASSERT_FALSE(session_same_identity(&got, &got_ticket));

        session_confirm_code(key, &got_ticket, &got, code);
        ASSERT_EQ(strlen(code), SESSION_CONFIRM_SIZE);
        ASSERT_TRUE(session_confirm_check(key, &got_ticket, &got, code));
        /* another browser (its session's nonce), another ticket, another key */
        got.nonce ^= 1;
        ASSERT_FALSE(session_confirm_check(key, &got_ticket, &got, code));
        got.nonce ^= 1;
        got_ticket.nonce ^= 1;
        ASSERT_FALSE(session_confirm_check(key, &got_ticket, &got, code));
        got_ticket.nonce ^= 1;
        ASSERT_FALSE(session_confirm_check((const uint8_t *) "another key, of 32 bytes........", &got_ticket, &got,
                                           code));
        ASSERT_FALSE(session_confirm_check(key, &got_ticket, &got, NULL));
        ASSERT_FALSE(session_confirm_check(key, &got_ticket, &got, ""));
        free(cookie);
        free(mark);
        free(ticket);
}

TEST(identities) {
        SessionClaims a = { .admin = true, .ref = { 1, 2, 3 }, .user = "admin" }, b = a,
                      p = { .user = "admin" }, q = { .user = "alice" };
        char *token = NULL;

        ASSERT_TRUE(session_same_identity(&a, &b));
        b.ref[15] = 9; /* another admin token */
        ASSERT_FALSE(session_same_identity(&a, &b));
        /* a person named "admin" is no admin token */
        ASSERT_FALSE(session_same_identity(&a, &p));
        ASSERT_FALSE(session_same_identity(&p, &q));
        q = p;
        ASSERT_TRUE(session_same_identity(&p, &q));
        /* a token's ref survives signing */
        a.kind = SESSION_COOKIE_KIND;
        a.uid = -1;
        a.expires = 1900000000;
        ASSERT_OK(session_sign(key, &a, &token));
        ASSERT_OK(session_verify(key, SESSION_COOKIE_KIND, token, 1800000000, &b));
        ASSERT_TRUE(b.admin);
        ASSERT_TRUE(memcmp(a.ref, b.ref, TOKEN_REF_SIZE) == 0);
        free(token);
}

TEST(token_refs) {
        static const char two[] = "admin admin-token-0123456789\nadmin admin-token-9876543210\n"
                                  "node node-token-0123456789\n",
                          one[] = "admin admin-token-0123456789\n";
        FILE *f = fmemopen((void *) two, strlen(two), "r");
        uint8_t r1[TOKEN_REF_SIZE], r2[TOKEN_REF_SIZE], again[TOKEN_REF_SIZE];
        TokenSet *s = NULL, *other = NULL;
        unsigned line = 0;

        ASSERT_NOT_NULL(f);
        ASSERT_OK(token_set_load(f, &s, &line));
        fclose(f);
        /* none before they are derived */
        ASSERT_FALSE(token_set_admin_ref(s, "admin-token-0123456789", r1));
        token_set_derive_refs(s, key, sizeof(key));
        ASSERT_TRUE(token_set_admin_ref(s, "admin-token-0123456789", r1));
        ASSERT_TRUE(token_set_admin_ref(s, "admin-token-9876543210", r2));
        ASSERT_FALSE(token_set_admin_ref(s, "node-token-0123456789", again));
        ASSERT_FALSE(token_set_admin_ref(s, "admin-token-012345678", again));
        ASSERT_TRUE(memcmp(r1, r2, TOKEN_REF_SIZE) != 0);
        ASSERT_TRUE(token_set_has_admin_ref(s, r1));
        ASSERT_TRUE(token_set_has_admin_ref(s, r2));
        /* the same token in a set read again, under the same key: the same ref */
        f = fmemopen((void *) one, strlen(one), "r");
        ASSERT_OK(token_set_load(f, &other, &line));
        fclose(f);
        token_set_derive_refs(other, key, sizeof(key));
        ASSERT_TRUE(token_set_admin_ref(other, "admin-token-0123456789", again));
        ASSERT_TRUE(memcmp(r1, again, TOKEN_REF_SIZE) == 0);
        ASSERT_FALSE(token_set_has_admin_ref(other, r2));
        /* under another key, another ref */
        token_set_derive_refs(other, (const uint8_t *) "another key, of 32 bytes........", SESSION_KEY_SIZE);
        ASSERT_FALSE(token_set_has_admin_ref(other, r1));
        token_set_free(s);
        token_set_free(other);
}

int main(void) {
        RUN(mints);
        RUN(mark_and_confirm);
        RUN(identities);
        RUN(token_refs);
        return 0;
}
