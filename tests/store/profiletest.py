# SPDX-License-Identifier: GPL-2.0-or-later
"""Reading lmk's profiles with the real clients (docs/profiles.md):
`go tool pprof` (Debian's golang-go) for profile.proto, and the folded
stacks split as flamegraph.pl and speedscope split them; both checked
against the store's JSON list of a job's functions."""
import os
import re
import shutil
import subprocess

from lmktest import check, fail, log
from storetest import check_eq

FULLWIDTH_SEMICOLON = "\uff1b"


def go_pprof():
    """The command that runs pprof, or None."""
    go = shutil.which("go")
    return [go, "tool", "pprof"] if go else None


def pprof_env(tmp):
    """pprof looks for binaries by build-id under PPROF_BINARY_PATH, and
    keeps nothing in $HOME."""
    return dict(os.environ, HOME=tmp, PPROF_BINARY_PATH=tmp, PPROF_TMPDIR=tmp, GOCACHE=os.path.join(tmp, "go"))


def pprof(cmd, env, *args):
    p = subprocess.run(cmd + list(args), capture_output=True, text=True, env=env, timeout=120)
    if p.returncode != 0:
        fail(f"pprof {' '.join(args)}: exit {p.returncode}\n{p.stdout}\n{p.stderr}")
    log(f"$ go tool pprof {' '.join(args)}\n{p.stdout}")
    return p.stdout


def parse_raw(text, objects):
    """pprof -raw: the samples (values, location ids, labels), the
    locations (id → mapping, address, function) and the mappings (id →
    start, limit, offset, file, build-id), the files among objects (a
    path may hold spaces, and a build-id may be empty)."""
    samples, locations, mappings = [], {}, {}
    section = None
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Samples:":
            m = re.match(r"^\s+(\d+)\s+(\d+):((?:\s+\d+)+)\s*$", line)
            if m:
                samples.append({"values": (int(m[1]), int(m[2])), "locations": m[3].split(), "labels": {}})
                continue
            m = re.match(r"^\s+(\w+):\[(.*)\]\s*$", line)
            if m and samples:
                samples[-1]["labels"][m[1]] = m[2]
        elif section == "Locations":
            # "ID: ADDRESS M=MAPPING [NAME :LINE s=START(...)]"
            m = re.match(r"^\s*(\d+): (0x[0-9a-f]+) M=(\d+) ?(.*)$", line)
            if m:
                name = re.sub(r" :\d+(?::\d+)? s=\d+.*$", "", m[4]).strip()
                locations[m[1]] = {"address": int(m[2], 16), "mapping": m[3], "function": name or None}
        elif section == "Mappings":
            m = re.match(r"^(\d+): (0x[0-9a-f]+)/(0x[0-9a-f]+)/(0x[0-9a-f]+) (.*?)(?: \[[A-Z]+\])?\s*$", line)
            if m:
                rest = m[5]
                file = next((o for o in objects if rest == o or rest.startswith(o + " ")), None)
                check(file is not None, f"a mapping of none of the job's objects: {line!r}")
                mappings[m[1]] = {"start": int(m[2], 16), "limit": int(m[3], 16), "offset": int(m[4], 16),
                                  "file": file, "build_id": rest[len(file) + 1:] or None}
    return samples, locations, mappings


