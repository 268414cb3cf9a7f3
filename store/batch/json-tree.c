/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch/json-tree.h"

/* The text is copied into the arena once, with NUL bytes after it: strings
 * are decoded in place (an escape never decodes to more bytes than it
 * takes) and end where their closing quote was; every scan stops at the
 * first NUL without checking the length, and strings are scanned a word at
 * a time, which may read up to WORD - 1 bytes past it. */
#define WORD sizeof(uint64_t)
#define PADDING WORD
typedef struct Parser {
        char *s;
        size_t size, pos;
        unsigned max_depth;
        Arena *arena;
        /* The elements and members of the containers still open; a
         * container's are copied into the arena in one piece when it
         * closes. */
        unsigned char *stack;
        size_t stack_used, stack_size;
        JsonError *err;
} Parser;

enum {
        SPACE = 1 << 0,         /* JSON's whitespace */
        STRING_STOP = 1 << 1,   /* ends a run of plain bytes in a string */
};

/* Control characters must be escaped in a string: they stop a run. */
static const unsigned char class[256] = {
        [0x00 ... 0x08] = STRING_STOP, [0x0b ... 0x0c] = STRING_STOP, [0x0e ... 0x1f] = STRING_STOP,
        ['\t'] = SPACE | STRING_STOP, ['\n'] = SPACE | STRING_STOP, ['\r'] = SPACE | STRING_STOP,
        [' '] = SPACE, ['"'] = STRING_STOP, ['\\'] = STRING_STOP,
};

static int fail(Parser *p, size_t at, const char *reason) {
        p->err->reason = reason;
        p->err->offset = at;
        return -EBADMSG;
}

/* What stopped a scan at p->pos: the end of the input, a NUL byte, or a
 * byte that cannot be there. */
static int fail_here(Parser *p, const char *unexpected) {
        if (p->pos >= p->size)
                return fail(p, SIZE_MAX, "unexpected end of input");
        if (p->s[p->pos] == '\0')
                return fail(p, p->pos, "unexpected NUL byte");
        return fail(p, p->pos, unexpected);
}

static void skip_space(Parser *p) {
        while (class[(unsigned char) p->s[p->pos]] & SPACE)
                p->pos++;
}

static int grow(Parser *p) {
        size_t n = MAX(p->stack_size * 2, (size_t) 16384);
        unsigned char *s = realloc(p->stack, n);

        if (!s)
                return -ENOMEM;
        p->stack = s;
        p->stack_size = n;
        return 0;
}

static inline int push(Parser *p, const void *item, size_t size) {
        if (_unlikely_(size > p->stack_size - p->stack_used) && grow(p) < 0)
                return -ENOMEM;
        memcpy(p->stack + p->stack_used, item, size);
        p->stack_used += size;
        return 0;
}

/* Moves what the container that began at base pushed into the arena. */
static const void *pop(Parser *p, size_t base) {
        size_t size = p->stack_used - base;
        void *a;

        if (size == 0)
                return NULL;
        a = arena_alloc(p->arena, size);
        if (!a)
                return NULL;
        memcpy(a, p->stack + base, size);
        p->stack_used = base;
        return a;
}

static int hex4(const char *s, unsigned *ret) {
        unsigned v = 0;

        /* stops at the NUL after the text at the latest */
        for (int i = 0; i < 4; i++) {
                char c = s[i];

                v <<= 4;
                if (c >= '0' && c <= '9')
                        v |= (unsigned) (c - '0');
                else if (c >= 'a' && c <= 'f')
                        v |= (unsigned) (c - 'a' + 10);
                else if (c >= 'A' && c <= 'F')
                        v |= (unsigned) (c - 'A' + 10);
                else
                        return -EBADMSG;
        }
        *ret = v;
        return 0;
}

