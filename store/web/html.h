/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/* A page being written. Text from outside (job names, paths, notes, user
 * names) goes through html_text() or html_attr() and nothing else; raw
 * output is for the page's own markup. An allocation failure is remembered
 * and reported once, by html_finish(). */
typedef struct Html {
        char *buf;
        size_t len, alloc;
        bool oom;
} Html;

void html_raw(Html *h, const char *s);
_printf_(2, 3) void html_rawf(Html *h, const char *fmt, ...);
/* Escapes & < > " ' : safe in element content and quoted attributes. */
void html_text(Html *h, const char *s);
_printf_(2, 3) void html_textf(Html *h, const char *fmt, ...);
/* Percent-encodes for a URL's path segment or query value
 * (url_encode_part(), http/http.h), which is safe in an attribute too. */
void html_url_part(Html *h, const char *s);
/* A number with a fixed count of decimals, or "–" when not finite. */
void html_number(Html *h, double v, int decimals);
/* A Unix time as "YYYY-MM-DD HH:MM:SS UTC", or "–". */
void html_time(Html *h, double t);
/* A duration as "2 h 05 min", "3 min 20 s", "12.5 s". */
void html_duration(Html *h, double seconds);
/* The page, to free; NULL on ENOMEM. */
char *html_finish(Html *h, size_t *ret_len);
void html_done(Html *h);
