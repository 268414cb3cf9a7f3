/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "funcname.h"
#include "functions.h"
#include "hashmap.h"
#include "macro.h"
#include "util.h"

/* An unnamed offset without an entry travels rounded down to this
 * (docs/batch-format.md). */
#define PAGE_SIZE_ROUND UINT64_C(4096)

/* The sampled offsets of one file, each once, sorted, and their names. */
typedef struct FileWork {
        const Object *obj;
        FuncSym *syms;
        size_t n;
        bool named;             /* syms hold what the file's symbols say */
} FileWork;

/* (job, step, object, phase): the object by its path, as rows[] name it */
static int group_cmp(const FunctionRow *x, const FunctionRow *y) {
        int c;

        if ((c = strcmp_null(x->job, y->job)) || (c = strcmp_null(x->step, y->step)) ||
            (c = strcmp(x->obj->path, y->obj->path)))
                return c;
        return strcmp(x->phase, y->phase);
}

static int group_qcmp(const void *a, const void *b) {
        return group_cmp(a, b);
}

/* the same group, and the same function of the same build (all "other"s of a group are one) */
static int item_cmp(const void *a, const void *b) {
        const FunctionRow *x = a, *y = b;
        int c;

        if ((c = group_cmp(x, y)) || (c = (int) x->kind - (int) y->kind))
                return c;
        if (x->kind == FUNCTION_OTHER)
                return 0;
        if ((c = x->kind == FUNCTION_NAMED ? strcmp(x->name, y->name) : CMP(x->offset, y->offset)) ||
            (c = (int) x->entry - (int) y->entry))
                return c;
        return object_build_id_cmp(x->obj, y->obj);
}

/* the top first: more samples, then by name or offset */
static int rank_cmp(const void *a, const void *b) {
        const FunctionRow *x = a, *y = b;

        if (x->samples != y->samples)
                return CMP(y->samples, x->samples);
        if (x->kind != y->kind)
                return (int) x->kind - (int) y->kind;
        if (x->kind == FUNCTION_NAMED)
                return strcmp(x->name, y->name);
        return x->offset != y->offset ? CMP(x->offset, y->offset) : (int) y->entry - (int) x->entry;
}

static int offset_row_cmp(const void *a, const void *b) {
        const OffsetRow *x = *(OffsetRow *const *) a, *y = *(OffsetRow *const *) b;

        if (x->key.obj != y->key.obj)
                return CMP((uintptr_t) x->key.obj, (uintptr_t) y->key.obj);
        return CMP(x->key.offset, y->key.offset);
}

static int func_sym_cmp(const void *a, const void *b) {
        return CMP(((const FuncSym *) a)->offset, ((const FuncSym *) b)->offset);
}

static void add_sums(FunctionRow *d, const FunctionRow *s) {
        d->samples += s->samples;
        d->window_ns += s->window_ns;
        d->counted |= s->counted;
        for (unsigned i = 0; i < LMK_MAX_COUNTERS; i++)
                d->counts[i] += s->counts[i];
}

/* Whether lmkd knows which build it sampled: a build-id, or a file it read
 * and found without one. Not read (the file was gone when it was first
 * sampled, or not ELF): nothing names it. */
static bool build_known(const Object *o) {
        return o->kind == OBJECT_FILE && o->build_id_tried && (o->build_id_size > 0 || o->build_id_none);
}

static int keep_names(Functions *f, char *names) {
        char **v;

        if (!names)
                return 0;
        v = realloc(f->names, (f->n_names + 1) * sizeof(*v));
        if (!v) {
                free(names);
                return -ENOMEM;
        }
        f->names = v;
        f->names[f->n_names++] = names;
        return 0;
}

/* Names w's offsets from the file open at fd, when it is the build sampled. */
static int name_file(Functions *f, FileWork *w, int fd) {
        const Object *o = w->obj;
        char *names = NULL;
        struct stat st;
        int r;

        /* a file without a build-id: the same size and time as when sampled */
        if (o->build_id_size == 0 &&
            (fstat(fd, &st) < 0 || (uint64_t) st.st_size != o->file_size ||
             (int64_t) st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != o->file_mtime_ns)) {
                f->stats.files_other_build++;
                return 0;
        }
        r = funcname_resolve(fd, o->build_id, o->build_id_size, w->syms, w->n, &names, NULL);
        if (r == -ENOMEM)
                return r;
        if (r == -ESTALE) {
                f->stats.files_other_build++;
                return 0;
        }
        if (r < 0) {
                f->stats.files_unread++;
                return 0;
        }
        f->stats.files++;
        w->named = true;
        return keep_names(f, names);
}

