#!/usr/bin/env python3
"""lmk-store's folders are layers (docs/lmk-store.md, "Source layout").

From the sources: a file includes only headers of its own folder and of
the folders below it (LAYERS), and no include leads round a circle. From
the built libraries, when they are named: no file calls into another
that calls back into it, by a chain of any length (a callback handed
down, such as a route's handler, is no call).

usage: test-layers.py STORE_DIR [LIBRARY.a...]"""

import collections
import os
import re
import subprocess
import sys

# What each folder rests on directly; "." is the program (lmk-store.c,
# the route table, the server's lifecycle, retention). A folder may
# include the headers of everything below it, transitively.
LAYERS = {
    ".": ["web", "migrate"],
    "web": ["api"],
    "api": ["auth", "analysis", "symbols"],
    "symbols": ["metrics"],
    "auth": ["http"],
    "http": ["metrics"],
    "metrics": ["db"],
    "analysis": ["db"],
    "migrate": ["db"],
    "db": ["batch"],
    "batch": [],
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def below(folder):
    """The folders a file of folder may include from, its own among them."""
    seen, todo = {folder}, list(LAYERS[folder])
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            todo.extend(LAYERS[f])
    return seen


def folder_of(rel):
    parts = rel.split("/")
    return parts[0] if len(parts) > 1 else "."


def sources(store):
    for root, dirs, files in os.walk(store):
        dirs.sort()
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(root, name), store)


def includes(store, rel):
    """The store's files that rel includes, resolved as the compiler does:
    beside rel first, then from store/ (its include directory). Headers
    from elsewhere (common/, schema/, generated ones) are not the store's."""
    with open(os.path.join(store, rel), encoding="utf-8") as f:
        text = f.read()
    for name in INCLUDE.findall(text):
        for cand in (os.path.join(os.path.dirname(rel), name), name):
            cand = os.path.normpath(cand)
            if os.path.isfile(os.path.join(store, cand)):
                yield cand
                break


def cycles(graph):
    """The circles of a directed graph, each as a list of its nodes
    (Tarjan's strongly connected components of more than one node, or of
    one with an edge to itself)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            if len(scc) > 1 or v in graph.get(v, ()):
                found.append(sorted(scc))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def check_sources(store):
    problems = []
    graph = {}
    for rel in sources(store):
        folder = folder_of(rel)
        if folder not in LAYERS:
            problems.append(f"store/{folder}/ is no layer this test knows: add it to LAYERS")
            continue
        allowed = below(folder)
        graph[rel] = set()
        for inc in includes(store, rel):
            graph[rel].add(inc)
            to = folder_of(inc)
            if to not in allowed:
                problems.append(f"store/{rel} includes store/{inc}: {folder}/ may include only "
                                f"{', '.join(sorted(f + '/' for f in allowed))}")
    for c in cycles(graph):
        problems.append("include circle: " + ", ".join("store/" + f for f in c))
    return problems, len(graph)


def nm(library, *flags):
    out = subprocess.run(["nm", "-A", *flags, library], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        # "libstore.a:http_http.c.o:                 U reply_done"
        member, _, rest = line.partition(".o:")
        fields = rest.split()
        if len(fields) >= 2:
            yield f"{os.path.basename(library)}({os.path.basename(member)})", fields[-2], fields[-1]


def check_calls(libraries):
    defined = {}
    for lib in libraries:
        for obj, kind, sym in nm(lib, "--defined-only"):
            if kind in "TDBRV":
                defined[sym] = obj
    graph = collections.defaultdict(set)
    for lib in libraries:
        for obj, kind, sym in nm(lib, "--undefined-only"):
            to = defined.get(sym)
            if to and to != obj:
                graph[obj].add(to)
    return ["call circle: " + ", ".join(c) for c in cycles(graph)], len(graph)


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems, n_files = check_sources(sys.argv[1])
    n_objects = 0
    if len(sys.argv) > 2:
        more, n_objects = check_calls(sys.argv[2:])
        problems += more
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{n_files} files in {len(LAYERS)} layers, {n_objects} objects: no forbidden include, no circle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
