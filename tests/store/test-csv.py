#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""?format=csv on every list of the API (docs/api.md, "CSV"), against the
real store: 200 with text/csv and a file name, RFC 4180 as Python's csv
module reads it (CRLF, quotes doubled, fields with commas, quotes and
newlines quoted), a header that names every field of the JSON rows, and
rows equal, value by value, to the JSON answer's rows. A text a
spreadsheet would run as a formula starts with an apostrophe; numbers do
not. An empty list is a header alone; errors stay JSON; a bad format is a
400. `lmk --csv` prints the store's CSV; commands without a list refuse
it."""
import csv
import io
import os
import subprocess

from lmktest import build_path, fail, log, skip
from storetest import ADMIN_TOKEN, START, Store, check_eq, example, function, make_batch, rank, row

HZ = 100
BLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"
INVENTORY = {
    "format": "lmk-inventory", "version": 1, "digest": "a" * 64,
    "packages": [
        {"manager": "debian", "name": "libopenblas0-pthread", "version": "0.3.21+ds-4", "arch": "amd64",
         "size": 44000000, "files": [BLAS]},
        {"manager": "opt", "name": "tool, \"the\" big one", "version": "2.0", "prefix": "/opt/tool",
         "size": 900000000, "files": ["/opt/tool/bin/tool"]},
    ],
}
# Names people choose: commas, quotes, a line break, and what a spreadsheet
# would take for formulas.
NAMES = {"4801": "a,b \"quoted\"\nsecond line", "4802": "=HYPERLINK(\"http://x\")", "4803": "-2+3",
         "4804": "@SUM(A1)", "4805": "+1"}


def scaling_batch(seq, job, p):
    ranks = [rank(job, k, round((100 / p + 2) * HZ) + 50, 50) for k in range(p)]
    jobs = [{"job": job, "user": "alice", "account": "p1", "partition": "batch", "nodes": 1, "tasks": p,
             "notes": {"app": "heat", "size": "64"}, "ended": True}]
    return make_batch(node="cn%03d" % (seq % 5), seq=seq, frequency=HZ, jobs=jobs,
                      rows=[row(job, "/opt/heat/bin/heat", "exe", sum(r["samples"] for r in ranks))], ranks=ranks)


def fill(store):
    check_eq(store.ingest(example())[0], 200, "ingest the example")
    rows, jobs, functions = [], [], []
    for i, (jid, name) in enumerate(sorted(NAMES.items())):
        jobs.append({"job": jid, "user": "bob", "account": "chem", "partition": "batch", "name": name,
                     "nodes": 1, "cpus_allocated": 16, "first_seen": START, "last_seen": START + 60})
        rows.append(row(jid, "/opt/x,y/bin/solve", "exe", 100 + i, user="bob", comm="solve"))
        rows.append(row(jid, BLAS, "lib", 50, user="bob", comm="solve"))
        # the job's names as C++ function names: commas, quotes, formulas
        # (a function's name has no line break: lmkd replaces control characters)
        functions.append(function(jid, "/opt/x,y/bin/solve", 60, name=name.replace("\n", " ")))
        functions.append(function(jid, "/opt/x,y/bin/solve", 40, other=True))
        functions.append(function(jid, BLAS, 50, offset=4096 * (i + 1), build_id="ab12"))
        rows[-1]["build_id"] = "ab12"
    b = make_batch(node="cn100", seq=1, rows=rows, jobs=jobs, functions=functions)
    b["inventory"] = INVENTORY
    check_eq(store.ingest(b)[0], 200, "ingest jobs with awkward names")
    for seq, p in enumerate((1, 2, 4, 8), start=10):
        check_eq(store.ingest(scaling_batch(seq, f"90{p}", p))[0], 200, f"ingest a scaling run p={p}")


def flatten(o, prefix=""):
    """A JSON row's fields as CSV column names: an interval (share_ci95,
    cpu_seconds_ci95) is two columns."""
    out = {}
    for k, v in o.items():
        if k.endswith("_ci95"):
            out[prefix + k + "_low"] = v[0] if v else None
            out[prefix + k + "_high"] = v[1] if v else None
        elif isinstance(v, dict):
            out.update(flatten(v, prefix + k + "_"))  # energy.joules is energy_joules
        elif isinstance(v, list):
            continue  # nested lists are in the JSON only
        else:
            out[prefix + k] = v
    return out


def cell(v):
    """What the store writes for a JSON value."""
    if v is None:
        return ""
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, str):
        return "'" + v if v[:1] in ("=", "+", "-", "@", "\t", "\r") else v
    return v


# the one value that moves between two requests
TOLERANCE = {"last_push_age_seconds": 2}


def same_number(text, want, key):
    try:
        return abs(float(text) - float(want)) <= TOLERANCE.get(key, 0)
    except ValueError:
        return False


def get_csv(store, path):
    status, hdrs, body = store.request("GET", path, token=ADMIN_TOKEN)
    check_eq(status, 200, f"GET {path}: {body}")
    check_eq(hdrs.get("content-type"), "text/csv; charset=utf-8", f"{path}: Content-Type")
    if not body.endswith("\r\n"):
        fail(f"{path}: the last line does not end in CRLF: {body[-40:]!r}")
    # every line break outside quotes is CRLF
    quoted = False
    for i, ch in enumerate(body):
        if ch == '"':
            quoted = not quoted
        elif ch == "\n" and not quoted and body[i - 1] != "\r":
            fail(f"{path}: a bare LF at byte {i}")
    return hdrs, list(csv.reader(io.StringIO(body, newline="")))


def check_list(store, path, key, sublist=None, parent_keys=(), optional=()):
    """The CSV of path equals the JSON's list under key, row by row."""
    o = store.get_ok(path)
    sep = "&" if "?" in path else "?"
    hdrs, table = get_csv(store, path + sep + "format=csv")
    filename = hdrs.get("content-disposition", "")
    if not filename.startswith("attachment; filename=\"lmk-") or not filename.endswith(".csv\""):
        fail(f"{path}: Content-Disposition {filename!r}")
    header, rows = table[0], table[1:]
    want = []
    for r in o[key]:
        if sublist:
            parent = {k: v for k, v in flatten(r).items() if k in parent_keys}
            want += [{**parent, **flatten(x)} for x in r[sublist]]
        else:
            want.append(flatten(r))
    check_eq(len(rows), len(want), f"{path}: CSV rows against JSON rows")
    if not want:
        return header, rows
    for w in want:
        # an object that is null here (energy) has its columns, empty
        missing = [k for k in w if k not in header and
                   not (w[k] is None and any(h.startswith(k + "_") for h in header))]
        if missing:
            fail(f"{path}: JSON fields without a CSV column: {missing} (header {header})")
    for k in header:
        # energy_joules: a column of an object that no row of this store
        # has (null in every row) still stands for that object's field
        if k not in optional and all(k not in w and not any(w[p] is None and k.startswith(p + "_") for p in w)
                                     for w in want):
            fail(f"{path}: CSV column {k} is in no JSON row")
    for i, (got, w) in enumerate(zip(rows, want)):
        check_eq(len(got), len(header), f"{path}: row {i} width")
        for k, text in zip(header, got):
            v = cell(w.get(k))
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                if not same_number(text, v, k):
                    fail(f"{path}: row {i} {k}: CSV {text!r}, JSON {v!r}")
            elif text != v:
                fail(f"{path}: row {i} {k}: CSV {text!r}, JSON {w.get(k)!r}")
    log(f"{path}: {len(rows)} rows, {len(header)} columns as in the JSON")
    return header, rows


