/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu-list.h"
#include "node-type.h"
#include "util.h"

/* A path under root, or -ENAMETOOLONG. */
static int under(const char *root, const char *path, char *buf, size_t size) {
        int n = snprintf(buf, size, "%s/%s", root, path);

        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

static void copy_text(char *dst, size_t size, const char *s, size_t len) {
        /* trimmed, and no control characters: the store takes none in identifiers */
        while (len > 0 && isspace((unsigned char) *s))
                s++, len--;
        while (len > 0 && isspace((unsigned char) s[len - 1]))
                len--;
        len = MIN(len, size - 1);
        for (size_t i = 0; i < len; i++)
                dst[i] = (unsigned char) s[i] < 0x20 || s[i] == 0x7f ? ' ' : s[i];
        /* a cut UTF-8 sequence becomes U+FFFD on the way out (json_text_new()) */
        dst[len] = '\0';
}

static const struct {
        unsigned implementer, part;
        const char *name;
} arm_parts[] = {
        { 0x41, 0xd03, "Arm Cortex-A53" },
        { 0x41, 0xd07, "Arm Cortex-A57" },
        { 0x41, 0xd08, "Arm Cortex-A72" },
        { 0x41, 0xd0c, "Arm Neoverse-N1" },
        { 0x41, 0xd40, "Arm Neoverse-V1" },
        { 0x41, 0xd49, "Arm Neoverse-N2" },
        { 0x41, 0xd4f, "Arm Neoverse-V2" },
        { 0x41, 0xd84, "Arm Neoverse-V3" },
        { 0x41, 0xd8e, "Arm Neoverse-N3" },
        { 0x42, 0x516, "Cavium ThunderX2" },
        { 0x43, 0x0af, "Cavium ThunderX2" },
        { 0x46, 0x001, "Fujitsu A64FX" },
        { 0x48, 0xd01, "HiSilicon Kunpeng 920" },
        { 0xc0, 0xac3, "AmpereOne" },
};

/* "key<tabs/spaces>: value": the value, or NULL when the line has another key. */
static const char *cpuinfo_value(const char *line, const char *key) {
        size_t n = strlen(key);

        if (strncmp(line, key, n) != 0)
                return NULL;
        line += n;
        line += strspn(line, " \t");
        if (*line != ':')
                return NULL;
        return line + 1 + strspn(line + 1, " \t");
}

static void read_cpu_model(const char *root, NodeType *t) {
        _cleanup_fclose_ FILE *f = NULL;
        char path[4096], line[1024], hardware[NODE_TYPE_TEXT_MAX] = "", power[NODE_TYPE_TEXT_MAX] = "";
        uint64_t implementer = UINT64_MAX, part = UINT64_MAX;
        size_t lines = 0;

        if (under(root, "proc/cpuinfo", path, sizeof(path)) < 0 || !(f = fopen(path, "re")))
                return;
        /* the first processor says it; a node with a thousand CPUs need not be read to the end */
        while (fgets(line, sizeof(line), f) && lines++ < 4096) {
                const char *v;
                char *end;

                if ((v = cpuinfo_value(line, "model name"))) {
                        copy_text(t->cpu_model, sizeof(t->cpu_model), v, strlen(v));
                        if (t->cpu_model[0])
                                return;
                } else if ((v = cpuinfo_value(line, "CPU implementer")) && implementer == UINT64_MAX) {
                        errno = 0;
                        implementer = strtoull(v, &end, 0);
                        if (errno != 0 || end == v)
                                implementer = UINT64_MAX;
                } else if ((v = cpuinfo_value(line, "CPU part")) && part == UINT64_MAX) {
                        errno = 0;
                        part = strtoull(v, &end, 0);
                        if (errno != 0 || end == v)
                                part = UINT64_MAX;
                } else if ((v = cpuinfo_value(line, "Hardware")))
                        copy_text(hardware, sizeof(hardware), v, strlen(v));
                else if ((v = cpuinfo_value(line, "cpu")) && !power[0])
                        copy_text(power, sizeof(power), v, strlen(v));
        }
        if (implementer != UINT64_MAX && part != UINT64_MAX) {
                for (size_t i = 0; i < ELEMENTSOF(arm_parts); i++)
                        if (arm_parts[i].implementer == implementer && arm_parts[i].part == part) {
                                snprintf(t->cpu_model, sizeof(t->cpu_model), "%s", arm_parts[i].name);
                                return;
                        }
                snprintf(t->cpu_model, sizeof(t->cpu_model), "Arm implementer 0x%02" PRIx64 " part 0x%03" PRIx64,
                         implementer & 0xff, part & 0xfff);
        } else if (hardware[0])
                snprintf(t->cpu_model, sizeof(t->cpu_model), "%s", hardware);
        else if (power[0])
                snprintf(t->cpu_model, sizeof(t->cpu_model), "%s", power);
}

static int read_u64(const char *root, const char *path, int base, uint64_t *ret) {
        _cleanup_free_ char *s = NULL;
        char p[4096];
        int r;

        r = under(root, path, p, sizeof(p));
        if (r < 0)
                return r;
        r = read_one_line(p, &s);
        if (r < 0)
                return r;
        return safe_atou64(s, base, ret);
}

typedef struct Core {
        uint64_t package, core;
} Core;

static int core_cmp(const void *a, const void *b) {
        const Core *x = a, *y = b;

        if (x->package != y->package)
                return CMP(x->package, y->package);
        return CMP(x->core, y->core);
}

/* Threads are the online CPUs; sockets and cores the distinct packages and
 * (package, core) pairs among them, where sysfs has the topology. */
static int read_topology(const char *root, NodeType *t) {
        /* Linux's NR_CPUS is at most 8192 on the distributions' kernels */
        enum { MAX_CPUS = 8192 };
        _cleanup_free_ char *online = NULL;
        _cleanup_free_ uint64_t *bits = NULL;
        _cleanup_free_ Core *cores = NULL;
        char path[4096];
        size_t n = 0;
        int r;

        if (under(root, "sys/devices/system/cpu/online", path, sizeof(path)) < 0 || read_one_line(path, &online) < 0)
                return 0;
        bits = calloc(MAX_CPUS / 64, sizeof(uint64_t));
        if (!bits)
                return -ENOMEM;
        r = cpu_list_parse(online, strlen(online), bits, MAX_CPUS);
        if (r <= 0)
                return 0;
        t->threads = (unsigned) r;
        cores = calloc((size_t) r, sizeof(Core));
        if (!cores)
                return -ENOMEM;
        for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
                char p[128];

                if (!(bits[cpu / 64] & (UINT64_C(1) << (cpu % 64))))
                        continue;
                snprintf(p, sizeof(p), "sys/devices/system/cpu/cpu%u/topology/physical_package_id", cpu);
                if (read_u64(root, p, 10, &cores[n].package) < 0)
                        return 0; /* no topology (some virtual machines): sockets and cores unknown */
                snprintf(p, sizeof(p), "sys/devices/system/cpu/cpu%u/topology/core_id", cpu);
                if (read_u64(root, p, 10, &cores[n].core) < 0)
                        return 0;
                n++;
        }
        if (n == 0)
                return 0;
        qsort(cores, n, sizeof(Core), core_cmp);
        t->sockets = t->cores = 1;
        for (size_t i = 1; i < n; i++) {
                if (cores[i].package != cores[i - 1].package)
                        t->sockets++;
                if (core_cmp(&cores[i], &cores[i - 1]) != 0)
                        t->cores++;
        }
        return 0;
}