static char *put_utf8(char *d, unsigned cp) {
        if (cp < 0x80)
                *d++ = (char) cp;
        else if (cp < 0x800) {
                *d++ = (char) (0xc0 | (cp >> 6));
                *d++ = (char) (0x80 | (cp & 0x3f));
        } else if (cp < 0x10000) {
                *d++ = (char) (0xe0 | (cp >> 12));
                *d++ = (char) (0x80 | ((cp >> 6) & 0x3f));
                *d++ = (char) (0x80 | (cp & 0x3f));
        } else {
                *d++ = (char) (0xf0 | (cp >> 18));
                *d++ = (char) (0x80 | ((cp >> 12) & 0x3f));
                *d++ = (char) (0x80 | ((cp >> 6) & 0x3f));
                *d++ = (char) (0x80 | (cp & 0x3f));
        }
        return d;
}

#define IS_HIGH_SURROGATE(u) (((u) & 0xfc00) == 0xd800)
#define IS_LOW_SURROGATE(u) (((u) & 0xfc00) == 0xdc00)

/* \uXXXX at p->pos, and the one after it when this one is a high
 * surrogate. A surrogate without its other half names no character: the
 * text is not I-JSON (RFC 7493), and storing U+FFFD instead would store
 * something else than what was sent. */
static int unicode_escape(Parser *p, char **d) {
        size_t at = p->pos;
        unsigned u, low;

        if (hex4(p->s + p->pos + 2, &u) < 0)
                return fail(p, at, "invalid \\u escape");
        p->pos += 6;
        if (IS_LOW_SURROGATE(u))
                return fail(p, at, "unpaired surrogate in \\u escape");
        if (!IS_HIGH_SURROGATE(u)) {
                *d = put_utf8(*d, u);
                return 0;
        }
        if (p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u' || hex4(p->s + p->pos + 2, &low) < 0 ||
            !IS_LOW_SURROGATE(low))
                return fail(p, at, "unpaired surrogate in \\u escape");
        p->pos += 6;
        *d = put_utf8(*d, 0x10000 + ((u & 0x3ff) << 10) + (low & 0x3ff));
        return 0;
}

/* Bit 7 of a byte of the result is set where w has the byte c (the first
 * such byte at least; exact as a test for any). */
static inline uint64_t has_byte(uint64_t w, unsigned char c) {
        uint64_t x = w ^ (UINT64_C(0x0101010101010101) * c);

        return (x - UINT64_C(0x0101010101010101)) & ~x & UINT64_C(0x8080808080808080);
}

/* Non-zero when a byte of w is below 0x20 or above 0x7e. */
static inline uint64_t not_printable(uint64_t w) {
        return ((w - UINT64_C(0x2020202020202020)) | (w + UINT64_C(0x0101010101010101)) | w) &
               UINT64_C(0x8080808080808080);
}

/* The rest of a string from its first escape (or NUL) at s[i], decoded
 * where it stands: d is where the next decoded byte goes. */
static __attribute__((noinline)) int parse_escaped(Parser *p, size_t i, char **ret_end) {
        char *s = p->s, *d = s + i;
        int r;

        for (;;) {
                char c = s[i];

                if (c == '"')
                        break;
                if ((unsigned char) c < 0x20) {
                        p->pos = i;
                        return fail_here(p, "control character in string");
                }
                if (c == '\\') {
                        p->pos = i;
                        switch (s[i + 1]) {
                        case '"': case '\\': case '/':
                                *d++ = s[i + 1];
                                break;
                        case 'b': *d++ = '\b'; break;
                        case 'f': *d++ = '\f'; break;
                        case 'n': *d++ = '\n'; break;
                        case 'r': *d++ = '\r'; break;
                        case 't': *d++ = '\t'; break;
                        case 'u':
                                r = unicode_escape(p, &d);
                                if (r < 0)
                                        return r;
                                i = p->pos;
                                continue;
                        default:
                                return fail(p, i, "invalid escape");
                        }
                        i += 2;
                        continue;
                }
                /* a run of plain bytes after an escape */
                do
                        *d++ = s[i++];
                while (!(class[(unsigned char) s[i]] & STRING_STOP));
        }
        p->pos = i;
        *ret_end = d;
        return 0;
}

