/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* How lmk shows a function's symbol, as `perf report` users read them: C++
 * names demangled ("ns::Class::method(int) const"), gfortran's module
 * procedures ("__solver_MOD_step") as "solver::step", anything else as it
 * is. What comes out is UTF-8 without control characters (an ill-formed
 * byte becomes U+FFFD, a control character '?'), at most SYMNAME_MAX
 * bytes: a longer name is cut at a character boundary and ends in "...".
 * So it goes into a batch's JSON and a terminal as it is. */

#define SYMNAME_MAX 1024
/* Longer mangled names are not demangled: the demangler's stack and time
 * grow with the name, and a symbol string table is outside input. */
#define SYMNAME_MANGLED_MAX 4096

/* raw: the symbol's n bytes (no NUL needed); cut: the string table's
 * string went on past what was read, so it is shown as read, never
 * demangled. Writes the shown name, NUL-terminated, to out; returns its
 * length, or -ENOMEM. */
int symname_show(const char *raw, size_t n, bool cut, char out[static SYMNAME_MAX + 1]);
