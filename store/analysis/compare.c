/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Two runs' breakdowns paired item by item. Items are matched by name
 * within a dimension: an object by its path (a rebuilt executable is the
 * same object to the person comparing), a phase by its path, a function
 * by its object's path and its name (an unnamed one by the offset of its
 * page, which a rebuild moves: then it is two rows, each in one run). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/compare.h"
#include "macro.h"

static CompareItem share_item(const Share *x, bool with_kind) {
        return (CompareItem) {
                .name = x->name,
                .kind = with_kind ? x->kind : NULL,
                .offset = STORAGE_NULL,
                .samples = x->samples,
                .cpu_seconds = x->cpu_seconds,
                .cycles = x->cycles,
                .instructions = x->instructions,
        };
}

static size_t kinds_count(const JobSummary *js) {
        return js->kinds.n;
}

static CompareItem kinds_item(const JobSummary *js, size_t i) {
        return share_item(&js->kinds.items[i], false);
}

static size_t objects_count(const JobSummary *js) {
        return js->objects.n;
}

static CompareItem objects_item(const JobSummary *js, size_t i) {
        return share_item(&js->objects.items[i], true);
}

static bool objects_truncated(const JobSummary *js) {
        return js->objects_truncated;
}

static size_t phases_count(const JobSummary *js) {
        return js->phases.n;
}

static CompareItem phases_item(const JobSummary *js, size_t i) {
        return share_item(&js->phases.items[i], false);
}

static size_t functions_count(const JobSummary *js) {
        return js->functions.n;
}

static CompareItem functions_item(const JobSummary *js, size_t i) {
        const FunctionShare *x = &js->functions.items[i];

        return (CompareItem) {
                .name = x->name,
                .kind = x->kind,
                .object = x->object,
                .offset = x->name ? STORAGE_NULL : x->offset,
                .other = x->other,
                .samples = x->samples,
                .cpu_seconds = x->cpu_seconds,
                .cycles = x->cycles,
                .instructions = x->instructions,
        };
}

static bool functions_truncated(const JobSummary *js) {
        return js->functions.truncated;
}

static bool never_truncated(const JobSummary *js) {
        (void) js;
        return false;
}

static const CompareDimension dimensions[] = {
        { "kind", kinds_count, kinds_item, never_truncated },
        { "object", objects_count, objects_item, objects_truncated },
        { "phase", phases_count, phases_item, never_truncated },
        { "function", functions_count, functions_item, functions_truncated },
};

/* The order of the items of a dimension, and the test of being the same
 * item: by name, then (functions) object, other, offset. */
static int item_cmp(const CompareItem *x, const CompareItem *y) {
        int c = strcmp_null(x->name, y->name);

        if (c == 0)
                c = strcmp_null(x->object, y->object);
        if (c == 0)
                c = (int) x->other - (int) y->other;
        if (c == 0)
                c = CMP(x->offset, y->offset);
        return c;
}

static int64_t counter_sum(int64_t x, int64_t y) {
        return x == STORAGE_NULL || y == STORAGE_NULL ? STORAGE_NULL : x + y;
}

/* An item of one run, looked for by name among its items sorted by name;
 * items of one name (an object or a function under two build ids) are
 * summed. */
typedef struct Sorted {
        CompareItem *v;
        size_t n;
} Sorted;

static int by_name(const void *x, const void *y) {
        return item_cmp(x, y);
}

static int sorted_items(const CompareDimension *d, const JobSummary *js, Sorted *ret) {
        size_t n = d->count(js), k = 0;
        CompareItem *v = calloc(MAX(n, (size_t) 1), sizeof(CompareItem));

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                v[i] = d->item(js, i);
        qsort(v, n, sizeof(CompareItem), by_name);
        for (size_t i = 0; i < n; i++) {
                if (k > 0 && item_cmp(&v[k - 1], &v[i]) == 0) {
                        v[k - 1].samples += v[i].samples;
                        v[k - 1].cpu_seconds += v[i].cpu_seconds;
                        v[k - 1].cycles = counter_sum(v[k - 1].cycles, v[i].cycles);
                        v[k - 1].instructions = counter_sum(v[k - 1].instructions, v[i].instructions);
                } else
                        v[k++] = v[i];
        }
        *ret = (Sorted) { v, k };
        return 0;
}

/* A run's side of an item (NULL: the run has none of it). The CPU time's
 * interval is the share's, in the run's CPU time, around the item's own
 * CPU time (which is the share of it unless the run's sampling rate
 * changed on the way). */
