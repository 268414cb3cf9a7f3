/* SPDX-License-Identifier: GPL-2.0-or-later */
/* lmk-inventory: the software inventory lmkd reports, printed for an admin
 * (and for the tests): which packages it finds, with how many ELF files,
 * and what it could not read. docs/inventory.md. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "inventory/inventory.h"
#include "log.h"
#include "util.h"

#define ROOTS_MAX 64

static void help(void) {
        printf("Usage: lmk-inventory [OPTIONS]\n"
               "Prints the software installed on this node as lmkd reports it.\n\n"
               "  --debian DIRS     dpkg admin directories (default /var/lib/dpkg)\n"
               "  --spack DIRS      Spack install trees (default /opt/spack/opt/spack)\n"
               "  --easybuild DIRS  EasyBuild installpaths (default /opt/easybuild,/apps/easybuild)\n"
               "  --opt DIRS        folders of NAME[-VERSION] trees (default /opt)\n"
               "  --rpm DIRS        RPM databases (default /var/lib/rpm; ROOT/var/lib/rpm:\n"
               "                    the files are below ROOT)\n"
               "  --module DIRS     modulefile trees (default /etc/modulefiles,\n"
               "                    /usr/share/modulefiles, /usr/share/modules/modulefiles,\n"
               "                    /opt/modulefiles, /apps/modulefiles, /opt/apps/modulefiles)\n"
               "                    DIRS: comma-separated; \"none\" turns a source off\n"
               "  --json            the report as lmkd would send it\n"
               "  --files           list each package's files\n"
               "  --owner PATH      the package PATH (resolved) belongs to\n"
               "  --stats           time, memory and counts on stderr\n"
               "  -h, --help\n");
}

/* A comma-separated list into a NULL-terminated array pointing into s. */
static int split_roots(char *s, const char **v) {
        size_t n = 0;

        if (streq(s, "none")) {
                v[0] = NULL;
                return 0;
        }
        for (char *p = strtok(s, ","); p; p = strtok(NULL, ",")) {
                if (n + 1 >= ROOTS_MAX || p[0] != '/')
                        return -EINVAL;
                v[n++] = p;
        }
        v[n] = NULL;
        return n > 0 ? 0 : -EINVAL;
}

static void print_package(const InventoryPackage *p, bool files) {
        printf("%-9s %-40s %-24s %6zu files %10.1f MiB%s%s\n", inventory_manager_to_string(p->manager),
               p->name, p->version[0] ? p->version : "-", p->n_files, (double) p->size / (1 << 20),
               p->prefix ? "  " : "", p->prefix ?: "");
        if (files)
                for (size_t i = 0; i < p->n_files; i++)
                        printf("        %s\n", p->files[i]);
}

int main(int argc, char **argv) {
        static const struct option options[] = {
                { "debian", required_argument, NULL, 'd' },
                { "spack", required_argument, NULL, 's' },
                { "easybuild", required_argument, NULL, 'e' },
                { "opt", required_argument, NULL, 'o' },
                { "rpm", required_argument, NULL, 'r' },
                { "module", required_argument, NULL, 'm' },
                { "json", no_argument, NULL, 'j' },
                { "files", no_argument, NULL, 'f' },
                { "owner", required_argument, NULL, 'w' },
                { "stats", no_argument, NULL, 'S' },
                { "help", no_argument, NULL, 'h' },
                {}
        };
        static const char *roots[_INVENTORY_MANAGER_MAX][ROOTS_MAX];
        _cleanup_(inventory_freep) Inventory *inv = NULL;
        InventoryOptions o = {};
        bool json = false, files = false, stats = false;
        const char *owner = NULL;
        struct timespec t0, t1;
        struct rusage ru;
        int c, r;

        log_setup("lmk-inventory");
        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0) {
                InventoryManager m;

                switch (c) {
                case 'd':
                case 's':
                case 'e':
                case 'o':
                case 'r':
                case 'm':
                        m = c == 'd' ? INVENTORY_DEBIAN : c == 's' ? INVENTORY_SPACK
                                : c == 'e' ? INVENTORY_EASYBUILD : c == 'o' ? INVENTORY_OPT
                                : c == 'r' ? INVENTORY_RPM : INVENTORY_MODULE;
                        if (split_roots(optarg, roots[m]) < 0) {
                                log_error("--%s wants absolute paths separated by commas, or none.",
                                          inventory_manager_to_string(m));
                                return EXIT_FAILURE;
                        }
                        o.roots[m] = roots[m];
                        break;
                case 'j':
                        json = true;
                        break;
                case 'f':
                        files = true;
                        break;
                case 'w':
                        owner = optarg;
                        break;
                case 'S':
                        stats = true;
                        break;
                case 'h':
                        help();
                        return EXIT_SUCCESS;
                default:
                        return EXIT_FAILURE;
                }
        }
        if (optind < argc) {
                log_error("Unexpected argument '%s'.", argv[optind]);
                return EXIT_FAILURE;
        }

        clock_gettime(CLOCK_MONOTONIC, &t0);
        r = inventory_scan(&o, &inv);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        if (r < 0) {
                log_error_errno(r, "Failed to take the inventory: %m");
                return EXIT_FAILURE;
        }
        for (size_t i = 0; i < inv->n_problems; i++)
                log_warning("%s", inv->problems[i]);
        if (inv->problems_left_out > 0)
                log_warning("%zu more problems.", inv->problems_left_out);

        if (owner) {
                char real[PATH_MAX];
                const InventoryPackage *p;

                if (!realpath(owner, real)) {
                        log_error_errno(-errno, "Cannot resolve %s: %m", owner);
                        return EXIT_FAILURE;
                }
                p = inventory_find_file(inv, real);
                if (!p) {
                        printf("%s: in no package\n", real);
                        return 2;
                }
                printf("%s: %s %s %s\n", real, inventory_manager_to_string(p->manager), p->name, p->version);
        } else if (json) {
                _cleanup_free_ char *text = NULL;

                r = inventory_to_json(inv, &text, NULL);
                if (r < 0) {
                        log_error_errno(r, "Failed to write the report: %m");
                        return EXIT_FAILURE;
                }
                puts(text);
        } else
                for (size_t i = 0; i < inv->n_packages; i++)
                        print_package(&inv->packages[i], files);

        if (stats) {
                size_t seen = 0;

                for (unsigned m = 0; m < _INVENTORY_MANAGER_MAX; m++)
                        seen += inv->stats.packages_seen[m];
                (void) getrusage(RUSAGE_SELF, &ru);
                fprintf(stderr,
                        "scan: %.3f s, peak RSS %ld KiB; %zu packages seen, %zu with ELF files "
                        "(debian %zu, spack %zu, easybuild %zu, opt %zu, rpm %zu, module %zu seen), %zu ELF files; "
                        "%zu candidates, %zu files opened, %zu prefix entries; digest %s\n",
                        (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9,
                        ru.ru_maxrss, seen, inv->n_packages, inv->stats.packages_seen[INVENTORY_DEBIAN],
                        inv->stats.packages_seen[INVENTORY_SPACK], inv->stats.packages_seen[INVENTORY_EASYBUILD],
                        inv->stats.packages_seen[INVENTORY_OPT], inv->stats.packages_seen[INVENTORY_RPM],
                        inv->stats.packages_seen[INVENTORY_MODULE], inv->n_files, inv->stats.candidates,
                        inv->stats.elf_checks, inv->stats.entries, inv->digest);
        }
        return EXIT_SUCCESS;
}
