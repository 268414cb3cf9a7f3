/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "db/db.h"
#include "log.h"
#include "routes.h"
#include "server.h"

static bool admit(Server *s, const Route *route, Request *req, Reply *reply) {
        return auth_admit(&s->auth, route, req, reply);
}

static void request_done(Server *s, Request *req) {
        auth_request_done(req);
}

static const HttpHooks hooks = {
        .admit = admit,
        .done = request_done,
};

void server_init(Server *s) {
        auth_init(&s->auth, &s->metrics);
        pthread_rwlock_init(&s->findings_lock, NULL);
}

/* The nodes the database knows and their last push, so that a node that
 * stopped before the store restarted is still stale in /metrics. */
static void seed_node_health(Server *s) {
        NodeList l = {};
        int r;

        r = s->storage->ops->list_nodes(s->storage, &l);
        if (r < 0) {
                log_warning_errno(r, "Failed to read the nodes' last pushes, /metrics knows nodes from their "
                                  "next push: %s", db_error_last() ?: strerror(-r));
                return;
        }
        for (size_t i = 0; i < l.n; i++)
                (void) node_health_seed(s->node_health, l.items[i].name, l.items[i].last_push);
        node_list_free(&l);
}

int server_start(Server *s, const HttpConfig *config) {
        int r;

        r = auth_start(&s->auth);
        if (r < 0)
                return r;
        s->metrics.start_time = (int64_t) time(NULL);
        s->findings_cache = findings_cache_new();
        if (!s->findings_cache)
                return -ENOMEM;
        r = node_health_new(&s->node_health);
        if (r < 0)
                return r;
        seed_node_health(s);
        return http_server_start(config, store_routes, store_n_routes, &hooks, s, &s->metrics, &s->http);
}

uint16_t server_port(Server *s) {
        return http_server_port(s->http);
}

static void free_findings(Server *s) {
        findings_config_done(s->findings);
        free(TAKE_PTR(s->findings));
        lib_families_done(s->families);
        free(TAKE_PTR(s->families));
}

void server_stop(Server *s, unsigned timeout_s) {
        /* first: no request reads what follows after it */
        http_server_stop(TAKE_PTR(s->http), timeout_s);
        auth_done(&s->auth);
        free_findings(s);
        findings_cache_free(TAKE_PTR(s->findings_cache));
        s->node_health = node_health_free(s->node_health);
        pthread_rwlock_destroy(&s->findings_lock);
}

void server_set_findings(Server *s, FindingsConfig *findings, LibFamilies *families) {
        FindingsConfig *old_findings;
        LibFamilies *old_families;

        pthread_rwlock_wrlock(&s->findings_lock);
        old_findings = s->findings;
        old_families = s->families;
        s->findings = findings;
        s->families = families;
        /* findings judged by the old rules, their advice pointing into them */
        if (s->findings_cache)
                findings_cache_clear(s->findings_cache);
        pthread_rwlock_unlock(&s->findings_lock);
        findings_config_done(old_findings);
        free(old_findings);
        lib_families_done(old_families);
        free(old_families);
}
