/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>

#include "cli.h"
#include "token-file.h"

#if HAVE_MUNGE
#include <munge.h>
#endif
#include "util.h"

/* A job summary is a few hundred KiB at most; anything far larger is not
 * an lmk-store answering. */
#define MAX_ANSWER (64u << 20)

typedef struct Buffer {
        char *data;
        size_t size;
        bool too_large;
} Buffer;

static size_t on_data(char *ptr, size_t size, size_t nmemb, void *userdata) {
        Buffer *b = userdata;
        size_t n = size * nmemb;
        char *p;

        if (b->size + n > MAX_ANSWER) {
                b->too_large = true;
                return 0;
        }
        p = realloc(b->data, b->size + n + 1);
        if (!p)
                return 0;
        memcpy(p + b->size, ptr, n);
        b->data = p;
        b->size += n;
        b->data[b->size] = '\0';
        return n;
}

/* The token file holds the token alone, or lmk-store's own "ROLE TOKEN"
 * lines, of which the admin token is the one to use. Opening, permissions
 * and the text are common/token-file.h's policy, the same as lmkd's and
 * lmk-store's. */
static int load_token(Cli *cli) {
        _cleanup_free_ char *text = NULL, *why = NULL;
        char *line, *save = NULL;
        int r;

        if (!cli->token_file || cli->token)
                return 0;
        r = token_file_read(cli->token_file, &text, &why);
        if (r < 0 && why)
                return cli_error(cli, r, "%s", why);
        if (r < 0)
                return cli_error(cli, r, "Failed to read token file %s: %s", cli->token_file, strerror(-r));
        for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
                char *w1, *w2, *s2 = NULL;

                line[strcspn(line, "#")] = '\0';
                w1 = strtok_r(line, " \t", &s2);
                w2 = strtok_r(NULL, " \t", &s2);
                if (!w1)
                        continue;
                if (!w2 || streq(w1, "admin")) {
                        cli->token = strdup(w2 ?: w1);
                        if (!cli->token)
                                return cli_error(cli, ENOMEM, "Out of memory.");
                        break;
                }
        }
        token_erase(text);
        if (!cli->token)
                return cli_error(cli, EINVAL, "No token in %s: expected the token alone, or \"admin TOKEN\".",
                                 cli->token_file);
        if (!token_is_valid(cli->token))
                return cli_error(cli, EINVAL, "The token in %s is not %d to %d printable characters without spaces.",
                                 cli->token_file, TOKEN_MIN_LENGTH, TOKEN_MAX_LENGTH);
        return 0;
}

static int build_url(CURL *c, const char *base, const char *path, const char *const *query, bool csv, char **ret) {
        _cleanup_free_ char *url = NULL;
        size_t n = strlen(base);
        FILE *f;
        size_t size;
        char sep = '?';

        while (n > 0 && base[n - 1] == '/')
                n--;
        f = open_memstream(&url, &size);
        if (!f)
                return -ENOMEM;
        fprintf(f, "%.*s%s", (int) n, base, path);
        for (size_t i = 0; query && query[i]; i += 2) {
                char *v;

                if (!query[i + 1])
                        continue;
                v = curl_easy_escape(c, query[i + 1], 0);
                if (!v) {
                        fclose(f);
                        return -ENOMEM;
                }
                fprintf(f, "%c%s=%s", sep, query[i], v);
                curl_free(v);
                sep = '&';
        }
        if (csv)
                fprintf(f, "%cformat=csv", sep);
        if (fclose(f) != 0)
                return -ENOMEM;
        *ret = TAKE_PTR(url);
        return 0;
}

/* Without a token, the user proves who they are with a MUNGE credential
 * made for this one request (store/auth/identity.h): its payload names the
 * method and the path as the store sees it, %-decoded. */
static int munge_header(Cli *cli, const char *method, const char *path, char **ret) {
#if HAVE_MUNGE
        _cleanup_free_ char *payload = NULL;
        char *decoded, *cred = NULL;
        munge_ctx_t ctx;
        munge_err_t e;
        int r;

        decoded = curl_easy_unescape(NULL, path, 0, NULL);
        if (!decoded)
                return cli_error(cli, ENOMEM, "Out of memory.");
        r = asprintf(&payload, "lmk-store %s %s", method, decoded);
        curl_free(decoded);
        if (r < 0)
                return cli_error(cli, ENOMEM, "Out of memory.");
        ctx = munge_ctx_create();
        if (!ctx)
                return cli_error(cli, ENOMEM, "Out of memory.");
        if (cli->munge_socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, cli->munge_socket) != EMUNGE_SUCCESS) {
                munge_ctx_destroy(ctx);
                return cli_error(cli, EINVAL, "Invalid munged socket %s.", cli->munge_socket);
        }
        e = munge_encode(&cred, ctx, payload, (int) strlen(payload));
        if (e != EMUNGE_SUCCESS) {
                r = cli_error(cli, EACCES, "Failed to get a MUNGE credential to prove who you are: %s "
                              "(is munged running? an admin may give --token-file instead)",
                              munge_ctx_strerror(ctx) ?: munge_strerror(e));
                munge_ctx_destroy(ctx);
                free(cred);
                return r;
        }
        munge_ctx_destroy(ctx);
        r = asprintf(ret, "Authorization: MUNGE %s", cred);
        free(cred);
        return r < 0 ? cli_error(cli, ENOMEM, "Out of memory.") : 0;
