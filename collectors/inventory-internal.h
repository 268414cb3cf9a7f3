/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Shared by the inventory's sources (inventory-*.c) and reached by the unit
 * tests and fuzz targets; not for other callers. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "hashmap.h"
#include "inventory.h"

/* The scan in progress: packages as found, and which package each real
 * path belongs to. */
typedef struct Scan {
        Inventory *inv;                 /* problems and stats go here */
        InventoryPackage *packages;
        size_t n_packages, alloc_packages;
        Hashmap *claims;                /* real path → Claim */
        bool packages_full, files_full; /* said once */
} Scan;

int scan_problem(Scan *s, const char *format, ...) _printf_(2, 3);

/* Adds a package; its index goes to ret_index. Strings are copied (NULL
 * stays NULL). -ENOSPC beyond INVENTORY_PACKAGES_MAX (noted once). */
int scan_add_package(Scan *s, InventoryManager m, const char *name, const char *version,
                     const char *arch, const char *hash, const char *prefix, uint64_t size,
                     size_t *ret_index);

/* A file of package p: path is how the package names it, real its real
 * path. A file that is itself regular (direct) belongs to the first package
 * that has it so; a symlink's target goes to that package too, and only to
 * the symlink's package when no package has the file itself. The ELF check
 * runs once per real path. Returns 1 when the file counts for p (so far),
 * 0 when it is another package's, no ELF file or cannot be read, -ENOMEM. */
int scan_claim(Scan *s, size_t p, const char *real, bool direct);
/* The same for a regular file in an open folder (direct), opened by name
 * so that nothing on the way can be swapped for a symlink. */
int scan_claim_at(Scan *s, size_t p, const char *real, int dir_fd, const char *name);

/* Whether a file looks like what the inventory keeps, from its name: a
 * shared library (NAME.so, NAME.so.1.2) anywhere, or an executable (mode
 * has an x bit) in a bin, sbin or libexec folder. dir is the folder part
 * of the path as the package names it. */
bool inventory_name_is_library(const char *name);
bool inventory_dir_is_bin(const char *dir);

/* Real paths the inventory never opens: a symlink into them names no
 * installed file, and reading some (/proc/kmsg) has side effects. */
bool inventory_path_is_special(const char *real);

/* Walks a prefix (an open directory, its real path): adds the blocks of
 * its regular files to the package's size, and claims the ELF files below
 * its lib, lib64, bin, sbin and libexec folders. Takes dir_fd. */
int inventory_walk_prefix(Scan *s, size_t p, int dir_fd, const char *real);

/* Opens a folder below dir_fd without following a symlink: -ELOOP/-ENOTDIR
 * when it is none. */
int inventory_open_dir(int dir_fd, const char *name);
bool inventory_has_dir(int dir_fd, const char *name);

/* Opens a source's root (a symlink the site set up is followed here, and
 * nowhere below): its real path goes to ret_real (PATH_MAX bytes). A root
 * that cannot be opened is a problem only when configured or when it
 * exists; *ret_fd is -EBADF then. */
int inventory_open_root(Scan *s, InventoryManager m, const char *root, bool configured,
                        char *ret_real, int *ret_fd);

/* A folder's name used as a package's name or version: no control
 * characters, not hidden. */
bool inventory_dir_name_is_usable(const char *name);

int inventory_scan_dpkg(Scan *s, const char *admindir, bool configured);
int inventory_scan_spack(Scan *s, const char *root, bool configured);
int inventory_scan_easybuild(Scan *s, const char *root, bool configured);
int inventory_scan_opt(Scan *s, const char *root, bool configured);

/* dpkg's status file, fed in pieces of any size. Every entry of an
 * installed package (Status: * ok installed) with a valid Package, Version
 * and Architecture reaches the callback; a callback's negative return
 * stops the parse and is returned. Entries with fields dpkg would not
 * write are counted and left out. */
#define DPKG_NAME_MAX 128
#define DPKG_VERSION_MAX 256
#define DPKG_ARCH_MAX 64
#define DPKG_LINE_MAX 4096      /* longer lines are cut; only a field we read must fit */

typedef struct DpkgEntry {
        const char *package;
        const char *version;
        const char *arch;
        uint64_t installed_size;        /* bytes; 0 when not given */
} DpkgEntry;

typedef int (*dpkg_entry_func)(const DpkgEntry *e, void *userdata);

typedef struct DpkgLines {
        char buf[DPKG_LINE_MAX + 1];
        size_t n;
        bool cut;               /* the line was longer than buf */
        uint64_t line;          /* lines seen, for messages */
} DpkgLines;

typedef struct DpkgStatus {
        DpkgLines lines;
        dpkg_entry_func func;
        void *userdata;
        /* the entry being read */
        char package[DPKG_NAME_MAX + 1];
        char version[DPKG_VERSION_MAX + 1];
        char arch[DPKG_ARCH_MAX + 1];
        char status[64];
        char size[24];
        unsigned seen;          /* fields of the entry seen, bits */
        bool last_ours;         /* the last field was one of those read */
        const char *bad;        /* why the entry is left out, NULL: fine so far */
        uint64_t entry_line;    /* where it started */
        /* results */
        size_t entries, installed, malformed;
        const char *first_bad;  /* static text */
        uint64_t first_bad_line;
        bool truncated;         /* the input ended inside a line of an entry */
} DpkgStatus;

void dpkg_status_init(DpkgStatus *p, dpkg_entry_func func, void *userdata);
int dpkg_status_feed(DpkgStatus *p, const char *data, size_t n);
/* The end of the input: an entry that ended with a whole line counts; one
 * cut inside a line is dropped and truncated set. */
int dpkg_status_finish(DpkgStatus *p);

bool dpkg_name_is_valid(const char *s);
bool dpkg_version_is_valid(const char *s);
bool dpkg_arch_is_valid(const char *s);

/* Spack's .spack/spec.json: name, version and DAG hash of the prefix's own
 * node (the one whose hash ends the prefix's name, else the first, which
 * Spack writes first). On failure *ret_why says what is wrong. */
#define SPACK_SPEC_MAX (8U << 20)
#define SPACK_NAME_MAX 128
#define SPACK_VERSION_MAX 128
#define SPACK_HASH_MAX 64

typedef struct SpackSpec {
        char name[SPACK_NAME_MAX + 1];
        char version[SPACK_VERSION_MAX + 1];
        char hash[SPACK_HASH_MAX + 1];
} SpackSpec;

int spack_spec_parse(const char *text, size_t n, const char *hash_hint, SpackSpec *ret, const char **ret_why);
