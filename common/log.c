/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <stdarg.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"

static const char *log_program = "lmk";
static int log_max_level = LOG_INFO;
static bool log_to_journal;

/* The journal marks a stream it owns with JOURNAL_STREAM=dev:ino; only when
 * our stderr is that stream do we switch to "<N>message" lines, which the
 * journal turns into priorities. */
static bool stderr_is_journal(void) {
        const char *e = getenv("JOURNAL_STREAM");
        unsigned long long dev, ino;
        struct stat st;

        if (!e || sscanf(e, "%llu:%llu", &dev, &ino) != 2)
                return false;
        if (fstat(STDERR_FILENO, &st) < 0)
                return false;
        return st.st_dev == dev && st.st_ino == ino;
}

void log_setup(const char *program) {
        const char *e;

        log_program = program;
        log_to_journal = stderr_is_journal();

        e = getenv("LMK_LOG_LEVEL");
        if (e) {
                static const char *const names[] = {
                        [LOG_ERR] = "err", [LOG_WARNING] = "warning", [LOG_NOTICE] = "notice",
                        [LOG_INFO] = "info", [LOG_DEBUG] = "debug",
                };
                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        if (names[i] && streq(names[i], e))
                                log_max_level = (int) i;
        }
}

void log_set_max_level(int level) {
        log_max_level = level;
}

int log_get_max_level(void) {
        return log_max_level;
}

int log_internal(int level, int error, const char *file, int line, const char *func,
                 const char *format, ...) {
        char buf[2048];
        va_list ap;
        int saved = errno;

        /* %m in the format refers to the error we were handed, not whatever
         * errno happens to be now. */
        errno = abs(error);
        va_start(ap, format);
        vsnprintf(buf, sizeof(buf), format, ap);
        va_end(ap);

        if (log_to_journal)
                fprintf(stderr, "<%d>%s\n", level, buf);
        else if (log_max_level >= LOG_DEBUG)
                fprintf(stderr, "%s: %s (%s:%d %s)\n", log_program, buf, file, line, func);
        else
                fprintf(stderr, "%s: %s\n", log_program, buf);

        errno = saved;
        return -abs(error);
}