#else
        *ret = NULL;
        return 0;
#endif
}

/* With csv, the answer (CSV on 200) goes to standard output and *ret is
 * left alone. */
static int request(Cli *cli, const char *method, const char *path, const char *const *query, json_object *body,
                   bool csv, json_object **ret) {
        _cleanup_free_ char *url = NULL, *auth = NULL;
        struct curl_slist *headers = NULL;
        Buffer b = {};
        json_object *o = NULL;
        long status = 0;
        CURLcode cr;
        CURL *c;
        int r;

        r = load_token(cli);
        if (r < 0)
                return r;
        c = curl_easy_init();
        if (!c)
                return cli_error(cli, ENOMEM, "Failed to set up libcurl.");
        r = build_url(c, cli->store, path, query, csv, &url);
        if (r < 0) {
                curl_easy_cleanup(c);
                return cli_error(cli, r, "Out of memory.");
        }
        if (cli->token) {
                if (asprintf(&auth, "Authorization: Bearer %s", cli->token) < 0) {
                        curl_easy_cleanup(c);
                        return cli_error(cli, ENOMEM, "Out of memory.");
                }
                headers = curl_slist_append(headers, auth);
        } else {
                r = munge_header(cli, method, path, &auth);
                if (r < 0) {
                        curl_easy_cleanup(c);
                        return r;
                }
                if (auth)
                        headers = curl_slist_append(headers, auth);
        }
        headers = curl_slist_append(headers, csv ? "Accept: text/csv, application/json" : "Accept: application/json");
        if (body) {
                headers = curl_slist_append(headers, "Content-Type: application/json");
                curl_easy_setopt(c, CURLOPT_POST, 1L);
                curl_easy_setopt(c, CURLOPT_COPYPOSTFIELDS,
                                 json_object_to_json_string_ext(body, JSON_C_TO_STRING_PLAIN));
        }
        curl_easy_setopt(c, CURLOPT_URL, url);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
        curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
        curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, 10L);
        curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
        curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
        curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
        cr = curl_easy_perform(c);
        curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
        curl_slist_free_all(headers);
        curl_easy_cleanup(c);
        if (auth)
                explicit_bzero(auth, strlen(auth));

        if (cr != CURLE_OK) {
                r = b.too_large ? cli_error(cli, EFBIG, "%s: answer larger than %u bytes", url, MAX_ANSWER)
                                : cli_error(cli, EIO, "Failed to reach lmk-store at %s: %s", cli->store,
                                            curl_easy_strerror(cr));
                free(b.data);
                return r;
        }
        if (csv && status == 200) {
                r = b.size > 0 && fwrite(b.data, 1, b.size, stdout) != b.size ? -errno : 0;
                free(b.data);
                if (r < 0 || fflush(stdout) != 0)
                        return cli_error(cli, r ?: EIO, "Failed to write the CSV to standard output: %s",
                                         strerror(r ? -r : errno));
                return 0;
        }
        if (b.data)
                o = json_tokener_parse(b.data);
        free(b.data);
        if (status != 200) {
                const char *msg = jstr(o, "error"), *field = jstr(o, "field");

                if (status == 401)
                        r = cli_error(cli, EACCES, "%s: %s (%s)", path, msg ?: "unauthorized",
                                      cli->token ? "check the token in --token-file or LMK_TOKEN_FILE" :
                                      "the store did not accept your MUNGE credential; admins give --token-file");
                else
                        r = cli_error(cli, status == 404 ? ENOENT : EIO, "%s: %s%s%s (HTTP %ld)", path,
                                      msg ?: "error", field ? ", field " : "", field ?: "", status);
                json_object_put(o);
                return r;
        }
        if (!o)
                return cli_error(cli, EBADMSG, "%s: the answer is not JSON.", url);
        *ret = o;
        return 0;
}

int cli_request(Cli *cli, const char *method, const char *path, const char *const *query, json_object *body,
                json_object **ret) {
        if (cli->csv)
                return cli_error(cli, EINVAL, "--csv is for the commands that list (jobs, job --functions, top, "
                                 "unused, scaling, apps, nodes, flagged); --json gives this one's whole answer.");
        return request(cli, method, path, query, body, false, ret);
}

int cli_get(Cli *cli, const char *path, const char *const *query, json_object **ret) {
        return cli_request(cli, "GET", path, query, NULL, ret);
}

void cli_print_json(json_object *o) {
        printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                                         JSON_C_TO_STRING_NOSLASHESCAPE));
}

int cli_get_list(Cli *cli, const char *path, const char *const *query, json_object **ret) {
        _cleanup_(json_object_putp) json_object *o = NULL;
        int r;

        if (cli->csv && cli->json)
                return cli_error(cli, EINVAL, "--csv and --json: choose one.");
        if (cli->csv)
                return request(cli, "GET", path, query, NULL, true, NULL);
        r = cli_get(cli, path, query, &o);
        if (r < 0)
                return r;
        if (cli->json) {
                cli_print_json(o);
                return 0;
        }
        *ret = TAKE_PTR(o);
        return 1;
}
