/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "json-tree.h"

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
        SPACE = 1 << 0,         /* whitespace as json-c had it */
        SEPARATOR = 1 << 1,     /* may follow the value */
        STRING_STOP = 1 << 2,   /* ends a run of plain bytes in a "string" */
        KEY_STOP = 1 << 3,      /* the same in a 'key' */
};

static const unsigned char class[256] = {
        [' '] = SPACE | SEPARATOR, ['\t'] = SPACE | SEPARATOR, ['\n'] = SPACE | SEPARATOR, ['\r'] = SPACE | SEPARATOR,
        ['"'] = STRING_STOP, ['\''] = KEY_STOP, ['\\'] = STRING_STOP | KEY_STOP,
        ['\0'] = STRING_STOP | KEY_STOP | SEPARATOR,
};

static int fail(Parser *p, size_t at, const char *reason) {
        p->err->reason = reason;
        p->err->offset = at;
        return -EBADMSG;
}

/* What stopped a scan at p->pos: the end of the input, a NUL byte (which
 * json-c took for the end), or a byte that cannot be there. */
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

#define REPLACEMENT 0xfffd
#define IS_HIGH_SURROGATE(u) (((u) & 0xfc00) == 0xd800)
#define IS_LOW_SURROGATE(u) (((u) & 0xfc00) == 0xdc00)

/* \uXXXX at p->pos, and the one after it when this one is a high
 * surrogate. A surrogate without its other half becomes U+FFFD, and a
 * code unit after a high surrogate that is not a low one counts on its own
 * (json-c's reading). */
static int unicode_escape(Parser *p, char **d) {
        unsigned u, low;

        if (hex4(p->s + p->pos + 2, &u) < 0)
                return fail(p, p->pos, "invalid \\u escape");
        p->pos += 6;
        for (;;) {
                if (!IS_HIGH_SURROGATE(u)) {
                        *d = put_utf8(*d, IS_LOW_SURROGATE(u) ? REPLACEMENT : u);
                        return 0;
                }
                if (p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
                        *d = put_utf8(*d, REPLACEMENT);
                        return 0;
                }
                if (hex4(p->s + p->pos + 2, &low) < 0)
                        return fail(p, p->pos, "invalid \\u escape");
                p->pos += 6;
                if (IS_LOW_SURROGATE(low)) {
                        *d = put_utf8(*d, 0x10000 + ((u & 0x3ff) << 10) + (low & 0x3ff));
                        return 0;
                }
                *d = put_utf8(*d, REPLACEMENT);
                u = low;
        }
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
        char *s = p->s, *d = s + i, quote = s[p->pos];
        unsigned stop = quote == '"' ? STRING_STOP : KEY_STOP;
        int r;

        for (;;) {
                char c = s[i];

                if (c == quote)
                        break;
                if (c == '\0') {
                        p->pos = i;
                        return fail_here(p, NULL);
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
                while (!(class[(unsigned char) s[i]] & stop));
        }
        p->pos = i;
        *ret_end = d;
        return 0;
}

/* The string whose opening quote is at p->pos, decoded where it stands and
 * NUL-terminated where its closing quote was. Member names may be in
 * single quotes, which json-c took even when strict. */
static inline int parse_string(Parser *p, const char **ret, uint32_t *ret_len, bool *ret_plain) {
        char *s = p->s, *start = s + p->pos + 1, *end, quote = s[p->pos];
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

/* A number as json-c 0.16 took it: the longest run of digits with at most
 * one '.' and one exponent, a sign only first and right after '.' or 'e'
 * (so "1." and "-.5" pass); then no fraction or exponent is an integer,
 * saturated at INT64_MIN or INT64_MAX, and anything else must be all
 * strtod() reads. */
static int parse_number(Parser *p, JsonValue *v) {
        char *s = p->s;
        size_t start = p->pos, i = start;
        bool fraction = false, exponent = false, minus_ok = true, plus_ok = false;

        for (;; i++) {
                char c = s[i];
                bool sign_ok = false;

                if (c >= '0' && c <= '9')
                        ;
                else if ((c == 'e' || c == 'E') && !exponent)
                        exponent = fraction = sign_ok = true;
                else if (c == '.' && !fraction)
                        fraction = sign_ok = true;
                else if ((c == '-' && minus_ok) || (c == '+' && plus_ok))
                        ;
                else
                        break;
                minus_ok = plus_ok = sign_ok;
        }
        p->pos = i;

        if (i == start + 1 && s[start] == '-' && s[i] == 'I') {
                if (memcmp(s + i, "Infinity", 8) != 0)
                        return fail_here(p, "invalid literal");
                p->pos += 8;
                *v = (JsonValue) { .type = JSON_DOUBLE, .number = -INFINITY };
                return 0;
        }

        if (!fraction) {
                bool minus = s[start] == '-';
                uint64_t limit = minus ? (uint64_t) INT64_MAX + 1 : (uint64_t) INT64_MAX, u = 0;

                if (i == start + minus)
                        return fail_here(p, "number expected");
                for (size_t k = start + minus; k < i; k++) {
                        unsigned digit = (unsigned) (s[k] - '0');

                        u = u > (limit - digit) / 10 ? limit : u * 10 + digit;
                }
                if (!minus && u != 0 && s[start] == '0')
                        return fail(p, start, "number has a leading zero");
                *v = (JsonValue) { .type = JSON_INT, .integer = minus ? (int64_t) (0 - u) : (int64_t) u };
                return 0;
        } else {
                char saved = s[i], *end;
                double d;

                s[i] = '\0';
                d = strtod(s + start, &end);
                s[i] = saved;
                if (end != s + i)
                        return fail(p, start, "malformed number");
                *v = (JsonValue) { .type = JSON_DOUBLE, .number = d };
                return 0;
        }
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

static int parse_object(Parser *p, unsigned depth, JsonValue *v) {
        size_t base = p->stack_used, n = 0;
        int r;

        p->pos++;
        skip_space(p);
        if (p->s[p->pos] != '}')
                for (;;) {
                        JsonMember m;
                        uint32_t len;

                        if (p->s[p->pos] != '"' && p->s[p->pos] != '\'')
                                return fail_here(p, "quoted member name expected");
                        r = parse_string(p, &m.key, &len, NULL);
                        if (r < 0)
                                return r;
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
        case 'N':
                return parse_literal(p, "NaN", 3, (JsonValue) { .type = JSON_DOUBLE, .number = NAN }, v);
        case 'I':
                return parse_literal(p, "Infinity", 8, (JsonValue) { .type = JSON_DOUBLE, .number = INFINITY }, v);
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
        /* json-c waited for a byte after a number or literal to know it had
         * ended, and said "continue" without one */
        if (p.pos == size && root->type != JSON_STRING && root->type != JSON_ARRAY && root->type != JSON_OBJECT)
                return fail(&p, SIZE_MAX, "unexpected end of input");
        for (size_t i = p.pos; i < size; i++)
                if (!(class[(unsigned char) p.s[i]] & SEPARATOR))
                        return fail(&p, i, "trailing data");
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

                /* lmkd writes the keys in one order: try the one after the
                 * last match first */
                if (k >= n || !streq(member->key, names[k]))
                        for (k = 0; k < n && !streq(member->key, names[k]); k++)
                                ;
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
