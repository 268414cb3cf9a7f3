/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>

#include "db/db.h"

/* The first error since the purpose was set, which is usually the cause
 * (a statement the caller let pass, then the COMMIT it spoiled), and the
 * latest one when it differs. */
static _Thread_local char first_error[512], latest_error[512], both[1100];
static _Thread_local const char *purpose;

static void one_line(char *s) {
        for (char *p = s; *p; p++)
                if (*p == '\n' || *p == '\r' || *p == '\t')
                        *p = ' ';
}

void db_error_clear(void) {
        first_error[0] = latest_error[0] = '\0';
}

void db_error_note(const char *fmt, ...) {
        char *buf = first_error[0] ? latest_error : first_error;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(buf, sizeof(first_error), fmt, ap);
        va_end(ap);
        /* Messages of the server span lines (DETAIL, HINT); the log wants one. */
        one_line(buf);
}

const char *db_error_last(void) {
        if (!first_error[0])
                return NULL;
        if (!latest_error[0] || streq(latest_error, first_error))
                return first_error;
        snprintf(both, sizeof(both), "%s; then: %s", first_error, latest_error);
        return both;
}

void db_purpose_set(const char *p) {
        purpose = p;
        db_error_clear();
}

const char *db_purpose(void) {
        return purpose ?: "using the database";
}