static void read_memory(const char *root, NodeType *t) {
        _cleanup_fclose_ FILE *f = NULL;
        char path[4096], line[256];

        if (under(root, "proc/meminfo", path, sizeof(path)) < 0 || !(f = fopen(path, "re")))
                return;
        while (fgets(line, sizeof(line), f)) {
                const char *v = cpuinfo_value(line, "MemTotal");
                char *end;
                uint64_t kb;

                if (!v)
                        continue;
                errno = 0;
                kb = strtoull(v, &end, 10);
                if (errno == 0 && end != v && strncmp(end, " kB", 3) == 0 && kb < UINT64_MAX / 1024)
                        t->memory_bytes = kb * 1024;
                return;
        }
}

static const struct {
        uint16_t id;
        const char *name;
} gpu_vendors[] = {
        { 0x10de, "NVIDIA" },
        { 0x1002, "AMD" },
        { 0x8086, "Intel" },
};

static const char *gpu_vendor(uint64_t id) {
        for (size_t i = 0; i < ELEMENTSOF(gpu_vendors); i++)
                if (gpu_vendors[i].id == id)
                        return gpu_vendors[i].name;
        return NULL;
}

static void add_gpu(NodeType *t, uint16_t vendor_id, const char *vendor, uint16_t device_id, unsigned count) {
        for (size_t i = 0; i < t->n_gpus; i++)
                if (t->gpus[i].vendor_id == vendor_id && t->gpus[i].device_id == device_id) {
                        t->gpus[i].count += count;
                        return;
                }
        if (t->n_gpus == NODE_TYPE_MAX_GPUS) {
                t->n_gpus_other += count;
                return;
        }
        t->gpus[t->n_gpus++] = (NodeGpu) { .vendor_id = vendor_id, .device_id = device_id, .vendor = vendor,
                                           .count = count };
}

