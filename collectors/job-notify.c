/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "job-notify.h"
#include "macro.h"
#include "util.h"

#define NOTICE_VERSION "LMK1"

static const char *const event_names[_JOB_NOTICE_EVENT_MAX] = {
        [JOB_NOTICE_START] = "job-start",
        [JOB_NOTICE_END] = "job-end",
};

const char *job_notice_event_to_string(JobNoticeEvent event) {
        return event >= 0 && event < _JOB_NOTICE_EVENT_MAX ? event_names[event] : NULL;
}

typedef enum FieldKind {
        FIELD_JOB,
        FIELD_SLUID,
        FIELD_STEP,
        FIELD_U32,      /* 0 allowed */
        FIELD_COUNT,    /* > 0 */
        FIELD_TEXT,
        FIELD_NOTES,
        FIELD_LMK,
} FieldKind;

typedef struct Field {
        const char *name;
        FieldKind kind;
        size_t offset;
        size_t size; /* of a string field */
} Field;

#define STR_FIELD(n, k, f) { n, k, offsetof(JobInfo, f), sizeof(((JobInfo *) NULL)->f) }
#define U32_FIELD(n, k, f) { n, k, offsetof(JobInfo, f), 0 }

/* In the order they are written. */
static const Field fields[] = {
        STR_FIELD("job", FIELD_JOB, job),
        STR_FIELD("sluid", FIELD_SLUID, sluid),
        STR_FIELD("step", FIELD_STEP, step),
        U32_FIELD("array_job", FIELD_COUNT, array_job),
        U32_FIELD("array_task", FIELD_U32, array_task),
        U32_FIELD("het_job", FIELD_COUNT, het_job),
        U32_FIELD("het_offset", FIELD_U32, het_offset),
        U32_FIELD("uid", FIELD_U32, uid),
        STR_FIELD("user", FIELD_TEXT, user),
        STR_FIELD("account", FIELD_TEXT, account),
        STR_FIELD("partition", FIELD_TEXT, partition),
        STR_FIELD("cluster", FIELD_TEXT, cluster),
        STR_FIELD("name", FIELD_TEXT, name),
        U32_FIELD("nodes", FIELD_COUNT, nodes),
        U32_FIELD("tasks", FIELD_COUNT, tasks),
        { "notes", FIELD_NOTES, offsetof(JobInfo, notes), 0 },
        { "lmk", FIELD_LMK, offsetof(JobInfo, lmk), 0 },
};

static int unhex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        return -1;
}

/* Decodes a percent-encoded value into out (room for len + 1 bytes).
 * A NUL, raw or encoded, would silently cut the value: refused. */
static int decode(const char *s, size_t len, char *out, size_t *ret_len) {
        size_t o = 0;

        for (size_t i = 0; i < len; i++) {
                if (s[i] == '%') {
                        int hi, lo;

                        if (len - i < 3 || (hi = unhex(s[i + 1])) < 0 || (lo = unhex(s[i + 2])) < 0)
                                return -EBADMSG;
                        if (hi == 0 && lo == 0)
                                return -EBADMSG;
                        out[o++] = (char) (hi << 4 | lo);
                        i += 2;
                } else if (s[i] > 0x20 && s[i] < 0x7f)
                        out[o++] = s[i];
                else
                        return -EBADMSG;
        }
        out[o] = '\0';
        *ret_len = o;
        return 0;
}

/* Returns 0, 1 when the value is a word of a later lmk (skipped and
 * counted like an unknown field), -EBADMSG when malformed. */
