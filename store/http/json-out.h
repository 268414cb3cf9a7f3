/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <stdint.h>

#include "macro.h"

/* Builders for the API's JSON answers. Numbers are written with a fixed
 * precision (json-c would print 0.1 as 0.10000000000000001), unknown values
 * as null. */

json_object *json_number(double v, int decimals); /* NAN gives null */
json_object *json_int_or_null(int64_t v);          /* negative gives null */
json_object *json_string_or_null(const char *s);
/* Adds val under key; returns -ENOMEM if val is NULL because allocating it
 * failed (a NULL that stands for JSON null is passed as json_null()). */
int json_add(json_object *o, const char *key, json_object *val);
json_object *json_null(void);
/* Appends val to an array, the same way. */
int json_append(json_object *a, json_object *val);
/* The ratio a / b, or null when b is 0 or either is unknown (negative). */
json_object *json_ratio(int64_t a, int64_t b, int decimals);

DEFINE_TRIVIAL_CLEANUP_FUNC(json_object *, json_object_put);
