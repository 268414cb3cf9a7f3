/* SPDX-License-Identifier: GPL-2.0-or-later */

/*
 * bench-likwid: nanoseconds per LIKWID_MARKER_START+STOP pair, printed as
 * "likwid NS active|inactive". LIKWID's markers measure only under
 * `likwid-perfctr -m`, which sets LIKWID_EVENTS; without it they return at
 * once, and the line says "inactive".
 */

#define LIKWID_PERFMON
#include <likwid-marker.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench-loop.h"

static void loop_likwid(uint64_t n) {
        for (uint64_t i = 0; i < n; i++) {
                LIKWID_MARKER_START("bench");
                LIKWID_MARKER_STOP("bench");
        }
}

int main(void) {
        double ns;

        LIKWID_MARKER_INIT;
        LIKWID_MARKER_REGISTER("bench");
        ns = bench_ns_per_iteration(loop_likwid);
        LIKWID_MARKER_CLOSE;
        printf("likwid %.3f %s\n", ns, getenv("LIKWID_EVENTS") ? "active" : "inactive");
        return 0;
}