/* Opens each file by its path, then those it did not reach (deleted,
 * replaced, in another mount namespace) through a live process that maps
 * them, looked for in one pass over the processes. */
static int name_files(Functions *f, ProcessTable *pt, FileWork *files, size_t n_files) {
        _cleanup_(hashmap_freep) Hashmap *pending = NULL;
        Process *p;
        size_t i;
        int r;

        for (size_t k = 0; k < n_files; k++) {
                FileWork *w = &files[k];
                int fd = process_table_open_object(pt, w->obj, NULL, NULL);

                if (fd >= 0) {
                        r = name_file(f, w, fd);
                        safe_close(fd);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (!pending && !(pending = hashmap_new(&uint64_hash_ops)))
                        return -ENOMEM;
                r = hashmap_put(pending, w->obj, w);
                if (r < 0)
                        return r;
        }
        if (!pending)
                return 0;
        HASHMAP_FOREACH(p, pt->procs, i) {
                if (p->exit_time != 0)
                        continue;
                for (size_t k = 0; k < p->map.n && hashmap_size(pending) > 0; k++) {
                        const Mapping *m = &p->map.v[k];
                        FileWork *w = hashmap_get(pending, m->obj);
                        int fd;

                        if (!w)
                                continue;
                        fd = process_table_open_object(pt, w->obj, p, m);
                        if (fd < 0)
                                continue;
                        (void) hashmap_remove(pending, m->obj);
                        r = name_file(f, w, fd);
                        safe_close(fd);
                        if (r < 0)
                                return r;
                }
        }
        f->stats.files_unopened += hashmap_size(pending);
        return 0;
}

/* The files of the offsets (sorted by object), each with its distinct
 * offsets, where lmkd knows which build it sampled. */
static int collect_files(OffsetRow **offs, size_t n, FileWork **ret, size_t *ret_n) {
        FileWork *files = calloc(n, sizeof(*files));
        size_t n_files = 0;

        if (!files)
                return -ENOMEM;
        for (size_t i = 0, j; i < n; i = j) {
                const Object *o = offs[i]->key.obj;
                FileWork *w = &files[n_files];

                for (j = i; j < n && offs[j]->key.obj == o; j++)
                        ;
                if (!build_known(o))
                        continue;
                *w = (FileWork) { .obj = o, .syms = calloc(j - i, sizeof(*w->syms)) };
                if (!w->syms) {
                        for (size_t k = 0; k < n_files; k++)
                                free(files[k].syms);
                        free(files);
                        return -ENOMEM;
                }
                n_files++;
                for (size_t k = i; k < j; k++)
                        if (offs[k]->key.offset != HISTOGRAM_OFFSET_OTHER &&
                            (w->n == 0 || w->syms[w->n - 1].offset != offs[k]->key.offset))
                                w->syms[w->n++].offset = offs[k]->key.offset;
        }
        *ret = files;
        *ret_n = n_files;
        return 0;
}

/* What an offset of a file is called: its function, its function's start
 * (entry), its page, or "other". */
static void label(FunctionRow *it, const OffsetRow *o, const FileWork *w) {
        const FuncSym *s = NULL;

        it->kind = FUNCTION_OTHER;
        if (o->key.offset == HISTOGRAM_OFFSET_OTHER)
                return;
        if (w && w->named)
                s = bsearch(&(FuncSym) { .offset = o->key.offset }, w->syms, w->n, sizeof(*w->syms), func_sym_cmp);
        if (s && s->name) {
                it->kind = FUNCTION_NAMED;
                it->name = s->name;
        } else if (o->key.obj->build_id_size > 0) {
                /* for the store to name through debuginfod, by build-id:
                 * exactly by the function's start where the unwind table
                 * said it, else by page */
                it->kind = FUNCTION_UNNAMED;
                it->entry = s && s->entry;
                it->offset = it->entry ? s->entry_offset : o->key.offset & ~(PAGE_SIZE_ROUND - 1);
        }
}

/* rows[]'s samples per (job, step, object, phase) of files, sorted */
static int row_groups(const Histogram *h, FunctionRow **ret, size_t *ret_n) {
        _cleanup_free_ HistRow **rows = histogram_sorted(h);
        size_t n = histogram_rows(h), k = 0, m = 0;
        FunctionRow *g;

        if (!rows)
                return -ENOMEM;
        g = calloc(MAX(n, (size_t) 1), sizeof(*g));
        if (!g)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                const HistRow *r = rows[i];

                if (r->key.kind != CODE_EXE && r->key.kind != CODE_LIB)
                        continue;
                g[k++] = (FunctionRow) { .job = r->key.job, .step = r->key.step, .phase = r->key.phase,
                                         .obj = r->key.obj, .samples = r->samples };
        }
        qsort(g, k, sizeof(*g), group_qcmp);
        /* one per group */
        for (size_t i = 0; i < k; i++) {
                if (m > 0 && group_cmp(&g[m - 1], &g[i]) == 0)
                        g[m - 1].samples += g[i].samples;
                else
                        g[m++] = g[i];
        }
        *ret = g;
        *ret_n = m;
        return 0;
}

