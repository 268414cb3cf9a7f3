/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <json-c/json.h>

/* A JSON string of s that is always well-formed UTF-8: command names,
 * paths and phase names come from processes and file systems, and the
 * store refuses a whole batch for one ill-formed byte (ill-formed bytes
 * become U+FFFD). NULL on ENOMEM. */
json_object *json_text_new(const char *s);
