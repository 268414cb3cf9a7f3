/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "db/storage.h"

bool job_viewer_may_see(const JobViewer *v, const char *user, const char *account) {
        if (!v || !v->user)
                return true;
        if (user && streq(user, v->user))
                return true;
        for (char *const *a = v->accounts; account && a && *a; a++)
                if (streq(*a, account))
                        return true;
        return false;
}

static const char *const job_state_names[_JOB_STATE_MAX] = {
        [JOB_STATE_RUNNING] = "running",
        [JOB_STATE_ENDED] = "ended",
};

static const char *const job_sort_names[_JOB_SORT_MAX] = {
        [JOB_SORT_LAST_SEEN] = "last_seen",
        [JOB_SORT_FIRST_SEEN] = "first_seen",
        [JOB_SORT_CPU_SECONDS] = "cpu_seconds",
};

int job_state_from_string(const char *s) {
        for (int i = JOB_STATE_ANY + 1; i < _JOB_STATE_MAX; i++)
                if (s && streq(s, job_state_names[i]))
                        return i;
        return -EINVAL;
}

const char *job_sort_to_string(JobSort s) {
        return s >= 0 && s < _JOB_SORT_MAX ? job_sort_names[s] : NULL;
}

int job_sort_from_string(const char *s) {
        for (int i = 0; i < _JOB_SORT_MAX; i++)
                if (s && streq(s, job_sort_names[i]))
                        return i;
        return -EINVAL;
}

void share_list_free(ShareList *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].name);
                free(l->items[i].kind);
                free(l->items[i].build_id);
                free(l->items[i].installed);
                free(l->items[i].node_type);
        }
        free(l->items);
        *l = (ShareList) {};
}

void stored_job_free(StoredJob *j) {
        free(j->job);
        free(j->cluster);
        free(j->user);
        free(j->account);
        free(j->partition);
        free(j->name);
        free(j->app);
        free(j->node_type);
        *j = (StoredJob) {};
}

void job_list_free(JobList *l) {
        for (size_t i = 0; i < l->n; i++)
                stored_job_free(&l->items[i]);
        free(l->items);
        *l = (JobList) {};
}

void node_type_info_free(NodeTypeInfo *t) {
        free(t->name);
        free(t->cpu_model);
        free(t->gpus);
        *t = (NodeTypeInfo) {};
}

static void event_sums_free(EventSum *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                free(v[i].name);
                free(v[i].role);
        }
        free(v);
}

void job_measured_free(JobMeasured *m) {
        for (size_t i = 0; i < m->n_counters; i++) {
                free(m->counters[i].role);
                free(m->counters[i].event);
        }
        free(m->counters);
        event_sums_free(m->events, m->n_events);
        event_sums_free(m->object_events, m->n_object_events);
        event_sums_free(m->phase_events, m->n_phase_events);
        for (size_t i = 0; i < m->n_bursts; i++) {
                free(m->bursts[i].object);
                free(m->bursts[i].phase);
                free(m->bursts[i].role);
        }
        free(m->bursts);
        node_type_info_free(&m->node_type);
        *m = (JobMeasured) {};
}

void function_list_free(FunctionList *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].object);
                free(l->items[i].kind);
                free(l->items[i].build_id);
                free(l->items[i].name);
                free(l->items[i].phase);
        }
        free(l->items);
        *l = (FunctionList) {};
}

void site_profile_free(SiteProfile *p) {
        function_list_free(&p->functions);
        *p = (SiteProfile) {};
}

void function_names_free(FunctionName *names, size_t n) {
        for (size_t i = 0; names && i < n; i++)
                free(names[i].name);
        free(names);
}

void strv_free_n(char **v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
}

void job_summary_free(JobSummary *s) {
        stored_job_free(&s->info);
        share_list_free(&s->kinds);
        share_list_free(&s->objects);
        share_list_free(&s->phases);
        share_list_free(&s->nodes);
        for (size_t i = 0; i < s->n_notes; i++) {
                free(s->notes[i].key);
                free(s->notes[i].value);
        }
        free(s->notes);
        for (size_t i = 0; i < s->n_markers; i++) {
                free(s->markers[i].comm);
                free(s->markers[i].phase);
                free(s->markers[i].state);
        }
        free(s->markers);
        for (size_t i = 0; i < s->n_ranks; i++)
                free(s->ranks[i].phase);
        free(s->ranks);
        for (size_t i = 0; i < s->n_timeline_nodes; i++) {
                free(s->timeline[i].node);
                free(s->timeline[i].seconds);
                free(s->timeline[i].cpu_seconds);
        }
        free(s->timeline);
        job_measured_free(&s->measured);
        function_list_free(&s->functions);
        function_list_free(&s->phase_functions);
        *s = (JobSummary) {};
}

void job_summary_list_free(JobSummaryList *l) {
        for (size_t i = 0; i < l->n; i++) {
                JobSummary *s = &l->items[i];

                /* the shares' strings are the list's */
                free(s->kinds.items);
                free(s->objects.items);
                free(s->nodes.items);
                s->kinds = s->objects = s->nodes = (ShareList) {};
                job_summary_free(s);
        }
        free(l->items);
        for (size_t i = 0; i < l->n_strings; i++)
                free(l->strings[i]);
        free(l->strings);
        *l = (JobSummaryList) {};
}

void object_list_free(ObjectList *l) {
        share_list_free(&l->objects);
        *l = (ObjectList) {};
}

void node_list_free(NodeList *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].name);
                free(l->items[i].hostname);
                free(l->items[i].cluster);
                free(l->items[i].boot_id);
                node_type_info_free(&l->items[i].type);
                free(l->items[i].kernel);
        }
        free(l->items);
        *l = (NodeList) {};
}

void app_mix_list_free(AppMixList *l) {
        for (size_t i = 0; l->keys && i < l->n_keys; i++) {
                free(l->keys[i].app);
                free(l->keys[i].package);
                free(l->keys[i].user);
                free(l->keys[i].account);
                free(l->keys[i].partition);
        }
        free(l->keys);
        free(l->days);
        *l = (AppMixList) {};
}

void package_list_free(PackageList *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].manager);
                free(l->items[i].name);
                free(l->items[i].version);
                free(l->items[i].arch);
                free(l->items[i].prefix);
        }
        free(l->items);
        *l = (PackageList) {};
}

void run_figures_free(RunFigures *v, size_t n) {
        for (size_t i = 0; v && i < n; i++) {
                free(v[i].size);
                free(v[i].exe);
                for (size_t k = 0; k < v[i].n_ranks; k++)
                        free(v[i].ranks[k].phase);
                free(v[i].ranks);
                node_type_info_free(&v[i].node_type);
                v[i] = (RunFigures) {};
        }
}

void site_function_list_free(SiteFunctionList *l) {
        for (size_t i = 0; i < l->n; i++) {
                free(l->items[i].object);
                free(l->items[i].kind);
                free(l->items[i].build_id);
                free(l->items[i].name);
                for (size_t j = 0; j < FUNCTION_TOP_APPS; j++)
                        free(l->items[i].top_apps[j].name);
        }
        for (size_t i = 0; i < l->n_users; i++)
                free(l->users[i].name);
        for (size_t i = 0; i < l->n_apps; i++)
                free(l->apps[i].name);
        free(l->items);
        free(l->users);
        free(l->apps);
        *l = (SiteFunctionList) {};
}
