/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <math.h>

#include "http/json-in.h"

json_object *jget(json_object *o, const char *key) {
        json_object *v = NULL;

        return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

const char *jstr(json_object *o, const char *key) {
        json_object *v = jget(o, key);

        return v && json_object_is_type(v, json_type_string) ? json_object_get_string(v) : NULL;
}

double jnum(json_object *o, const char *key) {
        json_object *v = jget(o, key);

        return v && (json_object_is_type(v, json_type_double) || json_object_is_type(v, json_type_int)) ?
                json_object_get_double(v) : NAN;
}

int64_t jint(json_object *o, const char *key, int64_t dflt) {
        json_object *v = jget(o, key);

        return v && json_object_is_type(v, json_type_int) ? json_object_get_int64(v) : dflt;
}

bool jbool(json_object *o, const char *key) {
        json_object *v = jget(o, key);

        return v && json_object_get_boolean(v);
}
