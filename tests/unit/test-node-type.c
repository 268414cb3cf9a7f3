/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#include "node-type.h"
#include "tests.h"
#include "util.h"

static char dir[] = "/tmp/lmk-test-node-type.XXXXXX";

/* Writes root/rel, making its folders. */
static void put(const char *root, const char *rel, const char *fmt, ...) {
        char path[PATH_MAX];
        va_list ap;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s/%s", dir, root, rel);
        for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                ASSERT_TRUE(mkdir(path, 0755) == 0 || errno == EEXIST);
                *p = '/';
        }
        f = fopen(path, "we");
        ASSERT_NOT_NULL(f);
        va_start(ap, fmt);
        vfprintf(f, fmt, ap);
        va_end(ap);
        ASSERT_EQ(fclose(f), 0);
}

static void pci(const char *root, const char *addr, const char *class, const char *vendor, const char *device) {
        char rel[256];

        snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/class", addr);
        put(root, rel, "%s\n", class);
        snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/vendor", addr);
        put(root, rel, "%s\n", vendor);
        snprintf(rel, sizeof(rel), "sys/bus/pci/devices/%s/device", addr);
        put(root, rel, "%s\n", device);
}

static const char *at(const char *root) {
        static char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", dir, root);
        return path;
}

/* Two sockets of two cores with two threads each, one more CPU offline. */
TEST(x86_two_sockets) {
        char text[512];
        NodeType t;

        for (int cpu = 0; cpu < 9; cpu++) {
                char rel[128];

                put("x86", "proc/cpuinfo", "%s", "");
                snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/topology/physical_package_id", cpu);
                put("x86", rel, "%d\n", cpu / 4);
                snprintf(rel, sizeof(rel), "sys/devices/system/cpu/cpu%d/topology/core_id", cpu);
                put("x86", rel, "%d\n", cpu % 2 == 0 ? 0 : 4); /* core ids need not be dense */
        }
        put("x86", "sys/devices/system/cpu/online", "0-7\n");
        put("x86", "proc/cpuinfo",
            "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 143\n"
            "model name\t: Intel(R) Xeon(R) Platinum 8480+  \nflags\t\t: fpu\n\n"
            "processor\t: 1\nmodel name\t: something else\n");
        put("x86", "proc/meminfo", "MemTotal:       527952340 kB\nMemFree:        1 kB\n");
        put("x86", "proc/sys/kernel/osrelease", "6.1.0-18-amd64\n");
        /* the BMC's VGA, a bridge, two NVIDIA 3D controllers, an AMD display controller */
        pci("x86", "0000:03:00.0", "0x030000", "0x1a03", "0x2000");
        pci("x86", "0000:00:1f.0", "0x060100", "0x8086", "0x1b81");
        pci("x86", "0000:b1:00.0", "0x030200", "0x10de", "0x20b0");
        pci("x86", "0000:3b:00.0", "0x030200", "0x10de", "0x20b0");
        pci("x86", "0000:c1:00.0", "0x038000", "0x1002", "0x740c");
        put("x86", "dev/nvidia0", "%s", "");
        put("x86", "dev/nvidiactl", "%s", "");
        put("x86", "usr/share/misc/pci.ids",
            "# comment\n"
            "1002  Advanced Micro Devices, Inc. [AMD/ATI]\n"
            "\t740c  Aldebaran/MI200 [Instinct MI250X/MI250]\n"
            "10de  NVIDIA Corporation\n"
            "\t20b0  GA100 [A100 SXM4 40GB]\n"
            "\t\t10de 1450  A100-SXM4-40GB\n"
            "\t20b2  GA100 [A100 SXM4 80GB]\n"
            "C 03  Display controller\n"
            "\t20b0  not a device\n");

        ASSERT_OK(node_type_read(at("x86"), &t));
        ASSERT_STREQ(t.cpu_model, "Intel(R) Xeon(R) Platinum 8480+");
        ASSERT_EQ(t.threads, 8);
        ASSERT_EQ(t.sockets, 2);
        ASSERT_EQ(t.cores, 4);
        ASSERT_U64_EQ(t.memory_bytes, UINT64_C(527952340) * 1024);
        ASSERT_STREQ(t.kernel, "6.1.0-18-amd64");
        ASSERT_EQ(t.n_gpus, 2);
        ASSERT_STREQ(t.gpus[0].vendor, "NVIDIA");
        ASSERT_EQ(t.gpus[0].vendor_id, 0x10de);
        ASSERT_EQ(t.gpus[0].device_id, 0x20b0);
        ASSERT_EQ(t.gpus[0].count, 2);
        ASSERT_STREQ(t.gpus[0].name, "GA100 [A100 SXM4 40GB]");
        ASSERT_STREQ(t.gpus[1].vendor, "AMD");
        ASSERT_EQ(t.gpus[1].count, 1);
        ASSERT_STREQ(t.gpus[1].name, "Aldebaran/MI200 [Instinct MI250X/MI250]");
        ASSERT_EQ(t.n_gpus_other, 0);
        node_type_describe(&t, text, sizeof(text));
        ASSERT_STREQ(text, "Intel(R) Xeon(R) Platinum 8480+, 2 sockets, 4 cores, 8 threads, 503.5 GiB, "
                     "2 x NVIDIA GA100 [A100 SXM4 40GB], 1 x AMD Aldebaran/MI200 [Instinct MI250X/MI250], "
                     "kernel 6.1.0-18-amd64");
        node_type_describe(&t, text, 20);
        ASSERT_STREQ(text, "Intel(R) Xeon(R) Pl");
}

