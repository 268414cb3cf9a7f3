// SPDX-License-Identifier: LGPL-2.1-or-later

// example-cpp SECONDS: liblmk's scoped markers in a C++ time-stepping loop.
// Each timestep spends 2 ms of thread CPU time in "compute" and 1 ms in
// "io", both inside "timestep" (lmkd: timestep/compute, timestep/io at 2:1).
// A region ends when its scope ends, also on return or exception.
//
//   c++ -O2 example.cpp $(pkg-config --cflags --libs lmk) -o example-cpp

#include <lmk.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace {

double now(clockid_t clock)
{
        timespec ts;
        clock_gettime(clock, &ts);
        return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// Floating-point work until the thread used `seconds` more CPU time.
double burn(double seconds)
{
        double start = now(CLOCK_THREAD_CPUTIME_ID), t;
        volatile double x = 1.0;

        do {
                for (int i = 0; i < 2000; i++)
                        x = x * 1.0000001 + 1e-9;
                t = now(CLOCK_THREAD_CPUTIME_ID) - start;
        } while (t < seconds);
        return t;
}

double compute()
{
        LMK_SCOPE("compute");
        return burn(0.002);
}

double io()
{
        LMK_SCOPE("io");
        return burn(0.001);
}

} // namespace

int main(int argc, char **argv)
{
        char *end = nullptr;
        double seconds = argc == 2 ? std::strtod(argv[1], &end) : -1;
        if (argc != 2 || end == argv[1] || *end != '\0' || !(seconds >= 0)) {
                std::fprintf(stderr, "usage: %s SECONDS\n", argv[0]);
                return 2;
        }

        double stop = now(CLOCK_MONOTONIC) + seconds, compute_s = 0, io_s = 0;
        long timesteps = 0;
        while (now(CLOCK_MONOTONIC) < stop) {
                LMK_SCOPE("timestep");
                compute_s += compute();
                io_s += io();
                timesteps++;
        }

        std::printf("{\"threads\": 1, \"timesteps\": %ld, \"compute_s\": %.6f, \"io_s\": %.6f}\n",
                    timesteps, compute_s, io_s);
        return 0;
}
