/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What test-funcname names: functions laid out in assembly, so that sizes,
 * gaps and aliases are exactly what the test expects, and one the
 * compiler makes. Built several times (tests/unit/meson.build): as it is,
 * rebuilt with another body (another build-id), without a build-id, and
 * stripped to its .dynsym. Never run. */

__asm__(".text\n"
        ".balign 64\n"
        /* a function with a size, then 32 bytes no symbol covers */
        ".globl fn_sized\n .type fn_sized, @function\n"
        "fn_sized:\n .fill 32, 1, 0x90\n .size fn_sized, 32\n"
        " .fill 32, 1, 0xcc\n"
        /* no size: up to the next symbol */
        ".globl fn_sizeless\n .type fn_sizeless, @function\n"
        "fn_sizeless:\n .fill 48, 1, 0x90\n"
        /* three aliases of one function */
        ".type alias_local, @function\n"
        "alias_local:\n"
        ".weak alias_weak\n .type alias_weak, @function\n"
        "alias_weak:\n"
        ".globl alias_global\n .type alias_global, @function\n"
        "alias_global:\n .fill 16, 1, 0x90\n"
        " .size alias_local, 16\n .size alias_weak, 16\n .size alias_global, 16\n"
        /* untyped labels, as hand-written assembly has them */
        "label_local:\n .fill 16, 1, 0x90\n"
        ".globl label_global\n"
        "label_global:\n .fill 16, 1, 0x90\n"
        /* two global aliases: the first in the symbol table names them */
        ".globl tie_b\n .type tie_b, @function\n"
        ".globl tie_a\n .type tie_a, @function\n"
        "tie_b:\n"
        "tie_a:\n .fill 16, 1, 0x90\n .size tie_a, 16\n .size tie_b, 16\n"
        /* one function inside another */
        ".globl outer\n .type outer, @function\n"
        "outer:\n .fill 16, 1, 0x90\n"
        ".globl inner\n .type inner, @function\n"
        "inner:\n .fill 16, 1, 0x90\n .size inner, 16\n"
        " .fill 16, 1, 0x90\n .size outer, 48\n"
        ".globl fn_end\n .type fn_end, @function\n"
        "fn_end:\n ret\n .size fn_end, 1\n"
        ".previous\n");

#ifndef FUNCNAME_REBUILT
#define FUNCNAME_REBUILT 3
#endif

/* Local: only .symtab names it. */
static __attribute__((noinline)) int local_work(int x) {
        for (int i = 0; i < x; i++)
                __asm__ volatile("");
        return x * FUNCNAME_REBUILT;
}

int main(int argc, char **argv) {
        (void) argv;
        return local_work(argc);
}