static int name_cmp(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* PCI display (0x03xx) controllers: VGA (0x0300), 3D (0x0302, NVIDIA's
 * data-centre GPUs) and "other" (0x0380, AMD Instinct, Intel Max), of the
 * GPU vendors only. */
static int read_pci_gpus(const char *root, NodeType *t) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_free_ char **names = NULL;
        size_t n = 0, alloc = 0;
        char path[4096];
        struct dirent *de;

        if (under(root, "sys/bus/pci/devices", path, sizeof(path)) < 0 || !(d = opendir(path)))
                return 0;
        /* in PCI address order, so that the order of models does not depend on readdir */
        while ((de = readdir(d)) && n < 65536) {
                if (de->d_name[0] == '.')
                        continue;
                if (n == alloc) {
                        char **nn = reallocarray(names, alloc = alloc ? alloc * 2 : 64, sizeof(char *));

                        if (!nn)
                                goto oom;
                        names = nn;
                }
                if (!(names[n] = strdup(de->d_name)))
                        goto oom;
                n++;
        }
        qsort(names, n, sizeof(char *), name_cmp);
        for (size_t i = 0; i < n; i++) {
                uint64_t class, vendor, device;
                const char *v;
                char p[512];

                snprintf(p, sizeof(p), "sys/bus/pci/devices/%.256s/class", names[i]);
                if (read_u64(root, p, 16, &class) < 0)
                        continue;
                class >>= 8;
                if (class != 0x0300 && class != 0x0302 && class != 0x0380)
                        continue;
                snprintf(p, sizeof(p), "sys/bus/pci/devices/%.256s/vendor", names[i]);
                if (read_u64(root, p, 16, &vendor) < 0 || !(v = gpu_vendor(vendor)))
                        continue;
                snprintf(p, sizeof(p), "sys/bus/pci/devices/%.256s/device", names[i]);
                if (read_u64(root, p, 16, &device) < 0 || device > 0xffff)
                        continue;
                add_gpu(t, (uint16_t) vendor, v, (uint16_t) device, 1);
        }
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        return 0;
oom:
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        return -ENOMEM;
}

/* Where sysfs shows no NVIDIA GPU (a container without /sys/bus/pci), the
 * driver's /dev/nvidiaN still says how many there are. */
static void read_nvidia_devices(const char *root, NodeType *t) {
        _cleanup_(closedirp) DIR *d = NULL;
        struct dirent *de;
        char path[4096];
        unsigned count = 0;

        for (size_t i = 0; i < t->n_gpus; i++)
                if (t->gpus[i].vendor_id == 0x10de)
                        return;
        if (under(root, "dev", path, sizeof(path)) < 0 || !(d = opendir(path)))
                return;
        while ((de = readdir(d)))
                if (strncmp(de->d_name, "nvidia", 6) == 0 && de->d_name[6] &&
                    strspn(de->d_name + 6, "0123456789") == strlen(de->d_name + 6))
                        count++;
        if (count > 0)
                add_gpu(t, 0x10de, "NVIDIA", 0, count);
}

