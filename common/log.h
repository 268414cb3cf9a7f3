/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <syslog.h>

#include "macro.h"

/* Logging is for programs (lmkd, lmk-store, lmk), never for library code:
 * library functions return negative errno and let the caller decide. Messages
 * go to the journal when stderr is connected to it (JOURNAL_STREAM), else to
 * stderr with a program-name prefix. */

void log_setup(const char *program);
void log_set_max_level(int level);
int log_get_max_level(void);

int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *format, ...) _printf_(6, 7);

#define log_full_errno(level, error, ...)                                       \
        ({                                                                      \
                int _l_ = (level), _e_ = (error);                               \
                (log_get_max_level() >= _l_)                                    \
                        ? log_internal(_l_, _e_, __FILE__, __LINE__, __func__, __VA_ARGS__) \
                        : -abs(_e_);                                            \
        })

#define log_full(level, ...) (void) log_full_errno(level, 0, __VA_ARGS__)

#define log_debug(...) log_full(LOG_DEBUG, __VA_ARGS__)
#define log_info(...) log_full(LOG_INFO, __VA_ARGS__)
#define log_notice(...) log_full(LOG_NOTICE, __VA_ARGS__)
#define log_warning(...) log_full(LOG_WARNING, __VA_ARGS__)
#define log_error(...) log_full(LOG_ERR, __VA_ARGS__)

/* These return -abs(error), so "return log_error_errno(r, ...)" is one statement. */
#define log_debug_errno(error, ...) log_full_errno(LOG_DEBUG, error, __VA_ARGS__)
#define log_info_errno(error, ...) log_full_errno(LOG_INFO, error, __VA_ARGS__)
#define log_warning_errno(error, ...) log_full_errno(LOG_WARNING, error, __VA_ARGS__)
#define log_error_errno(error, ...) log_full_errno(LOG_ERR, error, __VA_ARGS__)

#define log_oom() log_error_errno(-ENOMEM, "Out of memory.")
