/* SPDX-License-Identifier: GPL-2.0-or-later */
#pragma once

/* Shared by the inventory's sources (the files of collectors/inventory/)
 * and reached by the unit tests and fuzz targets; not for other callers. */

#include <stdbool.h>
#include <stddef.h>
#include <limits.h>
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

/* inventory.c: a scan's start, its end (packages sorted, the digest
 * taken) and what is left to free either way; scan.c runs them. */
int scan_start(Scan *s, Inventory *inv);
int scan_finish(Scan *s);
void scan_done(Scan *s);

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
int inventory_scan_rpm(Scan *s, const char *dbpath, bool configured);
int inventory_scan_modules(Scan *s, const char *root, bool configured);

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

/* Cuts data into lines (fed in pieces of any size) for func; a line longer
 * than DPKG_LINE_MAX keeps its start and is flagged cut. The last line
 * without a newline stays buffered in l. */
typedef int (*inventory_line_func)(void *userdata, const char *line, size_t n, bool cut);
int inventory_lines_feed(DpkgLines *l, const char *data, size_t n, inventory_line_func func, void *userdata);

/* A path a package database lists as the package's (dpkg's .list, RPM's
 * FILENAMES): claimed for package p when it is a library or an executable
 * in a bin folder, by its real path (a symlink for the file it names).
 * cache remembers the last folder resolved: databases list files folder
 * by folder. */
typedef struct ListedDir {
        char dir[PATH_MAX];
        char real_dir[PATH_MAX];
} ListedDir;

int inventory_claim_listed(Scan *s, size_t p, const char *path, size_t n, ListedDir *cache);

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

/* Spack before 0.17: .spack/spec.yaml, of which only the prefix's own node
 * is read (its name, version and hash; the first node, or the one whose
 * hash is hash_hint). A strict reader of the subset Spack writes, not of
 * YAML: anything else makes it refuse with a reason. */
int spack_spec_yaml_parse(const char *text, size_t n, const char *hash_hint, SpackSpec *ret, const char **ret_why);

/* The output of rpm -qa with RPM_QUERY_FORMAT, fed in pieces of any size:
 * a package line, then one line per file. Packages and files that are not
 * what rpm writes are counted and left out. */
#define RPM_NAME_MAX 128
#define RPM_VERSION_MAX 256
#define RPM_ARCH_MAX 64
#define RPM_QUERY_FORMAT \
        "P\t%{NAME}\t%|EPOCH?{%{EPOCH}:}:{}|%{VERSION}-%{RELEASE}\t%{ARCH}\t%{LONGSIZE}\n" \
        "[F\t%{FILEMODES:octal}\t%{FILENAMES}\n]"

typedef struct RpmEntry {
        const char *name;
        const char *version;    /* [EPOCH:]VERSION-RELEASE */
        const char *arch;
        uint64_t size;          /* bytes */
} RpmEntry;

typedef int (*rpm_package_func)(const RpmEntry *e, void *userdata);
/* A file of the last package handed out: its mode (st_mode bits) and path. */
typedef int (*rpm_file_func)(unsigned mode, const char *path, size_t n, void *userdata);

typedef struct RpmQuery {
        DpkgLines lines;
        rpm_package_func package;
        rpm_file_func file;
        void *userdata;
        bool in_package;        /* the files that follow are a good package's */
        size_t packages, files, malformed, pseudo;
        const char *first_bad;  /* static text */
        uint64_t first_bad_line;
        bool truncated;         /* the output ended inside a line */
} RpmQuery;

void rpm_query_init(RpmQuery *q, rpm_package_func package, rpm_file_func file, void *userdata);
int rpm_query_feed(RpmQuery *q, const char *data, size_t n);
int rpm_query_finish(RpmQuery *q);

/* A modulefile (Tcl, or Lua for Lmod's .lua files): the folders it puts
 * in PATH, LD_LIBRARY_PATH or LIBRARY_PATH and the values of *_ROOT,
 * *_HOME, *_DIR, *_PREFIX it sets, as absolute paths, from literal text
 * and simple variables only (Tcl set, Lua local, "..", pathJoin, and
 * Lmod's myModuleName(), myModuleVersion(), myModuleFullName() from the
 * module's name and version). Nothing is run; a value using anything
 * else is left out and counted. */
#define MODULEFILE_MAX (1U << 20)
#define MODULE_PATHS_MAX 16
#define MODULE_VARS_MAX 32

typedef enum ModulePathKind {
        MODULE_PATH_DIR,        /* a bin or lib folder (PATH, LD_LIBRARY_PATH, LIBRARY_PATH) */
        MODULE_PATH_ROOT,       /* an install prefix (*_ROOT, *_HOME, *_DIR, *_PREFIX) */
} ModulePathKind;

typedef struct ModuleInfo {
        char *paths[MODULE_PATHS_MAX];
        ModulePathKind kinds[MODULE_PATHS_MAX];
        size_t n_paths;
        size_t unresolved;      /* values that used what is not read here */
        size_t lines_cut;       /* lines longer than DPKG_LINE_MAX, not read */
} ModuleInfo;

int modulefile_parse(const char *text, size_t n, bool lua, const char *name, const char *version, ModuleInfo *ret);
void module_info_done(ModuleInfo *m);