static int set_field(JobInfo *info, const Field *f, const char *v, size_t len) {
        char *str = (char *) info + f->offset;
        uint32_t *num = (uint32_t *) ((char *) info + f->offset);

        switch (f->kind) {
        case FIELD_JOB:
                if (!job_id_valid(v, len))
                        return -EBADMSG;
                break;
        case FIELD_SLUID:
                if (!job_sluid_valid(v, len))
                        return -EBADMSG;
                break;
        case FIELD_STEP:
                if (!job_step_valid(v, len))
                        return -EBADMSG;
                break;
        case FIELD_U32:
        case FIELD_COUNT:
        {
                uint32_t n;

                if (safe_atou32(v, &n) < 0 || n == JOB_UNSET || (f->kind == FIELD_COUNT && n == 0))
                        return -EBADMSG;
                *num = n;
                return 0;
        }
        case FIELD_TEXT:
                job_text_copy(str, f->size, v, len);
                return 0;
        case FIELD_NOTES:
                job_notes_parse(v, len, &info->notes);
                return 0;
        case FIELD_LMK:
        {
                int lmk = job_lmk_from_string(v, len);

                /* a later plugin's word: the job is still known, measured as usual */
                if (lmk < 0)
                        return 1;
                info->lmk = (JobLmk) lmk;
                return 0;
        }
        }
        /* The id checks above bound len below the field size. */
        memcpy(str, v, len);
        str[len] = '\0';
        return 0;
}

int job_notice_parse(const char *msg, size_t len, JobNotice *ret) {
        char value[JOB_NOTICE_MAX + 1];
        bool seen[ELEMENTSOF(fields)] = {};
        const char *p, *end;
        JobNotice notice = {};
        int event = -1;

        if (!msg && len > 0)
                return -EINVAL;
        if (len > JOB_NOTICE_MAX)
                return -EMSGSIZE;
        if (len > 0 && msg[len - 1] == '\n')
                len--;
        if (len == 0 || memchr(msg, '\0', len) || memchr(msg, '\n', len))
                return -EBADMSG;

        p = msg;
        end = msg + len;
        {
                const char *sp = memchr(p, ' ', (size_t) (end - p));
                size_t n = sp ? (size_t) (sp - p) : (size_t) (end - p);

                if (n != strlen(NOTICE_VERSION) || memcmp(p, NOTICE_VERSION, n) != 0)
                        return n > 3 && memcmp(p, "LMK", 3) == 0 ? -EPROTONOSUPPORT : -EBADMSG;
                if (!sp)
                        return -EBADMSG;
                p = sp + 1;
        }
        {
                const char *sp = memchr(p, ' ', (size_t) (end - p));
                size_t n = sp ? (size_t) (sp - p) : (size_t) (end - p);

                for (size_t e = 0; e < _JOB_NOTICE_EVENT_MAX; e++)
                        if (n == strlen(event_names[e]) && memcmp(p, event_names[e], n) == 0)
                                event = (int) e;
                if (event < 0)
                        return n == 0 ? -EBADMSG : -EOPNOTSUPP;
                p = sp ? sp + 1 : end;
                if (sp && p == end)
                        return -EBADMSG;
        }

        notice.event = (JobNoticeEvent) event;
        job_info_init(&notice.info);

        while (p < end) {
                const char *sp = memchr(p, ' ', (size_t) (end - p));
                size_t n = sp ? (size_t) (sp - p) : (size_t) (end - p);
                const char *eq = memchr(p, '=', n);
                size_t klen, vlen;
                const Field *f = NULL;
                int r;

                if (!eq || eq == p)
                        return -EBADMSG;
                klen = (size_t) (eq - p);
                for (size_t k = 0; k < klen; k++)
                        if (!((p[k] >= 'a' && p[k] <= 'z') || p[k] == '_'))
                                return -EBADMSG;
                r = decode(eq + 1, n - klen - 1, value, &vlen);
                if (r < 0)
                        return r;

                for (size_t k = 0; k < ELEMENTSOF(fields) && !f; k++)
                        if (klen == strlen(fields[k].name) && memcmp(p, fields[k].name, klen) == 0)
                                f = &fields[k];
                if (f) {
                        size_t k = (size_t) (f - fields);

                        if (seen[k])
                                return -EBADMSG;
                        seen[k] = true;
                        r = set_field(&notice.info, f, value, vlen);
                        if (r < 0)
                                return r;
                        if (r > 0)
                                notice.unknown_fields++;
                } else
                        notice.unknown_fields++;

                if (!sp)
                        break;
                p = sp + 1;
                if (p == end)
                        return -EBADMSG;
        }

        if (!notice.info.job[0])
                return -EBADMSG;
        *ret = notice;
        return 0;
}

