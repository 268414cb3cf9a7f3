/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <stdio.h>

#include "db.h"

static _Thread_local char last_error[1024];
static _Thread_local const char *purpose;

void db_error_clear(void) {
        last_error[0] = '\0';
}

void db_error_note(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(last_error, sizeof(last_error), fmt, ap);
        va_end(ap);
        /* Messages of the server span lines (DETAIL, HINT); the log wants one. */
        for (char *p = last_error; *p; p++)
                if (*p == '\n' || *p == '\r' || *p == '\t')
                        *p = ' ';
}

const char *db_error_last(void) {
        return last_error[0] ? last_error : NULL;
}

void db_purpose_set(const char *p) {
        purpose = p;
        db_error_clear();
}

const char *db_purpose(void) {
        return purpose ?: "using the database";
}
