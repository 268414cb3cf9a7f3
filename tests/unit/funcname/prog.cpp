// SPDX-License-Identifier: GPL-2.0-or-later
// C++ names for test-funcname to demangle. Never run.
#include <cstdio>

namespace solver {
template <typename T> struct Grid {
        T v[4];
        __attribute__((noinline)) T sum(int n) const;
        __attribute__((noinline)) Grid &operator+=(const Grid &o);
};

template <typename T> T Grid<T>::sum(int n) const {
        T s = 0;
        for (int i = 0; i < n && i < 4; i++)
                s += v[i];
        return s;
}

template <typename T> Grid<T> &Grid<T>::operator+=(const Grid &o) {
        for (int i = 0; i < 4; i++)
                v[i] += o.v[i];
        return *this;
}

template struct Grid<double>;
} // namespace solver

int main(int argc, char **) {
        solver::Grid<double> a = {{1, 2, 3, 4}}, b = {{1, 1, 1, 1}};
        a += b;
        std::printf("%g\n", a.sum(argc));
        return 0;
}