/* Unreserved characters of RFC 3986 pass as they are. */
static bool plain(unsigned char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
               c == '.' || c == '_' || c == '~';
}

typedef struct Writer {
        char *buf;
        size_t size, len;
        bool overflow;
} Writer;

static void put(Writer *w, const char *s, size_t n) {
        if (w->overflow || n >= w->size - w->len) {
                w->overflow = true;
                return;
        }
        memcpy(w->buf + w->len, s, n);
        w->len += n;
        w->buf[w->len] = '\0';
}

static void put_encoded(Writer *w, const char *s, size_t n) {
        static const char hex[] = "0123456789ABCDEF";

        for (size_t i = 0; i < n; i++) {
                unsigned char c = (unsigned char) s[i];
                char e[3] = { '%', hex[c >> 4], hex[c & 15] };

                if (plain(c))
                        put(w, (const char *) &c, 1);
                else
                        put(w, e, 3);
        }
}

static void put_key(Writer *w, const char *key) {
        put(w, " ", 1);
        put(w, key, strlen(key));
        put(w, "=", 1);
}

int job_notice_format(JobNoticeEvent event, const JobInfo *info, char *buf, size_t size) {
        Writer w = { .buf = buf, .size = size };
        const char *ev = job_notice_event_to_string(event);

        if (!ev || !buf || size == 0 || !job_id_valid(info->job, strlen(info->job)))
                return -EINVAL;
        buf[0] = '\0';
        put(&w, NOTICE_VERSION " ", strlen(NOTICE_VERSION) + 1);
        put(&w, ev, strlen(ev));

        for (size_t k = 0; k < ELEMENTSOF(fields); k++) {
                const Field *f = &fields[k];
                const char *str = (const char *) info + f->offset;

                if (f->kind == FIELD_U32 || f->kind == FIELD_COUNT) {
                        uint32_t v = *(const uint32_t *) ((const char *) info + f->offset);
                        char num[16];

                        if (v == JOB_UNSET)
                                continue;
                        put_key(&w, f->name);
                        put(&w, num, (size_t) snprintf(num, sizeof(num), "%" PRIu32, v));
                } else if (f->kind == FIELD_NOTES) {
                        /* Sent as LMK_NOTES was written: "k=v:k=v", encoded. */
                        if (info->notes.n == 0)
                                continue;
                        put_key(&w, f->name);
                        for (size_t i = 0; i < info->notes.n; i++) {
                                const char *key = job_notes_key(&info->notes, i);
                                const char *val = job_notes_value(&info->notes, i);

                                if (i > 0)
                                        put_encoded(&w, ":", 1);
                                put_encoded(&w, key, strlen(key));
                                put_encoded(&w, "=", 1);
                                put_encoded(&w, val, strlen(val));
                        }
                } else if (f->kind == FIELD_LMK) {
                        const char *lmk = job_lmk_to_string(info->lmk);

                        if (!lmk)
                                continue;
                        put_key(&w, f->name);
                        put(&w, lmk, strlen(lmk));
                } else if (str[0]) {
                        put_key(&w, f->name);
                        put_encoded(&w, str, strnlen(str, f->size));
                }
        }

        if (w.overflow)
                return -ENOBUFS;
        return (int) w.len;
}

int job_notice_send(const char *path, const char *msg, size_t len) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        _cleanup_close_ int fd = -EBADF;

        if (strlen(path) >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        strcpy(sa.sun_path, path);

        fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
                return -errno;
        if (sendto(fd, msg, len, MSG_NOSIGNAL, (const struct sockaddr *) &sa, sizeof(sa)) < 0)
                return -errno;
        return 0;
}

int job_notice_state_dir(const char *socket_path, char *buf, size_t size) {
        const char *slash = strrchr(socket_path, '/');
        int n;

        if (!slash)
                return -EINVAL;
        n = snprintf(buf, size, "%.*s/jobs", (int) (slash - socket_path), socket_path);
        if (n < 0 || (size_t) n >= size)
                return -ENAMETOOLONG;
        return 0;
}
