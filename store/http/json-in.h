/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

/* Reading JSON (a request's body, the API's answers a page shows):
 * absent and null read as NULL, NAN, dflt or false; jstr(), jnum() and
 * jint() read a value of another type so too. */
json_object *jget(json_object *o, const char *key);
const char *jstr(json_object *o, const char *key);
double jnum(json_object *o, const char *key);
int64_t jint(json_object *o, const char *key, int64_t dflt);
bool jbool(json_object *o, const char *key);
