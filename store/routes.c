/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The route table: each path and method, the handler that answers it, and
 * who may ask (docs/lmk-store.md, docs/api.md, docs/web.md). */
#include "health.h"
#include "routes.h"
#include "web/web.h"

/* Query routes are read-only and need an admin token or a person; ingest
 * needs a node token. Neither role may do the other's work. */
static const Access node = { ROLE_NODE };
static const Access query = { ROLE_ADMIN };
/* site-wide aggregates: people see them unless the site says no */
static const Access site_view = { ROLE_ADMIN, .site_view = true };
/* a session never renews itself: it ends when its time is up */
static const Access credential = { ROLE_ADMIN, .credential = true };

const Route store_routes[] = {
        { "/api/v1/ingest", false, "POST", api_ingest, &node, .body = true, .replied = api_ingest_replied },
        { "/api/v1/jobs", false, "GET", api_jobs, &query, &api_jobs_csv },
        { "/api/v1/jobs/", true, "GET", api_job_functions, &query, &api_job_functions_csv, .suffix = "/functions" },
        { "/api/v1/jobs/", true, "GET", api_job_profile, &query, .suffix = "/profile" },
        { "/api/v1/jobs/", true, "GET", api_job, &query },
        { "/api/v1/profile", false, "GET", api_profile, &query },
        { "/api/v1/objects", false, "GET", api_objects, &site_view, &api_objects_csv },
        /* only over the jobs the asker may see: a query route */
        { "/api/v1/objects/", true, "GET", api_object_functions, &query, &api_site_functions_csv,
          .suffix = "/functions" },
        { "/api/v1/functions", false, "GET", api_site_functions, &query, &api_site_functions_csv },
        { "/api/v1/nodes", false, "GET", api_nodes, &site_view, &api_nodes_csv },
        { "/api/v1/findings", false, "GET", api_findings, &query, &api_findings_csv },
        { "/api/v1/packages", false, "GET", api_packages, &site_view, &api_packages_csv },
        { "/api/v1/families", false, "GET", api_families, &site_view, &api_families_csv },
        { "/api/v1/scaling", false, "GET", api_scaling, &site_view, &api_scaling_csv },
        { "/api/v1/apps", false, "GET", api_apps, &site_view, &api_apps_csv },
        { "/api/v1/compare", false, "GET", api_compare, &query, &api_compare_csv },
        { "/api/v1/sessions", false, "POST", api_sessions, &credential, .body = true },
        { "/metrics", false, "GET", health_metrics },
        { "/healthz", false, "GET", health_check },
        /* the web pages: an error is answered as a page too */
        { "/", false, "GET", web_root, .error_page = web_error_page },
        { "/login", false, "GET", web_login, .error_page = web_error_page },
        { "/login", false, "POST", web_login_confirm, .error_page = web_error_page },
        { "/logout", false, "GET", web_logout, .error_page = web_error_page },
        { "/static/lmk.css", false, "GET", web_css },
        { "/jobs", false, "GET", web_jobs, &query, .error_page = web_error_page },
        { "/jobs/", true, "GET", web_job, &query, .error_page = web_error_page },
        { "/site", false, "GET", web_site, &site_view, .error_page = web_error_page },
        { "/site/software", false, "GET", web_site_software, &site_view, .error_page = web_error_page },
        { "/site/scaling", false, "GET", web_site_scaling, &site_view, .error_page = web_error_page },
        { "/site/apps", false, "GET", web_site_apps, &site_view, .error_page = web_error_page },
        { "/compare", false, "GET", web_compare, &query, .error_page = web_error_page },
        /* over the jobs the reader may see, as their API */
        { "/site/kernels", false, "GET", web_site_kernels, &query, .error_page = web_error_page },
        { "/site/library", false, "GET", web_site_library, &query, .error_page = web_error_page },
};

const size_t store_n_routes = ELEMENTSOF(store_routes);
