/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <errno.h>
#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "interval.h"
#include "node-type.h"

/* Writing JSON without losing a failed allocation. Each adds v to o (or a)
 * while *r is not negative, and where v is NULL (its allocation failed) or
 * the add fails sets *r to -ENOMEM; v is dropped unless added. An object
 * is so written as a list of adds and checked once, and never holds a
 * null that stands for a failure: json-c writes a NULL value as null, so
 * a null that is meant goes through json_member_or_null(). */
void json_member(int *r, json_object *o, const char *key, json_object *v);
/* v where present (NULL there: out of memory), else null. */
void json_member_or_null(int *r, json_object *o, const char *key, bool present, json_object *v);
void json_element(int *r, json_object *a, json_object *v);
/* o when r (its adds) is not negative; else NULL, o dropped. */
json_object *json_built(json_object *o, int r);

/* A JSON array of n elements, element an expression of the index i;
 * NULL when out of memory. */
#define JSON_ARRAY_OF(i, n, element)                                            \
        ({                                                                      \
                size_t _n_ = (n);                                               \
                json_object *_a_ = json_object_new_array_ext((int) _n_);        \
                int _r_ = _a_ ? 0 : -ENOMEM;                                    \
                for (size_t i = 0; i < _n_; i++)                                \
                        json_element(&_r_, _a_, (element));                     \
                json_built(_a_, _r_);                                           \
        })

/* The rows of an interval as JSON, the one place they are written: its
 * "rows", "totals", "counters", "markers" and "jobs" (the shape shared by
 * the batch format and the one-shot report). */
int interval_add_rows(const Interval *iv, json_object *root);
/* lmkd's own counts for the interval ("lmkd" in a batch); NULL when out of
 * memory. */
json_object *interval_lmkd_stats(const Interval *iv);

/* The node type (collectors/node-type.h) as node.type of a batch
 * (docs/batch-format.md): unknown values are null. NULL when out of
 * memory. */
json_object *node_type_json(const NodeType *t);

/* Why a counter could not be opened, in the admin's terms. */
const char *counter_error_text(int error);

/* uid → user name, or the number when it has none. Cached. */
const char *user_name(uint32_t uid);
