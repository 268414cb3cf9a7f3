// SPDX-License-Identifier: GPL-2.0-or-later

// Compiled by test-header.py as C++98, C++11 and C++17 with -pedantic
// -Werror: the C API and the scoped guard, as a C++ program uses them.

#include <lmk.h>

int header_use(lmk_site *handle);

static int scoped()
{
        LMK_SCOPE("scoped");
        LMK_SCOPE("scoped-inner");
        return static_cast<int>(lmk_tls.depth);
}

int header_use(lmk_site *handle)
{
        LMK_BEGIN("outer");
        int depth = scoped();
        LMK_END("outer");

        if (lmk_site_register(handle, "handle", 6, "header-cxx.cpp") < 0)
                return -1;
        lmk_site_begin(handle);
        lmk_site_end(handle);
        return depth + lmk_region_state("outer") + static_cast<int>(lmk_abi.n_regions);
}
