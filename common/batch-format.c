/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <string.h>

#include "batch-format.h"

static const char *const code_kinds[_CODE_KIND_MAX] = {
        [CODE_EXE] = "exe",
        [CODE_LIB] = "lib",
        [CODE_KERNEL] = "kernel",
        [CODE_IDLE] = "idle",
        [CODE_ANON] = "anon",
        [CODE_UNKNOWN] = "unknown",
};

const char *code_kind_to_string(CodeKind k) {
        return (int) k >= 0 && k < _CODE_KIND_MAX ? code_kinds[k] : NULL;
}

int code_kind_from_string(const char *s) {
        for (int i = 0; i < _CODE_KIND_MAX; i++)
                if (strcmp(code_kinds[i], s) == 0)
                        return i;
        return -EINVAL;
}