typedef struct Group {
        size_t first, n;        /* of the output */
        uint64_t samples;
        bool keep;
} Group;

static int group_samples_cmp(const void *a, const void *b) {
        const Group *x = *(Group *const *) a, *y = *(Group *const *) b;

        if (x->samples != y->samples)
                return CMP(y->samples, x->samples);
        return CMP(x->first, y->first);
}

/* Per group of items (sorted by item_cmp, equal ones merged): the top
 * functions by samples, then one "other" for the rest, into out. */
static size_t top_of_group(FunctionRow *items, size_t n, unsigned top, FunctionRow *out) {
        const FunctionRow *first = &items[0];
        FunctionRow other = { .job = first->job, .step = first->step, .phase = first->phase, .obj = first->obj,
                              .kind = FUNCTION_OTHER, .build_id = first->obj->build_id_size > 0 };
        size_t k = 0, n_named = 0;
        bool one_build = true;

        for (size_t i = 0; i < n; i++) {
                if (object_build_id_cmp(items[i].obj, other.obj) != 0)
                        one_build = false;
                if (items[i].kind != FUNCTION_OTHER)
                        n_named++;
        }
        /* the "other" sorts last in its group (item_cmp by kind): rank the rest */
        qsort(items, n_named, sizeof(*items), rank_cmp);
        for (size_t i = 0; i < n; i++) {
                if (items[i].kind != FUNCTION_OTHER && k < top) {
                        out[k] = items[i];
                        out[k].build_id = items[i].obj->build_id_size > 0;
                        k++;
                } else
                        add_sums(&other, &items[i]);
        }
        other.build_id = other.build_id && one_build;
        if (other.samples > 0)
                out[k++] = other;
        return k;
}

