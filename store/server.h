/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include "api/api.h"

/* The running store: its state (Server, api/api.h) brought up and down, and
 * what SIGHUP replaces in it. The order: server_init(), then the
 * configuration, tokens, leads, findings and storage into s, then
 * server_start(); server_stop() in the end, started or not. */

void server_init(Server *s);
/* Seeds the nodes' health from the database and serves the routes
 * (routes.c) as config says. */
int server_start(Server *s, const HttpConfig *config);
/* Stops serving, waiting up to timeout_s for requests in flight, and frees
 * what s holds but its storage. */
void server_stop(Server *s, unsigned timeout_s);
uint16_t server_port(Server *s);
/* Replaces the findings' rules and families (SIGHUP); takes ownership. */
void server_set_findings(Server *s, FindingsConfig *findings, LibFamilies *families);
