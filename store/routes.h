/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stddef.h>

#include "http/http.h"

/* What lmk-store answers, and to whom (routes.c). */
extern const Route store_routes[];
extern const size_t store_n_routes;