def parse_top(text):
    """pprof -top: the total and each function's flat value."""
    total, flat = None, {}
    for line in text.splitlines():
        m = re.search(r"of (\d+) total", line)
        if m:
            total = int(m[1])
        m = re.match(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(.*)$", line)
        if m:
            flat[m[2]] = flat.get(m[2], 0) + int(m[1])
    return total, flat


def check_pprof(cmd, env, path, by_phase, hz, what):
    """The profile at path as pprof reads it, against the store's JSON
    list of functions by phase (function, object, build_id, phase,
    samples, cpu_seconds) sampled at hz: every sample, function, phase
    and mapping, -top's total and top functions, and the CPU time."""
    raw = pprof(cmd, env, "-raw", path)
    m = re.search(r"^Period: (\d+)$", raw, re.M)
    check("PeriodType: cpu nanoseconds" in raw and m and abs(int(m[1]) * hz / 1e9 - 1) < 1e-3,
          f"{what}: the period of {hz} Hz: {raw[:300]}")
    check("samples/count cpu/nanoseconds" in raw, f"{what}: the sample types")
    build_ids = {e["object"]: e["build_id"] for e in by_phase}
    samples, locations, mappings = parse_raw(raw, sorted(build_ids, key=len, reverse=True))
    got = {}
    for s in samples:
        check_eq(len(s["locations"]), 1, f"{what}: one location per sample")
        loc = locations[s["locations"][0]]
        mp = mappings[loc["mapping"]]
        check_eq(mp["build_id"], build_ids[mp["file"]], f"{what}: the build-id of {mp['file']}")
        name = loc["function"]
        if name is None:
            # unnamed: its file offset within its mapping, for pprof to name from the binary
            check(mp["start"] <= loc["address"] < mp["limit"], f"{what}: an address in its mapping")
            name = f"{os.path.basename(mp['file'])}+{loc['address'] - mp['start'] + mp['offset']:#x}"
        key = (mp["file"], name, s["labels"].get("phase", ""))
        check(key not in got, f"{what}: {key} once")
        got[key] = s["values"]
    want = {(e["object"], e["function"], e["phase"]): (e["samples"], e["cpu_seconds"] * 1e9) for e in by_phase}
    check_eq({k: v[0] for k, v in got.items()}, {k: v[0] for k, v in want.items()},
             f"{what}: pprof's samples by function and phase")
    for k, (_, ns) in want.items():
        # the JSON's CPU seconds have 3 decimals
        check(abs(got[k][1] - ns) <= 0.5e6 + 1, f"{what}: {k}: pprof's CPU time {got[k][1]} ns, the JSON's {ns}")

    # -top, as a user reads it: the total and the top functions, summed by name as pprof does
    # every function, however small (pprof leaves out those under 0.5 % by default)
    total, flat = parse_top(pprof(cmd, env, "-top", "-sample_index=samples", "-nodefraction=0", path))
    names = {}
    for (obj, name, _), (n, _) in want.items():
        if name.startswith(os.path.basename(obj) + "+0x"):
            continue  # pprof shows an address of its own for an unnamed one
        names[name] = names.get(name, 0) + n
    check_eq(total, sum(n for n, _ in want.values()), f"{what}: pprof -top's total")
    for name, n in names.items():
        check_eq(flat.get(name), n, f"{what}: pprof -top's {name}")
    # one phase, as a user narrows a profile to it
    phases = {}
    for (_, _, phase), (n, _) in want.items():
        if re.fullmatch(r"[\w/]+", phase):
            phases[phase] = phases.get(phase, 0) + n
    if phases:
        phase = max(phases, key=phases.get)
        text = pprof(cmd, env, "-top", "-sample_index=samples", "-nodefraction=0", f"-tagfocus=phase={phase}", path)
        m = re.search(r"accounting for (\d+),", text)
        check_eq(int(m[1]) if m else None, phases[phase], f"{what}: pprof's samples in phase {phase}")
    top = max(names, key=names.get)
    check(f" {top}\n" in pprof(cmd, env, "-top", "-sample_index=samples", "-nodecount=1", path),
          f"{what}: pprof's top function is {top}")


def parse_folded(text, what):
    """Split as flamegraph.pl and speedscope do: the count after the last
    space, frames at ';'."""
    stacks = {}
    for line in text.splitlines():
        stack, _, count = line.rpartition(" ")
        check(stack and count.isdigit(), f"{what}: line {line!r}")
        frames = tuple(stack.split(";"))
        check_eq(len(frames), 2, f"{what}: object and function in {line!r}")
        stacks[frames] = stacks.get(frames, 0) + int(count)
    return stacks


def folded_frame(s):
    return s.replace(";", FULLWIDTH_SEMICOLON)


def check_folded(text, functions, what):
    """Folded stacks against the store's JSON list of functions."""
    stacks = parse_folded(text, what)
    want = {}
    for e in functions:
        k = (folded_frame(os.path.basename(e["object"])), folded_frame(e["function"]))
        want[k] = want.get(k, 0) + e["samples"]
    check_eq(stacks, want, f"{what}: folded stacks")
    return stacks
