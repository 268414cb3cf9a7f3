// SPDX-License-Identifier: GPL-2.0-or-later
// A C++ program for the function tests (tests/functions): its time in
// member functions of class templates in a namespace, a virtual function
// and std::sort, whose names lmk shows demangled as perf does.
//
//   lmk-func-cxx SECONDS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

namespace solver {

template <typename T> class Grid {
public:
        explicit Grid(std::size_t n) : v_(n, T(1)) {}
        __attribute__((noinline)) T smooth(int sweeps);
        __attribute__((noinline)) T sum(int times) const;

private:
        std::vector<T> v_;
};

template <typename T> T Grid<T>::smooth(int sweeps) {
        for (int s = 0; s < sweeps; s++)
                for (std::size_t i = 1; i + 1 < v_.size(); i++)
                        v_[i] = (v_[i - 1] + v_[i] + v_[i + 1]) / T(3.0001);
        return v_[v_.size() / 2];
}

template <typename T> T Grid<T>::sum(int times) const {
        T s = 0;

        for (int t = 0; t < times; t++)
                for (const T &x : v_)
                        s = s * T(0.999) + x;
        return s;
}

struct Force {
        virtual ~Force() = default;
        virtual double compute(const std::vector<double> &x) const = 0;
};

struct PairLJCut : Force {
        __attribute__((noinline)) double compute(const std::vector<double> &x) const override {
                double e = 0;

                for (std::size_t i = 0; i < x.size(); i++)
                        for (std::size_t j = i + 1; j < x.size() && j < i + 16; j++) {
                                double r = x[i] - x[j] + 1.5, r6 = r * r * r * r * r * r;

                                e += 1.0 / (r6 * r6) - 1.0 / r6;
                        }
                return e;
        }
};

} // namespace solver

static volatile double sink;

int main(int argc, char **argv) {
        if (argc != 2 || std::atof(argv[1]) <= 0) {
                std::fprintf(stderr, "usage: lmk-func-cxx SECONDS\n");
                return 2;
        }
        auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(std::atof(argv[1]));
        solver::Grid<double> gd(4096);
        solver::Grid<float> gf(4096);
        std::unique_ptr<solver::Force> f(new solver::PairLJCut());
        std::vector<double> x(2048);
        std::vector<int> keys(20000);
        unsigned seed = 4711;

        for (std::size_t i = 0; i < x.size(); i++)
                x[i] = (double) i * 0.01;
        while (std::chrono::steady_clock::now() < end) {
                int unit = 1 + rand_r(&seed) % 2;

                sink = gd.smooth(12 * unit);
                sink = gf.smooth(8 * unit);
                sink = gd.sum(10 * unit);
                sink = f->compute(x);
                for (auto &k : keys)
                        k = rand_r(&seed);
                std::sort(keys.begin(), keys.end());
        }
        return 0;
}
