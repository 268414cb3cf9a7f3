/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "macro.h"

/* The software installed on a node, and which of its files are executables
 * and shared libraries: Debian and RPM packages, Spack and EasyBuild install
 * prefixes, plain /opt trees and environment-module trees. lmkd scans once
 * in a while (it reads a few thousand small files) and reports the result
 * when its digest changed; the store maps the real paths of sampled objects
 * to packages with it and lists installed software nobody used.
 * docs/inventory.md describes the sources, the rules and the JSON.
 *
 * Everything read is untrusted (a Spack prefix or a directory in /opt may
 * belong to a user, a modulefile to whoever installs software): reads are
 * bounded, directories are opened without following symlinks, modulefiles
 * are read and never run, nothing is written (rpm, run to read an RPM
 * database, takes its database's lock as for any query). */

typedef enum InventoryManager {
        INVENTORY_DEBIAN,
        INVENTORY_SPACK,
        INVENTORY_EASYBUILD,
        INVENTORY_OPT,
        INVENTORY_RPM,
        INVENTORY_MODULE,
        _INVENTORY_MANAGER_MAX,
} InventoryManager;

/* Beyond these the scan stops adding and says so in the problems. */
#define INVENTORY_PACKAGES_MAX 100000
#define INVENTORY_FILES_MAX 1000000             /* ELF files, all packages together */
#define INVENTORY_PACKAGE_FILES_MAX 100000      /* ELF files of one package */
#define INVENTORY_PROBLEMS_MAX 64

typedef struct InventoryPackage {
        InventoryManager manager;
        char *name;
        char *version;          /* "" when the source does not tell */
        char *arch;             /* Debian's Architecture or RPM's ARCH, else NULL */
        char *hash;             /* Spack's DAG hash, else NULL */
        char *prefix;           /* install prefix (real path), NULL for Debian and RPM */
        uint64_t size;          /* bytes on disk: Debian's Installed-Size, RPM's
                                 * SIZE, else
                                 * st_blocks of the prefix's regular files */
        char **files;           /* real paths of its ELF executables and shared
                                 * libraries, sorted (strcmp) */
        size_t n_files;
        size_t files_left_out;  /* beyond INVENTORY_PACKAGE_FILES_MAX */
} InventoryPackage;

typedef struct InventoryStats {
        size_t packages_seen[_INVENTORY_MANAGER_MAX];   /* before dropping those without ELF files */
        size_t candidates;      /* file names that looked like a library or executable */
        size_t elf_checks;      /* files whose first bytes were read */
        size_t entries;         /* directory entries walked in prefixes */
} InventoryStats;

typedef struct Inventory {
        InventoryPackage *packages;     /* sorted by manager, name, version, arch, prefix */
        size_t n_packages;
        size_t n_files;
        /* SHA-256 of the packages as reported (inventory_to_json() without
         * the digest itself), hex: changes exactly when the report does. */
        char digest[65];
        /* What could not be read or was left out, one sentence each, naming
         * the file; at most INVENTORY_PROBLEMS_MAX, the rest counted. Not in
         * the digest. */
        char **problems;
        size_t n_problems;
        size_t problems_left_out;
        InventoryStats stats;
} Inventory;

/* Where each source looks: a NULL-terminated list of roots per manager.
 *   debian     dpkg's admin directories (status, info/PACKAGE.list)
 *   spack      install trees (prefixes up to 5 levels below, each with .spack/spec.json)
 *   easybuild  installpaths (ROOT/software/NAME/VERSION/easybuild/)
 *   opt        folders holding NAME[-VERSION]/ or NAME/VERSION/ trees
 *   rpm        RPM database folders (ROOT/var/lib/rpm: files are below ROOT)
 *   module     modulefile trees (Tcl and Lua; NAME/VERSION[.lua])
 * NULL takes inventory_default_roots(); an empty list turns a source off.
 * A default root that does not exist is skipped quietly, a configured one
 * is named in the problems. */
typedef struct InventoryOptions {
        const char *const *roots[_INVENTORY_MANAGER_MAX];
} InventoryOptions;

const char *const *inventory_default_roots(InventoryManager m);
const char *inventory_manager_to_string(InventoryManager m);
/* -EINVAL for a name that is none of debian, spack, easybuild, opt, rpm, module. */
int inventory_manager_from_string(const char *s);

/* Scans the sources (o NULL: all defaults). Problems with one source or
 * file are noted in the result and the scan goes on; only running out of
 * memory fails it (-ENOMEM). */
int inventory_scan(const InventoryOptions *o, Inventory **ret);
Inventory *inventory_free(Inventory *inv);
DEFINE_TRIVIAL_CLEANUP_FUNC(Inventory *, inventory_free);

/* The package a real path belongs to, or NULL. */
const InventoryPackage *inventory_find_file(const Inventory *inv, const char *path);

/* The report (docs/inventory.md) as JSON text, NUL-terminated; every
 * string is well-formed UTF-8 (ill-formed bytes become U+FFFD, as lmkd
 * writes object paths). -ENOMEM. */
int inventory_to_json(const Inventory *inv, char **ret, size_t *ret_size);