/* The string whose opening quote is at p->pos, decoded where it stands and
 * NUL-terminated where its closing quote was. */
static inline int parse_string(Parser *p, const char **ret, uint32_t *ret_len, bool *ret_plain) {
        char *s = p->s, *start = s + p->pos + 1, *end, quote = '"';
        size_t i = p->pos + 1;
        uint64_t odd = 0;
        int r;

        /* A word at a time up to the first quote, backslash or NUL, noting
         * whether any byte before it is not printable ASCII. */
        for (uint64_t w;; i += WORD) {
                uint64_t m;

                memcpy(&w, s + i, WORD);
                m = has_byte(w, (unsigned char) quote) | has_byte(w, '\\') | has_byte(w, 0);
                if (m) {
                        /* the lowest bit set is exact: the first such byte */
                        unsigned k = (unsigned) __builtin_ctzll(m) / 8;
                        uint64_t before = k == 0 ? 0 : UINT64_MAX >> (64 - 8 * k);

                        odd |= not_printable((w & before) | (UINT64_C(0x2020202020202020) & ~before));
                        i += k;
                        break;
                }
                odd |= not_printable(w);
        }
        if (_likely_(s[i] == quote)) {
                end = s + i;
                p->pos = i;
                /* not printable: a control character (not allowed raw), or
                 * a byte of a multi-byte character (fine) */
                if (_unlikely_(odd))
                        for (const char *c = start; c < end; c++)
                                if ((unsigned char) *c < 0x20) {
                                        p->pos = (size_t) (c - s);
                                        return fail_here(p, "control character in string");
                                }
        } else {
                r = parse_escaped(p, i, &end);
                if (r < 0)
                        return r;
                odd = 1;
        }
        *end = '\0';
        p->pos++;
        *ret = start;
        *ret_len = (uint32_t) (end - start);
        if (ret_plain)
                *ret_plain = !odd;
        return 0;
}

static inline bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* A number by JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
 * Without fraction or exponent it is an integer, which must fit an int64;
 * else a double, which must be finite. Numbers beyond that are refused,
 * not rounded or saturated: the store keeps only what it can keep as sent. */
static int parse_number(Parser *p, JsonValue *v) {
        char *s = p->s;
        size_t start = p->pos, i = start;
        bool minus = s[i] == '-', integer = true;

        i += minus;
        if (s[i] == '0')
                i++;
        else if (s[i] >= '1' && s[i] <= '9')
                while (is_digit(s[i]))
                        i++;
        else {
                p->pos = i;
                return fail_here(p, "digit expected");
        }
        if (s[i] == '.') {
                integer = false;
                if (!is_digit(s[++i])) {
                        p->pos = i;
                        return fail_here(p, "digit expected after '.'");
                }
                while (is_digit(s[i]))
                        i++;
        }
        if (s[i] == 'e' || s[i] == 'E') {
                integer = false;
                i++;
                if (s[i] == '+' || s[i] == '-')
                        i++;
                if (!is_digit(s[i])) {
                        p->pos = i;
                        return fail_here(p, "digit expected in exponent");
                }
                while (is_digit(s[i]))
                        i++;
        }
        p->pos = i;

        if (integer) {
                uint64_t limit = minus ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX, u = 0;

                for (size_t k = start + minus; k < i; k++) {
                        unsigned digit = (unsigned) (s[k] - '0');

                        if (u > (limit - digit) / 10)
                                return fail(p, start, "integer out of range");
                        u = u * 10 + digit;
                }
                *v = (JsonValue) { .type = JSON_INT, .integer = minus ? (int64_t) (0 - u) : (int64_t) u };
        } else {
                char saved = s[i];
                double d;

                s[i] = '\0';
                d = strtod(s + start, NULL);
                s[i] = saved;
                if (!isfinite(d))
                        return fail(p, start, "number out of range");
                *v = (JsonValue) { .type = JSON_DOUBLE, .number = d };
        }
        return 0;
}

