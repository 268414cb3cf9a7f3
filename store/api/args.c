/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reading a request's query the same way in every handler: times,
 * numbers, words, and who may see what. */
#include <errno.h>

#include "api/api.h"
#include "api/timeparam.h"
#include "util.h"

bool arg_time(Request *req, const char *key, const char *fallback, int64_t now, int64_t *ret, Reply *reply) {
        const char *v = request_arg(req, key) ?: fallback;
        int r;

        if (!v)
                return true;
        r = time_param_parse(v, now, ret);
        if (r < 0) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, key,
                            "%s=%s: expected Unix seconds, \"now\", or an age such as 90m, 24h, 7d, 2w", key, v);
                return false;
        }
        return true;
}

bool arg_uint(Request *req, const char *key, unsigned min, unsigned max, unsigned *ret, Reply *reply) {
        const char *v = request_arg(req, key);
        uint64_t n;

        if (!v)
                return true;
        if (safe_atou64(v, 10, &n) < 0 || n < min || n > max) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, key, "%s=%s: expected an integer from %u to %u",
                            key, v, min, max);
                return false;
        }
        *ret = (unsigned) n;
        return true;
}

bool arg_word(Request *req, const char *key, int (*from_string)(const char *), const char *expected, int *ret,
              Reply *reply) {
        const char *v = request_arg(req, key);
        int x;

        if (!v)
                return true;
        x = from_string(v);
        if (x < 0) {
                reply_error(reply, MHD_HTTP_BAD_REQUEST, key, "%s=%s: expected %s", key, v, expected);
                return false;
        }
        *ret = x;
        return true;
}

JobFilter api_job_filter(Request *req) {
        return (JobFilter) {
                .user = request_arg(req, "user"),
                .cluster = request_arg(req, "cluster"),
                .account = request_arg(req, "account"),
                .partition = request_arg(req, "partition"),
                .app = request_arg(req, "app"),
                .name = request_arg(req, "name"),
                .node_type = request_arg(req, "node_type"),
        };
}

void api_viewer(const Request *req, JobFilter *f) {
        if (req->identity->admin)
                return;
        f->viewer = req->identity->user;
        f->viewer_accounts = req->identity->accounts;
}

JobViewer api_job_viewer(const Request *req) {
        if (req->identity->admin)
                return (JobViewer) {};
        return (JobViewer) { .user = req->identity->user ?: "", .accounts = req->identity->accounts };
}

bool api_account_allowed(Server *s, Request *req, const char *account, Reply *reply) {
        /* an admin, or a lead of the account (a job of nobody in it) */
        if (!account || identity_may_see(req->identity, NULL, account))
                return true;
        /* the same answer whether the account exists or not */
        auth_denied(&s->auth, req, "not-yours");
        reply_error(reply, MHD_HTTP_FORBIDDEN, "account",
                    "a site view narrowed to an account is for admins and the account's leads");
        return false;
}

bool api_scope(Server *s, Request *req, JobScope *ret, Reply *reply) {
        *ret = (JobScope) {
                .cluster = request_arg(req, "cluster"),
                .partition = request_arg(req, "partition"),
                .account = request_arg(req, "account"),
        };
        return api_account_allowed(s, req, ret->account, reply);
}
