/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* USDT probes of provider "lmk" (docs/liblmk-abi.md). An unattached probe
 * is a nop in the slow paths that fire it; lmkd attaches by library path. */

#include <sys/sdt.h>

#define LMK_PROBE_INIT(pid, abi, tls_offset) STAP_PROBE3(lmk, init, pid, abi, tls_offset)
#define LMK_PROBE_REGION(id, name, where) STAP_PROBE3(lmk, region, id, name, where)
#define LMK_PROBE_REGION_OFF(id, reason) STAP_PROBE2(lmk, region_off, id, reason)
