/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What a modulefile puts in PATH and LD_LIBRARY_PATH, or names as an
 * install prefix, read from its text: Tcl (Environment Modules, Lmod) and
 * Lua (Lmod). Modulefiles are programs, and this is no interpreter: only
 * literal text and variables set from literal text are followed, line by
 * line; anything else (an environment variable, a command, a function
 * call) leaves that value out. Nothing is ever run. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "util.h"

#define WORDS_MAX 16
#define VALUE_MAX PATH_MAX
#define LUA_DEPTH_MAX 8

typedef struct Var {
        char *name;
        char *value;            /* NULL: set to what is not read here */
} Var;

typedef struct Parse {
        ModuleInfo *info;
        const char *name, *version;     /* the module's, from its path */
        bool lua;
        bool in_comment;        /* Lua: inside --[[ ]] */
        Var vars[MODULE_VARS_MAX];
        size_t n_vars;
        int error;              /* -ENOMEM */
} Parse;

static bool is_name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool is_space(char c) {
        return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static Var *var_find(Parse *p, const char *name, size_t n) {
        for (size_t i = 0; i < p->n_vars; i++)
                if (strlen(p->vars[i].name) == n && strncmp(p->vars[i].name, name, n) == 0)
                        return &p->vars[i];
        return NULL;
}

/* value NULL: the variable holds what is not known here */
static void var_set(Parse *p, const char *name, const char *value) {
        Var *v = var_find(p, name, strlen(name));
        char *copy = NULL;

        if (value && !(copy = strdup(value))) {
                p->error = -ENOMEM;
                return;
        }
        if (!v) {
                if (p->n_vars >= MODULE_VARS_MAX) {
                        free(copy);
                        return;         /* unknown when used */
                }
                v = &p->vars[p->n_vars];
                v->name = strdup(name);
                if (!v->name) {
                        free(copy);
                        p->error = -ENOMEM;
                        return;
                }
                v->value = NULL;
                p->n_vars++;
        }
        free(v->value);
        v->value = copy;
}

static bool ends_with(const char *s, const char *suffix) {
        size_t n = strlen(s), k = strlen(suffix);

        return n > k && streq(s + n - k, suffix);
}

static bool is_root_variable(const char *name) {
        return ends_with(name, "_ROOT") || ends_with(name, "_HOME") || ends_with(name, "_DIR") ||
               ends_with(name, "_PREFIX");
}

static bool is_path_variable(const char *name) {
        return streq(name, "PATH") || streq(name, "LD_LIBRARY_PATH") || streq(name, "LIBRARY_PATH");
}

/* An absolute path, with repeated and trailing slashes taken out. */
static void add_path(Parse *p, ModulePathKind kind, const char *value, size_t n) {
        ModuleInfo *m = p->info;
        char *copy, *out;

        if (n == 0)
                return;
        if (value[0] != '/' || n >= VALUE_MAX || memchr(value, '\0', n)) {
                m->unresolved++;
                return;
        }
        copy = malloc(n + 1);
        if (!copy) {
                p->error = -ENOMEM;
                return;
        }
        out = copy;
        for (size_t i = 0; i < n; i++)
                if (value[i] != '/' || out == copy || out[-1] != '/')
                        *out++ = value[i];
        while (out > copy + 1 && out[-1] == '/')
                out--;
        *out = '\0';
        for (size_t i = 0; i < m->n_paths; i++)
                if (m->kinds[i] == kind && streq(m->paths[i], copy)) {
                        free(copy);
                        return;
                }
        if (m->n_paths >= MODULE_PATHS_MAX) {
                free(copy);
                return;
        }
        m->paths[m->n_paths] = copy;
        m->kinds[m->n_paths++] = kind;
}

/* A PATH-like value: each part between delimiters. */
static void add_path_list(Parse *p, const char *value, char delim) {
        while (*value) {
                size_t n = strcspn(value, (char[]) { delim, '\0' });

                add_path(p, MODULE_PATH_DIR, value, n);
                value += n;
                if (*value)
                        value++;
        }
}

/* ---- Tcl ---- */

typedef struct Word {
        char text[VALUE_MAX];
        bool known;             /* false: it used something not read here */
} Word;

/* Appends text to a word; false when it does not fit. */
static bool word_append(Word *w, size_t *len, const char *s, size_t n) {
        if (*len + n >= sizeof(w->text))
                return false;
        memcpy(w->text + *len, s, n);
        *len += n;
        w->text[*len] = '\0';
        return true;
}

/* $name or ${name} at *s (past the $): appends its value. */
static const char *tcl_variable(Parse *p, const char *s, const char *end, Word *w, size_t *len) {
        const char *name = s;
        size_t n;
        Var *v;

        if (s < end && *s == '{') {
                const char *close = memchr(s, '}', (size_t) (end - s));

                if (!close) {
                        w->known = false;
                        return end;
                }
                name = s + 1;
                n = (size_t) (close - name);
                s = close + 1;
        } else {
                while (s < end && is_name_char(*s))
                        s++;
                n = (size_t) (s - name);
                /* $env(HOME), $::env(X), arrays: not read */
                if (n == 0 || (s < end && (*s == '(' || *s == ':'))) {
                        w->known = false;
                        return s;
                }
        }
        v = n > 0 ? var_find(p, name, n) : NULL;
        if (!v || !v->value || !word_append(w, len, v->value, strlen(v->value)))
                w->known = false;
        return s;
}

/* One word at s: "…" and bare words with $variables, {…} literal. Returns
 * where it ends; NULL when the line ends inside it. */
static const char *tcl_word(Parse *p, const char *s, const char *end, Word *w) {
        size_t len = 0;

        w->text[0] = '\0';
        w->known = true;
        if (*s == '{') {
                const char *close = memchr(s + 1, '}', (size_t) (end - s - 1));

                if (!close)
                        return NULL;
                if (memchr(s + 1, '{', (size_t) (close - s - 1)) || !word_append(w, &len, s + 1, (size_t) (close - s - 1)))
                        w->known = false;
                return close + 1;
        }
        if (*s == '"') {
                for (s++; s < end && *s != '"'; )
                        if (*s == '$')
                                s = tcl_variable(p, s + 1, end, w, &len);
                        else {
                                if (*s == '\\' || *s == '[' || !word_append(w, &len, s, 1))
                                        w->known = false;
                                s++;
                        }
                return s < end ? s + 1 : NULL;
        }
        while (s < end && !is_space(*s) && *s != ';')
                if (*s == '$')
                        s = tcl_variable(p, s + 1, end, w, &len);
                else if (*s == '[') {
                        /* a command's result, spaces and all: never run */
                        unsigned open = 0;

                        w->known = false;
                        for (; s < end; s++)
                                if (*s == '[')
                                        open++;
                                else if (*s == ']' && --open == 0)
                                        break;
                        if (s == end)
                                return NULL;
                        s++;
                } else {
                        if (*s == '\\' || *s == '[' || *s == '"' || *s == '{' || !word_append(w, &len, s, 1))
                                w->known = false;
                        s++;
                }
        return s;
}

static void tcl_command(Parse *p, Word *w, size_t n) {
        ModuleInfo *m = p->info;

        if (streq(w[0].text, "set") && n == 3)
                var_set(p, w[1].text, w[2].known ? w[2].text : NULL);
        else if (streq(w[0].text, "setenv") && n == 3 && is_root_variable(w[1].text)) {
                if (w[2].known)
                        add_path(p, MODULE_PATH_ROOT, w[2].text, strlen(w[2].text));
                else
                        m->unresolved++;
        } else if (streq(w[0].text, "prepend-path") || streq(w[0].text, "append-path")) {
                char delim = ':';
                size_t i = 1;

                /* options: --delim X, -d X, --delim=X, --duplicates */
                for (; i < n && w[i].text[0] == '-'; i++)
                        if ((streq(w[i].text, "-d") || streq(w[i].text, "--delim")) && i + 1 < n) {
                                i++;
                                delim = w[i].text[0];
                        } else if (strncmp(w[i].text, "--delim=", 8) == 0)
                                delim = w[i].text[8];
                if (i >= n || !is_path_variable(w[i].text) || delim == '\0')
                        return;
                for (i++; i < n; i++)
                        if (w[i].known)
                                add_path_list(p, w[i].text, delim);
                        else
                                m->unresolved++;
        }
}

static void tcl_line(Parse *p, const char *s, const char *end) {
        _cleanup_free_ Word *w = NULL;
        size_t n = 0;

        while (s < end && is_space(*s))
                s++;
        if (s == end || *s == '#')
                return;
        w = malloc(WORDS_MAX * sizeof(Word));
        if (!w) {
                p->error = -ENOMEM;
                return;
        }
        while (s < end && *s != ';' && n < WORDS_MAX) {
                s = tcl_word(p, s, end, &w[n]);
                if (!s)
                        return;         /* an open quote or brace: not read */
                n++;
                while (s < end && is_space(*s))
                        s++;
        }
        /* the first word is the command's name, never substituted here */
        if (n > 0 && w[0].known)
                tcl_command(p, w, n);
}

/* ---- Lua ---- */

typedef struct Lex {
        const char *s, *end;
} Lex;

static void lua_skip_space(Lex *x) {
        while (x->s < x->end && is_space(*x->s))
                x->s++;
}

static bool lua_take(Lex *x, const char *token) {
        size_t n = strlen(token);

        lua_skip_space(x);
        if ((size_t) (x->end - x->s) >= n && strncmp(x->s, token, n) == 0) {
                x->s += n;
                return true;
        }
        return false;
}

static size_t lua_name(Lex *x, const char **ret) {
        const char *start;

        lua_skip_space(x);
        start = x->s;
        if (x->s < x->end && (is_name_char(*x->s) && !(*x->s >= '0' && *x->s <= '9')))
                while (x->s < x->end && is_name_char(*x->s))
                        x->s++;
        *ret = start;
        return (size_t) (x->s - start);
}

static int lua_expr(Parse *p, Lex *x, Word *w, size_t *len, unsigned depth);

/* "…", '…' (no escapes) or [[…]] on one line */
static int lua_string(Lex *x, Word *w, size_t *len) {
        const char *close;
        size_t n;

        lua_skip_space(x);
        if (x->s < x->end && (*x->s == '"' || *x->s == '\'')) {
                close = memchr(x->s + 1, *x->s, (size_t) (x->end - x->s - 1));
                if (!close)
                        return -EINVAL;
                n = (size_t) (close - x->s - 1);
                if (memchr(x->s + 1, '\\', n) || !word_append(w, len, x->s + 1, n))
                        w->known = false;
                x->s = close + 1;
                return 0;
        }
        if (x->end - x->s >= 2 && x->s[0] == '[' && x->s[1] == '[') {
                close = memmem(x->s + 2, (size_t) (x->end - x->s - 2), "]]", 2);
                if (!close)
                        return -EINVAL;
                if (!word_append(w, len, x->s + 2, (size_t) (close - x->s - 2)))
                        w->known = false;
                x->s = close + 2;
                return 0;
        }
        return -ENOENT;
}

/* Skips to the ) that closes a call whose ( was taken, over strings. */
static int lua_skip_call(Lex *x) {
        unsigned open = 1;

        while (x->s < x->end) {
                char c = *x->s++;

                if (c == '"' || c == '\'') {
                        const char *close = memchr(x->s, c, (size_t) (x->end - x->s));

                        if (!close)
                                return -EINVAL;
                        x->s = close + 1;
                } else if (c == '(')
                        open++;
                else if (c == ')' && --open == 0)
                        return 0;
        }
        return -EINVAL;
}

/* A term: a string, a variable, pathJoin(…), (expr); other calls make the
 * value unknown. */
static int lua_term(Parse *p, Lex *x, Word *w, size_t *len, unsigned depth) {
        const char *name;
        size_t n;
        int r;

        r = lua_string(x, w, len);
        if (r != -ENOENT)
                return r;
        if (lua_take(x, "(")) {
                r = lua_expr(p, x, w, len, depth + 1);
                return r < 0 ? r : lua_take(x, ")") ? 0 : -EINVAL;
        }
        n = lua_name(x, &name);
        if (n == 0)
                return -EINVAL;
        if (lua_take(x, "(")) {
                bool first = true;

                /* Lmod's own: the module's name and version, known here */
                if ((n == 12 && strncmp(name, "myModuleName", 12) == 0) ||
                    (n == 15 && strncmp(name, "myModuleVersion", 15) == 0) ||
                    (n == 16 && strncmp(name, "myModuleFullName", 16) == 0)) {
                        bool ok = true;

                        if (n != 15)
                                ok = word_append(w, len, p->name, strlen(p->name));
                        if (ok && n == 16 && p->version[0])
                                ok = word_append(w, len, "/", 1);
                        if (ok && n != 12)
                                ok = word_append(w, len, p->version, strlen(p->version));
                        if (!ok)
                                w->known = false;
                        return lua_take(x, ")") ? 0 : -EINVAL;
                }
                if (!(n == 8 && strncmp(name, "pathJoin", 8) == 0)) {
                        w->known = false;
                        return lua_skip_call(x);
                }
                if (lua_take(x, ")"))
                        return 0;
                do {
                        Word part;
                        size_t plen = 0;

                        part.text[0] = '\0';
                        part.known = true;
                        r = lua_expr(p, x, &part, &plen, depth + 1);
                        if (r < 0)
                                return r;
                        if (!part.known)
                                w->known = false;
                        /* pathJoin puts one / between the parts */
                        else if ((!first && !word_append(w, len, "/", 1)) || !word_append(w, len, part.text, plen))
                                w->known = false;
                        first = false;
                } while (lua_take(x, ","));
                return lua_take(x, ")") ? 0 : -EINVAL;
        }
        {
                Var *v = var_find(p, name, n);

                if (!v || !v->value || !word_append(w, len, v->value, strlen(v->value)))
                        w->known = false;
        }
        return 0;
}

static int lua_expr(Parse *p, Lex *x, Word *w, size_t *len, unsigned depth) {
        int r;

        if (depth > LUA_DEPTH_MAX)
                return -EINVAL;
        do {
                r = lua_term(p, x, w, len, depth);
                if (r < 0)
                        return r;
        } while (lua_take(x, ".."));
        return 0;
}

/* One value: -EINVAL when it is no expression read here. */
static int lua_value(Parse *p, Lex *x, Word *w) {
        size_t len = 0;

        w->text[0] = '\0';
        w->known = true;
        return lua_expr(p, x, w, &len, 0);
}

static void lua_call(Parse *p, Lex *x, bool path) {
        _cleanup_free_ Word *w = malloc(2 * sizeof(Word));
        ModuleInfo *m = p->info;
        char delim = ':';

        if (!w) {
                p->error = -ENOMEM;
                return;
        }
        /* the variable's name: a literal, or the call is not one read here */
        if (lua_value(p, x, &w[0]) < 0 || !w[0].known || !lua_take(x, ","))
                return;
        if (path ? !is_path_variable(w[0].text) : !is_root_variable(w[0].text))
                return;
        if (lua_value(p, x, &w[1]) < 0 || !w[1].known) {
                m->unresolved++;
                return;
        }
        /* prepend_path("PATH", value, delimiter); w[0] is free again */
        if (lua_take(x, ",")) {
                if (lua_value(p, x, &w[0]) < 0 || !w[0].known || strlen(w[0].text) != 1)
                        return;
                delim = w[0].text[0];
        }
        if (!lua_take(x, ")"))
                return;
        if (path)
                add_path_list(p, w[1].text, delim);
        else
                add_path(p, MODULE_PATH_ROOT, w[1].text, strlen(w[1].text));
}

static void lua_line(Parse *p, const char *s, const char *end) {
        Lex x = { .s = s, .end = end };
        const char *name;
        size_t n;

        if (p->in_comment) {
                const char *close = memmem(s, (size_t) (end - s), "]]", 2);

                if (!close)
                        return;
                p->in_comment = false;
                x.s = close + 2;
        }
        lua_skip_space(&x);
        if (x.end - x.s >= 4 && strncmp(x.s, "--[[", 4) == 0) {
                if (!memmem(x.s + 4, (size_t) (x.end - x.s - 4), "]]", 2))
                        p->in_comment = true;
                return;
        }
        if (x.end - x.s >= 2 && strncmp(x.s, "--", 2) == 0)
                return;

        /* local NAME = value */
        if (lua_take(&x, "local ") || lua_take(&x, "local\t")) {
                char var[64];
                _cleanup_free_ Word *w = NULL;

                n = lua_name(&x, &name);
                if (n == 0 || n >= sizeof(var) || !lua_take(&x, "=") || lua_take(&x, "="))
                        return;
                memcpy(var, name, n);
                var[n] = '\0';
                w = malloc(sizeof(Word));
                if (!w) {
                        p->error = -ENOMEM;
                        return;
                }
                if (lua_value(p, &x, w) < 0)
                        w->known = false;
                var_set(p, var, w->known ? w->text : NULL);
                return;
        }
        /* the calls, also inside a one-line if … then … end */
        while (x.s < x.end) {
                n = lua_name(&x, &name);
                if (n == 0) {
                        if (*x.s == '"' || *x.s == '\'') {
                                const char *close = memchr(x.s + 1, *x.s, (size_t) (x.end - x.s - 1));

                                if (!close)
                                        return;
                                x.s = close + 1;
                        } else if (x.end - x.s >= 2 && x.s[0] == '-' && x.s[1] == '-')
                                return;
                        else
                                x.s++;
                        continue;
                }
                if (!lua_take(&x, "("))
                        continue;
                if ((n == 12 && (strncmp(name, "prepend_path", 12) == 0)) ||
                    (n == 11 && strncmp(name, "append_path", 11) == 0))
                        lua_call(p, &x, true);
                else if ((n == 6 && strncmp(name, "setenv", 6) == 0) || (n == 7 && strncmp(name, "pushenv", 7) == 0))
                        lua_call(p, &x, false);
        }
}

static int parse_line(void *userdata, const char *line, size_t n, bool cut) {
        Parse *p = userdata;

        if (cut) {
                p->info->lines_cut++;
                /* a cut line may have opened a comment: stay where we were */
                return 0;
        }
        if (memchr(line, '\0', n))
                return 0;
        if (p->lua)
                lua_line(p, line, line + n);
        else
                tcl_line(p, line, line + n);
        return p->error;
}

void module_info_done(ModuleInfo *m) {
        for (size_t i = 0; i < m->n_paths; i++)
                free(m->paths[i]);
        *m = (ModuleInfo) {};
}

int modulefile_parse(const char *text, size_t n, bool lua, const char *name, const char *version, ModuleInfo *ret) {
        _cleanup_free_ DpkgLines *lines = calloc(1, sizeof(DpkgLines));
        _cleanup_free_ Parse *p = calloc(1, sizeof(Parse));
        ModuleInfo info = {};
        int r;

        if (!lines || !p)
                return -ENOMEM;
        if (n > MODULEFILE_MAX)
                return -EFBIG;
        p->info = &info;
        p->name = name;
        p->version = version;
        p->lua = lua;
        r = inventory_lines_feed(lines, text, n, parse_line, p);
        /* the last line, without its newline */
        if (r >= 0 && (lines->n > 0 || lines->cut)) {
                lines->buf[lines->n] = '\0';
                r = parse_line(p, lines->buf, lines->n, lines->cut);
        }
        for (size_t i = 0; i < p->n_vars; i++) {
                free(p->vars[i].name);
                free(p->vars[i].value);
        }
        if (r < 0) {
                module_info_done(&info);
                return r;
        }
        *ret = info;
        return 0;
}