static CompareSide side(const JobSummary *js, const CompareItem *x, const CompareItem *id, bool truncated) {
        double total = js->info.cpu_seconds;
        CompareSide s = {
                .known = x || !truncated,
                .item = x ? *x : *id,
        };

        /* the storage never gives an item more samples than its job;
         * should it, the item is all the job is known to be */
        if (share_interval(MIN(s.item.samples, js->info.samples), js->info.samples, SHARE_Z95, &s.share) < 0)
                s.share = (ShareInterval) { .high = 1 };
        s.cpu_seconds = (Estimate) {
                .value = s.item.cpu_seconds,
                .low = fmax(s.item.cpu_seconds - (s.share.share - s.share.low) * total, 0),
                .high = s.item.cpu_seconds + (s.share.high - s.share.share) * total,
        };
        return s;
}

static double larger_cpu(const CompareRow *r) {
        return fmax(r->a.item.cpu_seconds, r->b.item.cpu_seconds);
}

static int by_size(const void *x, const void *y) {
        const CompareRow *p = x, *q = y;

        if (p->dimension != q->dimension)
                return CMP(p->dimension, q->dimension);
        if (larger_cpu(p) != larger_cpu(q))
                return larger_cpu(p) > larger_cpu(q) ? -1 : 1;
        return item_cmp(&p->id, &q->id);
}

static int add_row(CompareRows *rows, size_t *alloc, const CompareDimension *d, const JobSummary *a,
                   const JobSummary *b, const CompareItem *x, const CompareItem *y) {
        CompareItem id = *(x ?: y);
        CompareRow *r;

        if ((!x || x->samples == 0) && (!y || y->samples == 0))
                return 0;
        if (rows->n == *alloc) {
                size_t n = MAX(*alloc * 2, (size_t) 16);
                CompareRow *v = reallocarray(rows->items, n, sizeof(CompareRow));

                if (!v)
                        return -ENOMEM;
                rows->items = v;
                *alloc = n;
        }
        if (!id.kind && y)
                id.kind = y->kind;
        /* the item's name, not its figures: a side without it has none */
        id.samples = 0;
        id.cpu_seconds = 0;
        id.cycles = id.instructions = STORAGE_NULL;
        r = &rows->items[rows->n++];
        *r = (CompareRow) {
                .dimension = d,
                .id = id,
                .a = side(a, x, &id, d->truncated(a)),
                .b = side(b, y, &id, d->truncated(b)),
        };
        r->cpu_difference = estimate_difference(r->a.cpu_seconds, r->b.cpu_seconds);
        r->cpu_ratio = estimate_ratio(r->a.cpu_seconds, r->b.cpu_seconds);
        r->share_difference = estimate_difference(
                (Estimate) { r->a.share.share, r->a.share.low, r->a.share.high },
                (Estimate) { r->b.share.share, r->b.share.low, r->b.share.high });
        return 0;
}

/* Both runs' items of d merged by name. */
static int compare_dimension(const CompareDimension *d, const JobSummary *a, const JobSummary *b,
                             CompareRows *rows, size_t *alloc) {
        _cleanup_free_ CompareItem *va = NULL, *vb = NULL;
        Sorted sa, sb;
        size_t i = 0, k = 0;
        int r;

        r = sorted_items(d, a, &sa);
        if (r < 0)
                return r;
        va = sa.v;
        r = sorted_items(d, b, &sb);
        if (r < 0)
                return r;
        vb = sb.v;
        while (r >= 0 && (i < sa.n || k < sb.n)) {
                int c = i == sa.n ? 1 : k == sb.n ? -1 : item_cmp(&sa.v[i], &sb.v[k]);

                r = add_row(rows, alloc, d, a, b, c <= 0 ? &sa.v[i] : NULL, c >= 0 ? &sb.v[k] : NULL);
                i += c <= 0;
                k += c >= 0;
        }
        return r;
}

int compare_runs(const JobSummary *a, const JobSummary *b, CompareRows *ret) {
        CompareRows rows = {};
        size_t alloc = 0;
        int r = 0;

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(dimensions); i++)
                r = compare_dimension(&dimensions[i], a, b, &rows, &alloc);
        if (r < 0) {
                compare_rows_free(&rows);
                return r;
        }
        if (rows.n > 0) /* two runs with nothing sampled: no array to sort */
                qsort(rows.items, rows.n, sizeof(CompareRow), by_size);
        *ret = rows;
        return 0;
}

void compare_rows_free(CompareRows *r) {
        free(r->items);
        *r = (CompareRows) {};
}