static int build_rows(Functions *f, const Histogram *h, FunctionRow *items, size_t n, unsigned top) {
        _cleanup_free_ FunctionRow *groups = NULL, *out = NULL;
        _cleanup_free_ Group *gs = NULL;
        _cleanup_free_ Group **order = NULL;
        size_t n_groups, m = 0, n_out = 0, n_gs = 0, total = 0;
        int r;

        r = row_groups(h, &groups, &n_groups);
        if (r < 0)
                return r;
        qsort(items, n, sizeof(*items), item_cmp);
        for (size_t i = 0; i < n; i++) {
                if (m > 0 && item_cmp(&items[m - 1], &items[i]) == 0)
                        add_sums(&items[m - 1], &items[i]);
                else
                        items[m++] = items[i];
        }
        out = calloc(MAX(m, (size_t) 1), sizeof(*out));
        gs = calloc(MAX(m, (size_t) 1), sizeof(*gs));
        if (!out || !gs)
                return -ENOMEM;
        for (size_t i = 0, j; i < m; i = j) {
                const FunctionRow *row;
                uint64_t samples = 0;

                for (j = i; j < m && group_cmp(&items[i], &items[j]) == 0; j++)
                        samples += items[j].samples;
                /* only where rows[] has the group with at least as many samples
                 * (rows folded into "[other]" at their limit have not) */
                row = bsearch(&items[i], groups, n_groups, sizeof(*groups), group_qcmp);
                if (!row || row->samples < samples) {
                        f->stats.samples_dropped += samples;
                        continue;
                }
                gs[n_gs] = (Group) { .first = n_out, .samples = samples };
                gs[n_gs].n = top_of_group(&items[i], j - i, top, &out[n_out]);
                n_out += gs[n_gs++].n;
        }
        /* bounded: the hottest groups whole */
        order = calloc(MAX(n_gs, (size_t) 1), sizeof(*order));
        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < n_gs; i++)
                order[i] = &gs[i];
        qsort(order, n_gs, sizeof(*order), group_samples_cmp);
        for (size_t i = 0; i < n_gs; i++) {
                order[i]->keep = total + order[i]->n <= FUNCTIONS_MAX;
                if (order[i]->keep)
                        total += order[i]->n;
                else
                        f->stats.samples_dropped += order[i]->samples;
        }
        f->v = calloc(MAX(total, (size_t) 1), sizeof(*f->v));
        if (!f->v)
                return -ENOMEM;
        for (size_t i = 0; i < n_gs; i++)
                if (gs[i].keep)
                        for (size_t k = 0; k < gs[i].n; k++) {
                                const FunctionRow *x = &out[gs[i].first + k];

                                f->v[f->n++] = *x;
                                if (x->kind == FUNCTION_NAMED)
                                        f->stats.samples_named += x->samples;
                                else if (x->kind == FUNCTION_UNNAMED) {
                                        f->stats.samples_unnamed += x->samples;
                                        if (x->entry)
                                                f->stats.samples_entry += x->samples;
                                } else
                                        f->stats.samples_other += x->samples;
                        }
        return 0;
}

static int name_offsets(const Histogram *h, ProcessTable *pt, unsigned top, Functions *f) {
        _cleanup_free_ OffsetRow **offs = NULL;
        _cleanup_free_ FunctionRow *items = NULL;
        FileWork *files = NULL;
        size_t n, n_files = 0;
        int r;

        offs = histogram_offsets(h, &n);
        if (!offs)
                return -ENOMEM;
        if (n == 0)
                return 0;
        qsort(offs, n, sizeof(*offs), offset_row_cmp);
        r = collect_files(offs, n, &files, &n_files);
        if (r < 0)
                return r;
        r = name_files(f, pt, files, n_files);
        items = r >= 0 ? calloc(n, sizeof(*items)) : NULL;
        if (r >= 0 && !items)
                r = -ENOMEM;
        if (r >= 0) {
                size_t w = 0;

                for (size_t i = 0; i < n; i++) {
                        const OffsetRow *o = offs[i];

                        /* files and offs are both in the objects' order */
                        while (w < n_files && (uintptr_t) files[w].obj < (uintptr_t) o->key.obj)
                                w++;
                        items[i] = (FunctionRow) { .job = o->key.job, .step = o->key.step, .phase = o->key.phase,
                                                   .obj = o->key.obj, .samples = o->samples,
                                                   .window_ns = o->window_ns, .counted = o->counted };
                        memcpy(items[i].counts, o->counts, sizeof(o->counts));
                        label(&items[i], o, w < n_files && files[w].obj == o->key.obj ? &files[w] : NULL);
                }
                r = build_rows(f, h, items, n, top);
        }
        for (size_t k = 0; k < n_files; k++)
                free(files[k].syms);
        free(files);
        return r;
}

int functions_name(const Histogram *h, ProcessTable *pt, unsigned top, Functions *ret) {
        uint64_t t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
        int r;

        *ret = (Functions) {};
        if (top == 0)
                return 0;
        r = name_offsets(h, pt, top, ret);
        if (r < 0) {
                FunctionStats st = ret->stats;

                functions_done(ret);
                ret->stats = st;
                return r;
        }
        ret->stats.ns = now_ns(CLOCK_MONOTONIC) - t0;
        ret->stats.cpu_ns = now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
        return 0;
}

void functions_done(Functions *f) {
        for (size_t i = 0; i < f->n_names; i++)
                free(f->names[i]);
        free(f->names);
        free(f->v);
        *f = (Functions) {};
}
