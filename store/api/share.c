/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A share with what it rests on (docs/uncertainty.md), as every answer
 * writes it. */
#include "analysis/share-interval.h"
#include "api/api.h"
#include "util.h"

#define SHARE_DECIMALS 6

static json_object *share_of(int64_t part, int64_t total) {
        return total > 0 ? json_number((double) part / (double) total, SHARE_DECIMALS) : json_number(0, 0);
}

/* "share" and what it rests on (docs/uncertainty.md): its 95% interval,
 * the samples in its denominator, and whether they are enough for more
 * than a rough figure. A part larger than its whole (which the storage
 * never returns) gets a null interval rather than a made-up one. */
int api_add_share(json_object *e, int64_t part, int64_t total) {
        ShareInterval si;
        json_object *ci;
        int r;

        if ((r = json_add(e, "share", share_of(part, total))) < 0)
                return r;
        if (share_interval(part, total, SHARE_Z95, &si) < 0) {
                if ((r = json_add(e, "share_ci95", json_null())) < 0 ||
                    (r = json_add(e, "share_of_samples", json_object_new_int64(MAX(total, 0)))) < 0 ||
                    (r = json_add(e, "share_reliable", json_object_new_boolean(false))) < 0)
                        return r;
                return 0;
        }
        ci = json_object_new_array_ext(2);
        if ((r = json_add(e, "share_ci95", ci)) < 0 ||
            (r = json_append(ci, json_number(si.low, SHARE_DECIMALS))) < 0 ||
            (r = json_append(ci, json_number(si.high, SHARE_DECIMALS))) < 0 ||
            (r = json_add(e, "share_of_samples", json_object_new_int64(si.n))) < 0 ||
            (r = json_add(e, "share_reliable", json_object_new_boolean(si.reliable))) < 0)
                return r;
        return 0;
}

const char *api_grain_name(int64_t grain) {
        return grain == 86400 ? "day" : grain == 3600 ? "hour" : "jobs";
}
