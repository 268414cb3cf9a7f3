/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "http/http.h"
#include "web/html.h"

static void append(Html *h, const char *s, size_t n) {
        if (h->oom)
                return;
        if (h->len + n + 1 > h->alloc) {
                size_t na = MAX(h->alloc * 2, h->len + n + 1);
                char *nb;

                na = MAX(na, (size_t) 4096);
                nb = realloc(h->buf, na);
                if (!nb) {
                        h->oom = true;
                        return;
                }
                h->buf = nb;
                h->alloc = na;
        }
        memcpy(h->buf + h->len, s, n);
        h->len += n;
        h->buf[h->len] = '\0';
}

void html_raw(Html *h, const char *s) {
        append(h, s, strlen(s));
}

/* Formats, then writes with put (raw or escaped). */
static void put_vformat(Html *h, void (*put)(Html *, const char *), const char *fmt, va_list ap) {
        char *s;

        if (vasprintf(&s, fmt, ap) < 0) {
                h->oom = true;
                return;
        }
        put(h, s);
        free(s);
}

void html_rawf(Html *h, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        put_vformat(h, html_raw, fmt, ap);
        va_end(ap);
}

void html_text(Html *h, const char *s) {
        const char *p = s, *q;

        if (!s)
                return;
        while ((q = strpbrk(p, "&<>\"'"))) {
                append(h, p, (size_t) (q - p));
                switch (*q) {
                case '&': html_raw(h, "&amp;"); break;
                case '<': html_raw(h, "&lt;"); break;
                case '>': html_raw(h, "&gt;"); break;
                case '"': html_raw(h, "&quot;"); break;
                default: html_raw(h, "&#39;"); break;
                }
                p = q + 1;
        }
        html_raw(h, p);
}

void html_textf(Html *h, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        put_vformat(h, html_text, fmt, ap);
        va_end(ap);
}

void html_url_part(Html *h, const char *s) {
        /* nothing it keeps needs escaping in HTML */
        _cleanup_free_ char *e = url_encode_part(s);

        if (!e) {
                h->oom = true;
                return;
        }
        html_raw(h, e);
}

void html_number(Html *h, double v, int decimals) {
        if (!isfinite(v))
                html_raw(h, "–");
        else
                html_rawf(h, "%.*f", decimals, v);
}

void html_time(Html *h, double t) {
        char buf[64];
        time_t tt;
        struct tm tm;

        if (!isfinite(t) || t < 0 || t > 1e11) {
                html_raw(h, "–");
                return;
        }
        tt = (time_t) t;
        if (!gmtime_r(&tt, &tm) || strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm) == 0) {
                html_raw(h, "–");
                return;
        }
        html_raw(h, buf);
}

void html_duration(Html *h, double s) {
        if (!isfinite(s) || s < 0)
                html_raw(h, "–");
        else if (s >= 86400)
                html_rawf(h, "%.0f d %02.0f h", floor(s / 86400), floor(fmod(s, 86400) / 3600));
        else if (s >= 3600)
                html_rawf(h, "%.0f h %02.0f min", floor(s / 3600), floor(fmod(s, 3600) / 60));
        else if (s >= 60)
                html_rawf(h, "%.0f min %02.0f s", floor(s / 60), floor(fmod(s, 60)));
        else
                html_rawf(h, "%.1f s", s);
}

char *html_finish(Html *h, size_t *ret_len) {
        char *b;

        if (h->oom || !h->buf) {
                html_done(h);
                return NULL;
        }
        b = h->buf;
        *ret_len = h->len;
        *h = (Html) {};
        return b;
}

void html_done(Html *h) {
        free(h->buf);
        *h = (Html) {};
}