static inline int parse_literal(Parser *p, const char *word, size_t n, JsonValue v, JsonValue *ret) {
        /* n bytes after p->pos may be in the padding, not beyond */
        if (memcmp(p->s + p->pos, word, n) != 0) {
                while (p->s[p->pos] == *word) {
                        p->pos++;
                        word++;
                }
                return fail_here(p, "invalid literal");
        }
        p->pos += n;
        *ret = v;
        return 0;
}

static int parse_value(Parser *p, unsigned depth, JsonValue *v);

static int parse_array(Parser *p, unsigned depth, JsonValue *v) {
        size_t base = p->stack_used, n = 0;
        int r;

        p->pos++;
        skip_space(p);
        if (p->s[p->pos] != ']')
                for (;;) {
                        JsonValue e;

                        r = parse_value(p, depth + 1, &e);
                        if (r < 0)
                                return r;
                        r = push(p, &e, sizeof(e));
                        if (r < 0)
                                return r;
                        n++;
                        skip_space(p);
                        if (p->s[p->pos] == ']')
                                break;
                        if (p->s[p->pos] != ',')
                                return fail_here(p, "',' or ']' expected");
                        p->pos++;
                        skip_space(p);
                }
        p->pos++;
        *v = (JsonValue) { .type = JSON_ARRAY, .n = (uint32_t) n, .elements = pop(p, base) };
        if (n > 0 && !v->elements)
                return -ENOMEM;
        return 0;
}