def lmk(*args, expect=0):
    path = build_path("cli", "lmk")
    if not os.path.exists(path):
        skip(f"{path} was not built")
    env = {k: v for k, v in os.environ.items() if not k.startswith("LMK_")}
    # bytes: text mode would turn the CRLFs into LFs
    proc = subprocess.run([path, *args], capture_output=True, env=env, timeout=60)
    proc.stdout, proc.stderr = proc.stdout.decode(), proc.stderr.decode()
    log("+ lmk", " ".join(args), "->", proc.returncode)
    if proc.returncode != expect:
        fail(f"lmk {' '.join(args)}: exit {proc.returncode}, expected {expect}\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout, proc.stderr


def main():
    with Store() as store:
        fill(store)
        _, rows = check_list(store, "/api/v1/jobs?limit=1000", "jobs")
        check_eq(len(rows), 1 + len(NAMES) + 4, "jobs listed")
        header, rows = check_list(store, "/api/v1/jobs?user=bob&sort=first_seen&order=asc", "jobs")
        names = {r[header.index("job")]: r[header.index("name")] for r in rows}
        check_eq(names["4801"], NAMES["4801"], "a name with a comma, quotes and a line break, read back")
        check_eq(names["4802"], "'" + NAMES["4802"], "a formula, defused")
        check_eq(names["4803"], "'-2+3", "a leading minus in a text")
        for r in rows:
            if r[header.index("samples")].startswith("'"):
                fail("a number got an apostrophe")
        check_list(store, "/api/v1/objects?since=7d", "objects")
        check_list(store, "/api/v1/objects?since=7d&kind=lib", "objects")
        check_list(store, "/api/v1/nodes", "nodes")
        _, rows = check_list(store, "/api/v1/findings?since=7d", "findings")
        if not rows:
            fail("no findings to compare: the jobs of 16 CPUs that use one should be flagged")
        check_list(store, "/api/v1/packages?since=7d", "packages")
        check_list(store, "/api/v1/packages?since=7d&unused=true", "packages")
        check_list(store, "/api/v1/families?since=7d", "families")
        check_list(store, "/api/v1/apps?since=7d", "groups")
        check_list(store, "/api/v1/apps?since=7d&by=user", "groups", optional=("kind",))  # only applications have kinds
        _, rows = check_list(store, "/api/v1/scaling?app=heat&since=7d", "groups", "core_counts",
                             ("app", "size", "executable", "cluster", "node_type", "node_type_source",
                              "run_count"))
        check_eq(len(rows), 4, "scaling: one row per core count")
        header, rows = check_list(store, "/api/v1/jobs/4801/functions", "functions")
        check_eq([r[header.index("function")] for r in rows], [NAMES["4801"].replace("\n", " "), "libopenblas.so.0+0x1000", "(other functions)"],
                 "a function's name with a comma, quotes and a line break, read back")
        header, rows = check_list(store, "/api/v1/jobs/4802/functions?by=phase", "functions")
        check_eq(rows[0][header.index("function")], "'" + NAMES["4802"], "a function's formula, defused")
        # two runs compared: sides, intervals and the difference as columns
        header, rows = check_list(store, "/api/v1/compare?a=4801&b=4711", "rows")
        check_eq(sorted({r[header.index("dimension")] for r in rows}), ["function", "kind", "object", "phase"],
                 "the compare rows' dimensions")

        # an empty list: the header alone
        for path, first in (("/api/v1/jobs?user=nobody&format=csv", "job"),
                            ("/api/v1/scaling?app=none&format=csv", "app"),
                            ("/api/v1/findings?user=nobody&format=csv", "rule"),
                            ("/api/v1/jobs/4711/functions?format=csv", "object")):
            _, table = get_csv(store, path)
            check_eq(len(table), 1, f"{path}: a header and no row")
            check_eq(table[0][0], first, f"{path}: the header's first column")

        # format=json is the default; anything else is a 400, and errors are JSON
        check_eq(store.get("/api/v1/nodes?format=json")[0], 200, "format=json")
        status, _, o = store.get("/api/v1/nodes?format=xml")
        check_eq((status, o.get("field")), (400, "format"), "format=xml")
        status, hdrs, o = store.get("/api/v1/jobs?format=csv&since=yesterday")
        check_eq((status, hdrs.get("content-type"), o.get("field")), (400, "application/json", "since"),
                 "a bad parameter with format=csv")
        status, _, o = store.get("/api/v1/jobs/4711?format=csv")
        check_eq((status, o.get("field")), (400, "format"), "a job's summary is not a list")
        status, hdrs, _ = store.request("HEAD", "/api/v1/jobs?format=csv", token=ADMIN_TOKEN)
        check_eq((status, hdrs.get("content-type")), (200, "text/csv; charset=utf-8"), "HEAD with format=csv")
        check_eq(store.request("GET", "/api/v1/jobs?format=csv")[0], 401, "CSV needs an identity like JSON")

        # lmk --csv prints what the store answers
        tokens = os.path.join(store.dir, "admin-token")
        with open(tokens, "w") as f:
            f.write(ADMIN_TOKEN + "\n")
        os.chmod(tokens, 0o600)
        common = ["--store", store.url(), "--token-file", tokens]
        for args, path in ((["jobs", "--user", "bob"], "/api/v1/jobs?user=bob"),
                           (["nodes"], "/api/v1/nodes"),
                           (["top", "--libs", "--since", "7d", "--limit", "20"],
                            "/api/v1/objects?kind=lib&since=7d&limit=20"),
                           (["top", "--families", "--since", "7d"], "/api/v1/families?since=7d"),
                           (["unused", "--since", "7d"], None),
                           (["apps", "--since", "7d"], None),
                           (["scaling", "heat", "--since", "7d"], None),
                           (["flagged", "--since", "7d"], None),
                           (["job", "4801", "--functions"], "/api/v1/jobs/4801/functions?limit=100000")):
            out, _ = lmk(*common, *args, "--csv")
            table = list(csv.reader(io.StringIO(out, newline="")))
            if len(table) < 2:
                fail(f"lmk {' '.join(args)} --csv: no rows:\n{out}")
            if path:
                _, hdrs, body = store.request("GET", path + "&format=csv" if "?" in path else path + "?format=csv",
                                              token=ADMIN_TOKEN)
                if args[0] == "nodes":  # last_push_age_seconds may have moved on
                    out, body = (list(csv.reader(io.StringIO(t, newline="")))[0] for t in (out, body))
                check_eq(out, body, f"lmk {' '.join(args)} --csv against the store's CSV")
        _, err = lmk(*common, "job", "4711", "--csv", expect=1)
        if "--csv is for the commands that list" not in err:
            fail(f"lmk job --csv: {err}")
        out, _ = lmk(*common, "--csv", "--json", "jobs", expect=1)
        if "choose one" not in out:  # with --json, the error is JSON on standard output
            fail(f"lmk --csv --json: {out}")


if __name__ == "__main__":
    main()