/* Arm names its CPU by implementer and part; no topology in sysfs, no PCI
 * devices, but the NVIDIA driver's device nodes. */
TEST(arm_without_sysfs) {
        char text[512];
        NodeType t;

        put("arm", "proc/cpuinfo",
            "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\nCPU architecture: 8\n"
            "CPU variant\t: 0x3\nCPU part\t: 0xd0c\nCPU revision\t: 1\n\n"
            "processor\t: 1\nCPU implementer\t: 0x46\nCPU part\t: 0x001\n");
        put("arm", "sys/devices/system/cpu/online", "0-79\n");
        put("arm", "dev/nvidia0", "%s", "");
        put("arm", "dev/nvidia3", "%s", "");
        put("arm", "dev/nvidiactl", "%s", "");
        put("arm", "dev/nvidia-uvm", "%s", "");
        ASSERT_OK(node_type_read(at("arm"), &t));
        ASSERT_STREQ(t.cpu_model, "Arm Neoverse-N1");
        ASSERT_EQ(t.threads, 80);
        ASSERT_EQ(t.sockets, 0);
        ASSERT_EQ(t.cores, 0);
        ASSERT_EQ(t.n_gpus, 1);
        ASSERT_EQ(t.gpus[0].device_id, 0);
        ASSERT_EQ(t.gpus[0].count, 2);
        ASSERT_STREQ(t.gpus[0].name, "");
        node_type_describe(&t, text, sizeof(text));
        ASSERT_STREQ(text, "Arm Neoverse-N1, 80 threads, 2 x NVIDIA");

        put("arm2", "proc/cpuinfo", "processor\t: 0\nCPU implementer\t: 0x51\nCPU part\t: 0x802\n"
            "Hardware\t: Qualcomm Technologies, Inc SM8150\n");
        ASSERT_OK(node_type_read(at("arm2"), &t));
        ASSERT_STREQ(t.cpu_model, "Arm implementer 0x51 part 0x802");
        put("board", "proc/cpuinfo", "processor\t: 0\nHardware\t: BCM2835\n");
        ASSERT_OK(node_type_read(at("board"), &t));
        ASSERT_STREQ(t.cpu_model, "BCM2835");
}

/* More GPU models than kept: the rest are counted. Control characters in
 * the model name do not pass. */
TEST(many_models) {
        NodeType t;

        put("many", "proc/cpuinfo", "model name\t: A\x01" "B\n");
        for (int i = 0; i < NODE_TYPE_MAX_GPUS + 3; i++) {
                char addr[32], device[16];

                snprintf(addr, sizeof(addr), "0000:%02x:00.0", i);
                snprintf(device, sizeof(device), "0x%04x", 0x1000 + i);
                pci("many", addr, "0x030200", "0x10de", device);
        }
        pci("many", "0000:ff:00.0", "0x030200", "0x10de", "0x1000");
        ASSERT_OK(node_type_read(at("many"), &t));
        ASSERT_STREQ(t.cpu_model, "A B");
        ASSERT_EQ(t.n_gpus, NODE_TYPE_MAX_GPUS);
        ASSERT_EQ(t.gpus[0].count, 2);
        ASSERT_EQ(t.n_gpus_other, 3);
}

TEST(nothing_there) {
        NodeType t;

        ASSERT_TRUE(mkdir(at("empty"), 0755) == 0);
        ASSERT_OK(node_type_read(at("empty"), &t));
        ASSERT_STREQ(t.cpu_model, "");
        ASSERT_EQ(t.threads, 0);
        ASSERT_U64_EQ(t.memory_bytes, 0);
        ASSERT_EQ(t.n_gpus, 0);
        ASSERT_STREQ(t.kernel, "");
}

/* This machine: whatever it is, it has CPUs, memory and a kernel. */
TEST(this_machine) {
        char text[512];
        NodeType t;

        ASSERT_OK(node_type_read(NULL, &t));
        ASSERT_TRUE(t.threads >= 1);
        ASSERT_TRUE(t.memory_bytes > 0);
        ASSERT_TRUE(t.kernel[0] != '\0');
        node_type_describe(&t, text, sizeof(text));
        fprintf(stderr, "this machine: %s\n", text);
}

int main(void) {
        char cmd[PATH_MAX + 16];

        ASSERT_NOT_NULL(mkdtemp(dir));
        RUN(x86_two_sockets);
        RUN(arm_without_sysfs);
        RUN(many_models);
        RUN(nothing_there);
        RUN(this_machine);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
        return 0;
}
