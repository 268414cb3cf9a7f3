#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Embeds a text file (the pages' stylesheet) into a C header as
`static const char NAME[]`, so that lmk-store serves it without reading
files at run time: embed-text.py NAME INPUT OUTPUT"""
import sys


def main():
    name, src, out = sys.argv[1:4]
    with open(src, encoding="utf-8") as f:
        text = f.read()
    lines = []
    for line in text.splitlines(keepends=True):
        esc = line.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        lines.append(f'        "{esc}"')
    with open(out, "w", encoding="utf-8") as f:
        f.write(f"/* generated from {src.split('/')[-1]} by embed-text.py */\n")
        f.write(f"static const char {name}[] =\n" + ("\n".join(lines) or '        ""') + ";\n")


if __name__ == "__main__":
    main()