static int key_cmp(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* A name given twice makes an object mean two things: refused (I-JSON,
 * RFC 7493). Small objects (all of lmkd's) compare pairwise, first by
 * their first byte: a batch's rows have a dozen names each, and comparing
 * them whole was a twentieth of the store's time at ingest. Large ones
 * sort their names, so that a hostile object costs n log n. */
static int check_unique(Parser *p, const JsonMember *m, size_t n) {
        const char **keys;

        if (n <= 16) {
                for (size_t i = 1; i < n; i++)
                        for (size_t k = 0; k < i; k++)
                                if (m[i].key[0] == m[k].key[0] && streq(m[i].key, m[k].key))
                                        return fail(p, p->pos, "member name given twice");
                return 0;
        }
        keys = malloc(n * sizeof(*keys));
        if (!keys)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                keys[i] = m[i].key;
        qsort(keys, n, sizeof(*keys), key_cmp);
        for (size_t i = 1; i < n; i++)
                if (streq(keys[i], keys[i - 1])) {
                        free(keys);
                        return fail(p, p->pos, "member name given twice");
                }
        free(keys);
        return 0;
}

static int parse_object(Parser *p, unsigned depth, JsonValue *v) {
        size_t base = p->stack_used, n = 0;
        int r;

        p->pos++;
        skip_space(p);
        if (p->s[p->pos] != '}')
                for (;;) {
                        JsonMember m;
                        uint32_t len;
                        bool plain;

                        size_t at = p->pos;

                        if (p->s[p->pos] != '"')
                                return fail_here(p, "quoted member name expected");
                        r = parse_string(p, &m.key, &len, &plain);
                        if (r < 0)
                                return r;
                        /* A name cut at a NUL would stand for another. Only
                         * an escape (\u0000) makes one: a plain name, all
                         * printable ASCII, is not searched for it (a strlen()
                         * of every name was 3 % of the store's time). */
                        if (!plain && strlen(m.key) != len)
                                return fail(p, at, "NUL in member name");
                        skip_space(p);
                        if (p->s[p->pos] != ':')
                                return fail_here(p, "':' expected");
                        p->pos++;
                        skip_space(p);
                        r = parse_value(p, depth + 1, &m.value);
                        if (r < 0)
                                return r;
                        r = push(p, &m, sizeof(m));
                        if (r < 0)
                                return r;
                        n++;
                        skip_space(p);
                        if (p->s[p->pos] == '}')
                                break;
                        if (p->s[p->pos] != ',')
                                return fail_here(p, "',' or '}' expected");
                        p->pos++;
                        skip_space(p);
                }
        /* an empty object first in a batch has no stack yet: nothing to compare */
        if (n > 1) {
                r = check_unique(p, (const JsonMember *) (p->stack + base), n);
                if (r < 0)
                        return r;
        }
        p->pos++;
        *v = (JsonValue) { .type = JSON_OBJECT, .n = (uint32_t) n, .members = pop(p, base) };
        if (n > 0 && !v->members)
                return -ENOMEM;
        return 0;
}

static int parse_value(Parser *p, unsigned depth, JsonValue *v) {
        if (depth >= p->max_depth && p->pos < p->size)
                return fail(p, p->pos, "nesting too deep");
        switch (p->s[p->pos]) {
        case '{':
                return parse_object(p, depth, v);
        case '[':
                return parse_array(p, depth, v);
        case '"':
                *v = (JsonValue) { .type = JSON_STRING };
                return parse_string(p, &v->string, &v->n, &v->plain);
        case '-': case '0' ... '9':
                return parse_number(p, v);
        case 't':
                return parse_literal(p, "true", 4, (JsonValue) { .type = JSON_BOOL, .boolean = true }, v);
        case 'f':
                return parse_literal(p, "false", 5, (JsonValue) { .type = JSON_BOOL, .boolean = false }, v);
        case 'n':
                return parse_literal(p, "null", 4, (JsonValue) { .type = JSON_NULL }, v);
        default:
                return fail_here(p, "unexpected character");
        }
}

int json_parse(Arena *arena, const char *data, size_t size, unsigned max_depth, const JsonValue **ret,
               JsonError *err) {
        Parser p = { .size = size, .max_depth = max_depth, .arena = arena, .err = err };
        JsonValue *root;
        int r;

        if (size >= UINT32_MAX)
                return fail(&p, 0, "too large");
        p.s = arena_alloc(arena, size + PADDING);
        root = arena_alloc(arena, sizeof(JsonValue));
        if (!p.s || !root)
                return -ENOMEM;
        memcpy(p.s, data, size);
        memset(p.s + size, 0, PADDING);

        skip_space(&p);
        r = parse_value(&p, 0, root);
        free(p.stack);
        if (r < 0)
                return r;
        skip_space(&p);
        if (p.pos < size)
                return fail(&p, p.pos, "trailing data");
        *ret = root;
        return 0;
}

void json_object_bind(const JsonValue *o, const char *const *names, size_t n, const JsonValue **ret) {
        size_t next = 0;

        for (size_t i = 0; i < n; i++)
                ret[i] = NULL;
        for (size_t m = 0; m < o->n; m++) {
                const JsonMember *member = &o->members[m];
                size_t k = next;

                /* lmkd writes the keys in one order, leaving out some
                 * optional ones: look from the one after the last match
                 * on, then from the start (names are distinct) */
                while (k < n && !streq(member->key, names[k]))
                        k++;
                if (k >= n) {
                        for (k = 0; k < next && !streq(member->key, names[k]); k++)
                                ;
                        if (k == next)
                                k = n;
                }
                if (k < n) {
                        ret[k] = &member->value;
                        next = k + 1;
                }
        }
}

size_t json_object_unique(const JsonValue *o, JsonMember *ret, size_t max) {
        size_t n = 0;

        for (size_t m = 0; m < o->n; m++) {
                const JsonMember *member = &o->members[m];
                size_t k;

                for (k = 0; k < n && !streq(ret[k].key, member->key); k++)
                        ;
                if (k < n)
                        ret[k].value = member->value;
                else if (n == max)
                        return max + 1;
                else
                        ret[n++] = *member;
        }
        return n;
}
