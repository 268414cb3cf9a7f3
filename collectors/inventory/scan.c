/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The scan: every source in its order, over its configured or default
 * roots, into one inventory (inventory.c keeps what they find). */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

/* Spack's default install_tree root below its checkout in /opt/spack, and
 * EasyBuild installpaths sites commonly use; sites set theirs. */
static const char *const default_debian[] = { "/var/lib/dpkg", NULL };
static const char *const default_spack[] = { "/opt/spack/opt/spack", NULL };
static const char *const default_easybuild[] = { "/opt/easybuild", "/apps/easybuild", NULL };
static const char *const default_opt[] = { "/opt", NULL };
/* RHEL 9 and SUSE keep rpm's database in /usr/lib/sysimage/rpm, with
 * /var/lib/rpm a symlink to it: the one real path is read once. */
static const char *const default_rpm[] = { "/var/lib/rpm", NULL };
/* Environment Modules' and Lmod's usual module paths (RHEL's
 * /etc/modulefiles and /usr/share/modulefiles, Debian's
 * /usr/share/modules/modulefiles) and common site ones. */
static const char *const default_module[] = { "/etc/modulefiles", "/usr/share/modulefiles",
                                              "/usr/share/modules/modulefiles", "/opt/modulefiles",
                                              "/apps/modulefiles", "/opt/apps/modulefiles", NULL };

const char *const *inventory_default_roots(InventoryManager m) {
        switch (m) {
        case INVENTORY_DEBIAN:
                return default_debian;
        case INVENTORY_SPACK:
                return default_spack;
        case INVENTORY_EASYBUILD:
                return default_easybuild;
        case INVENTORY_OPT:
                return default_opt;
        case INVENTORY_RPM:
                return default_rpm;
        case INVENTORY_MODULE:
                return default_module;
        default:
                return NULL;
        }
}

typedef int (*source_func)(Scan *s, const char *root, bool configured);

static const source_func sources[_INVENTORY_MANAGER_MAX] = {
        [INVENTORY_DEBIAN] = inventory_scan_dpkg,
        [INVENTORY_SPACK] = inventory_scan_spack,
        [INVENTORY_EASYBUILD] = inventory_scan_easybuild,
        [INVENTORY_OPT] = inventory_scan_opt,
        [INVENTORY_RPM] = inventory_scan_rpm,
        [INVENTORY_MODULE] = inventory_scan_modules,
};

/* Who keeps a file both have: the system's package managers first (a file
 * dpkg or rpm knows is theirs, even when a prefix links to it), then the
 * install prefixes, and modules last (a module points at software some
 * other way installed). */
static const InventoryManager scan_order[] = {
        INVENTORY_DEBIAN, INVENTORY_RPM, INVENTORY_SPACK, INVENTORY_EASYBUILD, INVENTORY_OPT, INVENTORY_MODULE,
};
_Static_assert(ELEMENTSOF(scan_order) == _INVENTORY_MANAGER_MAX, "every source in the order");

int inventory_scan(const InventoryOptions *o, Inventory **ret) {
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        Scan s;
        int r;

        inv = calloc(1, sizeof(*inv));
        if (!inv)
                return -ENOMEM;
        r = scan_start(&s, inv);
        if (r < 0)
                return r;

        for (size_t i = 0; i < ELEMENTSOF(scan_order) && r >= 0; i++) {
                InventoryManager m = scan_order[i];
                const char *const *roots = o ? o->roots[m] : NULL;
                bool configured = roots != NULL;

                for (const char *const *root = roots ?: inventory_default_roots(m); *root; root++) {
                        r = sources[m](&s, *root, configured);
                        if (r < 0 && r != -ENOSPC)
                                break;
                        r = 0;
                }
        }
        if (r >= 0)
                r = scan_finish(&s);
        scan_done(&s);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(inv);
        return 0;
}