/* Model names from pci.ids (Debian's pci.ids package, hwdata): a vendor
 * line "10de  NVIDIA Corporation", its devices below with one tab. */
static void read_pci_names(const char *root, NodeType *t) {
        static const char *const files[] = { "usr/share/misc/pci.ids", "usr/share/hwdata/pci.ids",
                                             "usr/share/pci.ids" };
        _cleanup_fclose_ FILE *f = NULL;
        char path[4096], line[512];
        uint64_t vendor = UINT64_MAX;

        if (t->n_gpus == 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(files) && !f; i++)
                if (under(root, files[i], path, sizeof(path)) == 0)
                        f = fopen(path, "re");
        if (!f)
                return;
        while (fgets(line, sizeof(line), f)) {
                unsigned id;
                int off = 0;

                if (line[0] == 'C' && line[1] == ' ')
                        break; /* the device classes follow the vendors */
                if (isxdigit((unsigned char) line[0])) {
                        vendor = sscanf(line, "%4x %n", &id, &off) == 1 && off == 6 ? id : UINT64_MAX;
                        continue;
                }
                if (line[0] != '\t' || line[1] == '\t' || vendor == UINT64_MAX)
                        continue;
                if (sscanf(line + 1, "%4x %n", &id, &off) != 1 || off != 6)
                        continue;
                for (size_t i = 0; i < t->n_gpus; i++)
                        if (t->gpus[i].vendor_id == vendor && t->gpus[i].device_id == id && t->gpus[i].device_id)
                                copy_text(t->gpus[i].name, sizeof(t->gpus[i].name), line + 7, strlen(line + 7));
        }
}

static void read_kernel(const char *root, NodeType *t) {
        _cleanup_free_ char *s = NULL;
        char path[4096];

        if (under(root, "proc/sys/kernel/osrelease", path, sizeof(path)) == 0 && read_one_line(path, &s) == 0)
                copy_text(t->kernel, sizeof(t->kernel), s, strlen(s));
}

int node_type_read(const char *root, NodeType *ret) {
        NodeType t = {};
        int r;

        if (!root || streq(root, "/"))
                root = "";
        read_cpu_model(root, &t);
        r = read_topology(root, &t);
        if (r < 0)
                return r;
        read_memory(root, &t);
        r = read_pci_gpus(root, &t);
        if (r < 0)
                return r;
        read_nvidia_devices(root, &t);
        read_pci_names(root, &t);
        read_kernel(root, &t);
        *ret = t;
        return 0;
}

_printf_(3, 4)
static void append(char *buf, size_t size, const char *fmt, ...) {
        size_t n = strnlen(buf, size);
        va_list ap;

        if (n + 1 >= size)
                return;
        va_start(ap, fmt);
        vsnprintf(buf + n, size - n, fmt, ap);
        va_end(ap);
}

void node_type_describe(const NodeType *t, char *buf, size_t size) {
        if (size == 0)
                return;
        buf[0] = '\0';
        append(buf, size, "%s", t->cpu_model[0] ? t->cpu_model : "unknown CPU");
        if (t->sockets > 0)
                append(buf, size, ", %u socket%s, %u cores", t->sockets, t->sockets == 1 ? "" : "s", t->cores);
        if (t->threads > 0)
                append(buf, size, ", %u threads", t->threads);
        if (t->memory_bytes > 0)
                append(buf, size, ", %.1f GiB", (double) t->memory_bytes / (1024.0 * 1024 * 1024));
        if (t->n_gpus == 0)
                append(buf, size, ", no GPUs");
        for (size_t i = 0; i < t->n_gpus; i++) {
                const NodeGpu *g = &t->gpus[i];

                if (g->name[0])
                        append(buf, size, ", %u x %s %s", g->count, g->vendor, g->name);
                else if (g->device_id)
                        append(buf, size, ", %u x %s %04x:%04x", g->count, g->vendor, g->vendor_id, g->device_id);
                else
                        append(buf, size, ", %u x %s", g->count, g->vendor);
        }
        if (t->n_gpus_other > 0)
                append(buf, size, ", %u GPUs of other models", t->n_gpus_other);
        if (t->kernel[0])
                append(buf, size, ", kernel %s", t->kernel);
}
