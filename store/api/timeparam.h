/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdint.h>

/* Parses a time given in a query (since=, until=): Unix seconds ("1795550400"),
 * "now", or an age relative to now: a number followed by s, m, h, d or w
 * ("90m", "24h", "7d"). Returns 0 and Unix seconds, or -EINVAL / -ERANGE. */
int time_param_parse(const char *s, int64_t now, int64_t *ret);
