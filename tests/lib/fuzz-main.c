/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Replays fuzz inputs without libFuzzer: every fuzz target is linked with
 * this driver in normal builds, so its seed corpus runs as a unit test under
 * gcc, valgrind and the sanitizers. With -Dfuzz=true (CC=clang) the same
 * target is linked with -fsanitize=fuzzer instead. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
        FILE *f = fopen(path, "re");
        uint8_t *buf;
        long n;

        if (!f) {
                perror(path);
                return 1;
        }
        if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) < 0) {
                fclose(f);
                return 1;
        }
        buf = malloc(n ? (size_t) n : 1);
        if (!buf || fread(buf, 1, (size_t) n, f) != (size_t) n) {
                fclose(f);
                free(buf);
                return 1;
        }
        fclose(f);
        LLVMFuzzerTestOneInput(buf, (size_t) n);
        free(buf);
        return 0;
}

int main(int argc, char **argv) {
        int n = 0;

        for (int i = 1; i < argc; i++) {
                struct stat st;

                if (stat(argv[i], &st) < 0) {
                        perror(argv[i]);
                        return 1;
                }
                if (S_ISDIR(st.st_mode)) {
                        DIR *d = opendir(argv[i]);
                        struct dirent *de;

                        if (!d)
                                return 1;
                        while ((de = readdir(d))) {
                                char p[4096];

                                if (de->d_name[0] == '.')
                                        continue;
                                snprintf(p, sizeof(p), "%s/%s", argv[i], de->d_name);
                                if (run_file(p))
                                        return 1;
                                n++;
                        }
                        closedir(d);
                } else {
                        if (run_file(argv[i]))
                                return 1;
                        n++;
                }
        }
        fprintf(stderr, "replayed %d inputs\n", n);
        return n > 0 ? 0 : 1;
}
