/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

/* Who leads which Slurm account: a project lead sees the jobs of the
 * accounts they lead. The site keeps the list in a file (lmk-store
 * --leads, default /etc/lmk/leads.conf), one account per line:
 *
 *     # account   leads (user names)
 *     chem        alice carol
 *     p123        bob
 *
 * Account and user names are Slurm's: 1-64 bytes of [A-Za-z0-9_.@+-]. At
 * most 100,000 lines and 1,000 leads per line. */

#define LEADS_NAME_MAX 64

typedef struct Leads Leads;

/* An empty list. NULL when out of memory. */
Leads *leads_new(void);
Leads *leads_free(Leads *l);

/* Parses text; on a bad line returns -EINVAL and a message naming it in
 * *ret_error (to free). */
int leads_parse(const char *text, size_t len, Leads **ret, char **ret_error);
int leads_load_file(const char *path, Leads **ret, char **ret_error);

/* The accounts user leads, as a NULL-terminated array that lives as long
 * as l (NULL when none). */
const char *const *leads_accounts_of(const Leads *l, const char *user, size_t *ret_n);
