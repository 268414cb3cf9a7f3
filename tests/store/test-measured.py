#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Every number lmkd measures reaches the store (issue 15): batches with
node types, counter roles, named events, burst windows, energy and exact
per-job figures pushed to the real lmk-store, then the stored rows, the
job API's numbers (rates worked out here from what was sent), `lmk job`,
the job list's node_type filter, the node list, duplicates and overflow.

Three node types: cnA (type A, with RAPL energy and four counters, one
unavailable), cnB (type B, no energy), cnC (an lmkd that sends no node
type). Jobs: 5001 and 5002 on cnA; 5003 on cnB; 5004 on cnA and cnB (its
nodes differ); 5005 on cnC alone; 5006 on cnC and cnA (only cnA told a
type: the job is of type A)."""
import json
import math
import os
import sqlite3
import subprocess
import urllib.parse

from lmktest import build_path, check, fail, log
from storetest import ADMIN_TOKEN, START, Store, check_eq, is_postgresql, make_batch, row, sql_write

HZ = 10
NS = 10 ** 9 // HZ  # a sample's CPU time
INT64_MAX = (1 << 63) - 1

# Hand-worked from docs/lmk-store.md "Node types": 187.4 GiB of MemTotal is
# 192 GiB (steps of 8 GiB, the largest power of two at most 1/16 of it),
# 503.8 GiB is 512 GiB (steps of 16 GiB).
TYPE_A = {"cpu_model": "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", "sockets": 2, "cores": 40, "threads": 80,
          "memory_bytes": 201226612736, "kernel": "6.1.0-18-amd64", "gpus_other": 0,
          "gpus": [{"vendor": "NVIDIA", "vendor_id": "10de", "device_id": "1db5",
                    "name": "GV100GL [Tesla V100 SXM2 32GB]", "count": 4}]}
NAME_A = ("Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz, 2 x 20 cores, 80 threads, 192 GiB, "
          "4 x NVIDIA GV100GL [Tesla V100 SXM2 32GB]")
TYPE_B = {"cpu_model": "AMD EPYC 7763 64-Core Processor", "sockets": 2, "cores": 128, "threads": 256,
          "memory_bytes": 540950220800, "kernel": "6.12.10-cray", "gpus": [], "gpus_other": 0}
NAME_B = "AMD EPYC 7763 64-Core Processor, 2 x 64 cores, 256 threads, 512 GiB"

COUNTERS = [
    {"role": "cycles", "event": "PAPI_TOT_CYC", "source": "papi", "available": True},
    {"role": "instructions", "event": "PAPI_TOT_INS", "source": "papi", "available": True},
    {"role": "l1m", "event": "PAPI_L1_DCM", "source": "papi", "available": True},
    {"role": "fp", "event": "PAPI_FP_OPS", "source": "papi", "available": False, "error": "no such event"},
]

APP, LIBM = "/opt/app/bin/app", "/usr/lib/x86_64-linux-gnu/libm.so.6"


def mrow(job, obj, kind, samples, phase="", comm="app", cycles=None, instructions=None, events=None,
         multiplexed=None, burst=None, user="alice"):
    r = row(job, obj, kind, samples, phase=phase, user=user, comm=comm, cycles=cycles, instructions=instructions)
    r["cpu_time_ns"] = samples * NS
    if events is not None:
        r["events"] = events
    if multiplexed is not None:
        r["multiplexed_samples"] = multiplexed
    if burst is not None:
        r["burst"] = burst
    return r


def burst(samples, window_ns, **per_second):
    return {"samples": samples, "window_ns": window_ns, "per_second": per_second}


def energy(zones, unattributed):
    return {"source": "powercap", "joules": sum(j for _, _, j in zones), "unattributed_joules": unattributed,
            "zones": [{"zone": z, "kind": k, "joules": j} for z, k, j in zones]}


def batch(node, seq, start, rows, jobs, node_type=None, counters=None, nrg=None):
    b = make_batch(node=node, seq=seq, start=start, rows=rows, jobs=jobs, frequency=HZ)
    if node_type is not None:
        b["node"]["type"] = node_type
    if counters is not None:
        b["counters"] = counters
    if nrg is not None:
        b["energy"] = nrg
    return b


def job(jid, user="alice", **x):
    j = {"job": jid, "user": user, "account": "p1", "partition": "batch", "cluster": "demo"}
    j.update(x)
    return j


BATCHES = [
    batch("cnA", 1, START, [
        mrow("5001", APP, "exe", 120, phase="solve", cycles=30 * 10 ** 9, instructions=45 * 10 ** 9,
             events={"l1m": 600 * 10 ** 6, "fp": None}, multiplexed=20,
             burst=burst(3, 3 * 10 ** 6, cycles=2.5e9, instructions=4e9, l1m=2e7, fp=None)),
        mrow("5001", LIBM, "lib", 50, phase="solve", events={"l1m": 300 * 10 ** 6}),
        mrow("5001", APP, "exe", 30, phase="solve", comm="app2", cycles=6 * 10 ** 9, instructions=9 * 10 ** 9,
             events={"l1m": 100 * 10 ** 6}, burst=burst(2, 2 * 10 ** 6, cycles=2e9, instructions=3e9, l1m=1e7)),
        mrow("5002", "/bin/other", "exe", 40, user="bob"),
        mrow(None, "[idle]", "idle", 300, user="root"),
    ], [
        job("5001", cpu_time_ns=20 * 10 ** 9, cycles=40 * 10 ** 9, instructions=60 * 10 ** 9,
            events={"l1m": 1000000, "fp": None}, energy_joules=900.0, energy_alone_joules=600.0,
            first_seen=START + 1, last_seen=START + 60),
        job("5002", user="bob", cpu_time_ns=10 * 10 ** 9, cycles=None, instructions=None,
            energy_joules=300.0, energy_alone_joules=0.0, first_seen=START + 2, last_seen=START + 60),
    ], node_type=TYPE_A, counters=COUNTERS,
        nrg=energy([("package-0", "package", 600.0), ("package-0/dram", "dram", 60.0),
                    ("package-1", "package", 600.0), ("package-1/dram", "dram", 40.0)], 100.0)),
    batch("cnA", 2, START + 60, [
        mrow("5001", APP, "exe", 100, phase="solve", cycles=25 * 10 ** 9, instructions=35 * 10 ** 9,
             events={"l1m": 400 * 10 ** 6}),
        mrow("5001", LIBM, "lib", 20, phase="fft", cycles=4 * 10 ** 9, instructions=2 * 10 ** 9,
             events={"l1m": 200 * 10 ** 6}),
    ], [
        job("5001", cpu_time_ns=10 * 10 ** 9, cycles=20 * 10 ** 9, instructions=30 * 10 ** 9,
            events={"l1m": 500000}, energy_joules=400.0, energy_alone_joules=400.0, ended=True,
            first_seen=START + 60, last_seen=START + 100),
    ], node_type=TYPE_A, counters=COUNTERS,
        nrg=energy([("package-0", "package", 250.0), ("package-0/dram", "dram", 50.0),
                    ("package-1", "package", 200.0)], 100.0)),
    batch("cnB", 1, START, [mrow("5003", APP, "exe", 60, user="carol"), mrow("5004", APP, "exe", 10)],
          [job("5003", user="carol"), job("5004")], node_type=TYPE_B),
    batch("cnA", 3, START + 120, [mrow("5004", APP, "exe", 10)], [job("5004")], node_type=TYPE_A,
          counters=COUNTERS),
    batch("cnC", 1, START, [mrow("5005", APP, "exe", 5), mrow("5006", APP, "exe", 5)],
          [job("5005"), job("5006")]),
    batch("cnA", 4, START + 180, [mrow("5006", APP, "exe", 5)], [job("5006")], node_type=TYPE_A,
          counters=COUNTERS),
]


def rows_of(jid):
    return [r for b in BATCHES for r in b["rows"] if r["job"] == jid]


def event_sums(rows, role):
    """A named event's sums as docs/api.md defines them: over the rows that
    counted it; instructions and the count beside them only from rows that
    counted instructions too."""
    s = {"count": 0, "samples": 0, "cpu_time_ns": 0, "instructions": 0, "count_with_instructions": 0}
    for r in rows:
        c = (r.get("events") or {}).get(role)
        if c is None:
            continue
        s["count"] += c
        s["samples"] += r["samples"]
        s["cpu_time_ns"] += r["cpu_time_ns"]
        if r["instructions"] is not None:
            s["instructions"] += r["instructions"]
            s["count_with_instructions"] += c
    return s


def near(got, want, what, rel=1e-9, decimals=3):
    """got as the API rounds it (to decimals places)."""
    if want is None:
        check(got is None, f"{what}: expected null, got {got}")
        return
    check(got is not None and abs(got - want) <= max(abs(want) * rel, 0.5 * 10 ** -decimals + 1e-12),
          f"{what}: expected {want}, got {got}")


def check_rates(e, s, what):
    check_eq((e["count"], e["samples"]), (s["count"], s["samples"]), f"{what}: count and samples")
    near(e["cpu_seconds"], s["cpu_time_ns"] / 1e9, f"{what}: cpu_seconds")
    near(e["per_cpu_second"], s["count"] / (s["cpu_time_ns"] / 1e9), f"{what}: per_cpu_second")
    near(e["per_1000_instructions"],
         1000 * s["count_with_instructions"] / s["instructions"] if s["instructions"] else None,
         f"{what}: per_1000_instructions")


MEASURED_TABLES = ["node_types", "event_roles", "job_counters", "job_events", "job_object_events",
                   "job_phase_events", "job_bursts"]


def snapshot(store):
    """Every stored sum the measured figures live in."""
    out = {t: sorted(store.sql(f"SELECT * FROM {t}")) for t in MEASURED_TABLES}
    out["jobs"] = sorted(store.sql("SELECT id, samples, node_type_id, energy_joules, energy_alone_joules, "
                                   "exact_cpu_time_ns, exact_cycles, exact_instructions FROM jobs"))
    out["job_nodes"] = sorted(store.sql("SELECT job_id, node_id, node_type_id, energy_joules FROM job_nodes"))
    return out


def lmk(store, *args):
    p = subprocess.run([build_path("cli", "lmk"), "--store", store.url(), "--token-file", store.token_file, *args],
                       capture_output=True, text=True)
    log(f"lmk {' '.join(args)}:\n{p.stdout}{p.stderr}")
    check_eq(p.returncode, 0, f"lmk {' '.join(args)}: {p.stderr}")
    return p.stdout


def test_stored_rows(store):
    types = dict(store.sql("SELECT name, id FROM node_types"))
    check_eq(sorted(types), sorted([NAME_A, NAME_B]), "node types, keyed by their names")
    check_eq(store.sql("SELECT cpu_model, sockets, cores, threads, memory_gib, gpus FROM node_types WHERE name = ?",
                       (NAME_A,)),
             [(TYPE_A["cpu_model"], 2, 40, 80, 192, "4 x NVIDIA GV100GL [Tesla V100 SXM2 32GB]")], "type A's parts")
    nodes = {n: (t, m, k) for n, t, m, k in store.sql("SELECT name, node_type_id, memory_bytes, kernel FROM nodes")}
    check_eq(nodes, {"cnA": (types[NAME_A], TYPE_A["memory_bytes"], TYPE_A["kernel"]),
                     "cnB": (types[NAME_B], TYPE_B["memory_bytes"], TYPE_B["kernel"]),
                     "cnC": (None, None, None)}, "nodes' type, memory and kernel")

    jobs = dict(store.sql("SELECT job, node_type_id FROM jobs"))
    check_eq(jobs, {"5001": types[NAME_A], "5002": types[NAME_A], "5003": types[NAME_B], "5004": 0,
                    "5005": None, "5006": types[NAME_A]},
             "jobs' node types (0: its nodes differ; a node that told none does not count)")
    check_eq(sorted(store.sql("SELECT n.name, jn.node_type_id FROM job_nodes jn JOIN nodes n ON n.id = jn.node_id "
                              "JOIN jobs j ON j.id = jn.job_id WHERE j.job = '5004'")),
             [("cnA", types[NAME_A]), ("cnB", types[NAME_B])], "job 5004's type per node")

    check_eq(sorted(store.sql("SELECT seq, energy_joules, dram_joules, unattributed_joules FROM batches b "
                              "JOIN nodes n ON n.id = b.node_id WHERE n.name = 'cnA'")),
             [(1, 1300.0, 100.0, 100.0), (2, 500.0, 50.0, 100.0), (3, None, None, None), (4, None, None, None)],
             "energy per batch: all zones, DRAM, unattributed")
    check_eq(store.sql("SELECT energy_joules, energy_alone_joules, exact_cpu_time_ns, exact_cycles, "
                       "exact_instructions FROM jobs WHERE job = '5001'"),
             [(1300.0, 1000.0, 30 * 10 ** 9, 60 * 10 ** 9, 90 * 10 ** 9)], "job 5001's energy and exact figures")
    check_eq(store.sql("SELECT energy_joules, energy_alone_joules, exact_cpu_time_ns, exact_cycles FROM jobs "
                       "WHERE job = '5002'"), [(300.0, 0.0, 10 * 10 ** 9, None)], "job 5002's")
    check_eq(store.sql("SELECT energy_joules, exact_cpu_time_ns FROM jobs WHERE job = '5005'"), [(None, None)],
             "a job without energy or exact figures")
    check_eq(store.sql("SELECT jn.energy_joules, jn.energy_alone_joules FROM job_nodes jn "
                       "JOIN jobs j ON j.id = jn.job_id WHERE j.job = '5001'"), [(1300.0, 1000.0)],
             "job 5001's energy on cnA")

    check_eq(sorted(store.sql("SELECT j.job, r.name, c.event, c.available FROM job_counters c "
                              "JOIN jobs j ON j.id = c.job_id JOIN event_roles r ON r.id = c.role_id "
                              "WHERE j.job IN ('5001', '5003')")),
             sorted(("5001", c["role"], c["event"], int(c["available"])) for c in COUNTERS),
             "counters of the jobs of batches with counters[] (none for 5003)")

    rows = rows_of("5001")
    s = event_sums(rows, "l1m")
    got = store.sql("SELECT e.count, e.samples, e.cpu_time_ns, e.instructions, e.count_with_instructions, "
                    "e.exact_count FROM job_events e JOIN jobs j ON j.id = e.job_id "
                    "JOIN event_roles r ON r.id = e.role_id WHERE j.job = '5001' AND r.name = 'l1m'")
    check_eq(got, [(s["count"], s["samples"], s["cpu_time_ns"], s["instructions"], s["count_with_instructions"],
                    1500000)], "job 5001's l1m sums and exact count")
    check_eq(store.sql("SELECT count(*) FROM job_events e JOIN event_roles r ON r.id = e.role_id "
                       "WHERE r.name = 'fp'"), [(0,)], "an event counted nowhere has no sums")
    for table, dim, key in (("job_object_events", "objects o ON o.id = e.object_id", "o.path"),
                            ("job_phase_events", "phases o ON o.id = e.phase_id", "o.path")):
        got = {k: v for k, *v in store.sql(f"SELECT {key}, e.count, e.samples, e.cpu_time_ns, e.instructions, "
                                           f"e.count_with_instructions FROM {table} e JOIN {dim} "
                                           "JOIN jobs j ON j.id = e.job_id WHERE j.job = '5001'")}
        field = "object" if table == "job_object_events" else "phase"
        want = {}
        for part in sorted({r[field] for r in rows}):
            x = event_sums([r for r in rows if r[field] == part], "l1m")
            want[part] = [x["count"], x["samples"], x["cpu_time_ns"], x["instructions"], x["count_with_instructions"]]
        check_eq(got, want, f"{table} of job 5001")

    # burst windows at (app, solve): rows 0 and 2 of the first batch
    got = {r: (b, w, c) for r, b, w, c in store.sql(
        "SELECT r.name, b.bursts, b.window_ns, b.count FROM job_bursts b JOIN event_roles r ON r.id = b.role_id "
        "JOIN objects o ON o.id = b.object_id JOIN phases p ON p.id = b.phase_id "
        "WHERE o.path = ? AND p.path = 'solve'", (APP,))}
    check_eq(sorted(got), ["cycles", "instructions", "l1m"], "roles counted in burst windows (fp was not)")
    for role, rates in (("cycles", (2.5e9, 2e9)), ("instructions", (4e9, 3e9)), ("l1m", (2e7, 1e7))):
        b, w, c = got[role]
        check_eq((b, w), (5, 5 * 10 ** 6), f"burst windows of {role}")
        near(c, rates[0] * 0.003 + rates[1] * 0.002, f"events of {role} in burst windows", rel=1e-12, decimals=6)
    check_eq(sorted(store.sql("SELECT o.path, jo.multiplexed_samples FROM job_objects jo "
                              "JOIN objects o ON o.id = jo.object_id JOIN jobs j ON j.id = jo.job_id "
                              "WHERE j.job = '5001'")), [(APP, 20), (LIBM, 0)], "multiplexed samples per object")


def test_job_api(store):
    j = store.get_ok("/api/v1/jobs/5001")
    rows = rows_of("5001")
    check_eq((j["node_type"], j["node_types_differ"]), (NAME_A, False), "job 5001's node type")
    d = j["node_type_details"]
    check_eq((d["name"], d["cpu_model"], d["sockets"], d["cores"], d["threads"], d["memory_gib"], d["gpus"]),
             (NAME_A, TYPE_A["cpu_model"], 2, 40, 80, 192, "4 x NVIDIA GV100GL [Tesla V100 SXM2 32GB]"),
             "node_type_details")
    e = j["energy"]
    check_eq((e["joules"], e["alone_joules"], e["estimated_joules"]), (1300, 1000, 300), "energy of job 5001")
    near(e["mean_watts"], 1300 / (j["last_seen"] - j["first_seen"]), "mean power", rel=1e-6)
    check_eq((j["exact"]["cpu_time_ns"], j["exact"]["cycles"], j["exact"]["instructions"], j["exact"]["ipc"]),
             (30 * 10 ** 9, 60 * 10 ** 9, 90 * 10 ** 9, 1.5), "exact figures")
    check_eq([(c["role"], c["event"], c["available"]) for c in j["counters"]],
             [("cycles", "PAPI_TOT_CYC", True), ("instructions", "PAPI_TOT_INS", True),
              ("fp", "PAPI_FP_OPS", False), ("l1m", "PAPI_L1_DCM", True)], "counters, cycles and instructions first")

    check_eq([x["role"] for x in j["events"]], ["l1m"], "named events")
    ev = j["events"][0]
    check_eq((ev["event"], ev["event_differs"], ev["exact_count"]), ("PAPI_L1_DCM", False, 1500000), "l1m's event")
    check_rates(ev, event_sums(rows, "l1m"), "job 5001 l1m")
    # by hand, lest the reference above share a mistake: 1.6e9 misses in
    # 320 samples of 0.1 s; per 1,000 instructions only from the rows with
    # instructions: 1.3e9 misses in 9.1e10 instructions
    near(ev["per_cpu_second"], 1.6e9 / 32, "l1m per CPU second by hand")
    near(ev["per_1000_instructions"], 1000 * 1.3e9 / 9.1e10, "l1m per 1,000 instructions by hand")
    check_eq([o["object"] for o in ev["objects"]], [o["object"] for o in j["objects"]],
             "objects of an event in the order of the job's objects")
    for o in ev["objects"]:
        check_rates(o, event_sums([r for r in rows if r["object"] == o["object"]], "l1m"), f"l1m in {o['object']}")
    near(ev["objects"][1]["per_1000_instructions"], 100, "libm: 2e8 misses in 2e9 instructions (fft rows only)")
    check_eq(sorted(p["phase"] for p in ev["phases"]), ["fft", "solve"], "phases of l1m")
    for p in ev["phases"]:
        check_rates(p, event_sums([r for r in rows if r["phase"] == p["phase"]], "l1m"), f"l1m in {p['phase']}")
    check_eq(j["events_truncated"], False, "events not truncated")

    check_eq([(b["object"], b["phase"], b["bursts"]) for b in j["bursts"]], [(APP, "solve", 5)], "burst locations")
    r = j["bursts"][0]["rates"]
    check_eq(sorted(r), ["cycles", "instructions", "l1m"], "roles with burst rates")
    for role, want in (("cycles", (2.5e9 * 3 + 2e9 * 2) / 5), ("instructions", (4e9 * 3 + 3e9 * 2) / 5),
                       ("l1m", (2e7 * 3 + 1e7 * 2) / 5)):
        near(r[role]["per_second"], want, f"burst rate of {role}", rel=1e-12)
        check_eq((r[role]["bursts"], r[role]["window_seconds"]), (5, 0.005), f"what {role}'s rate rests on")
    near(j["bursts"][0]["ipc"], 18 / 11.5, "IPC in burst windows")

    objs = {o["object"]: o for o in j["objects"]}
    check_eq((objs[APP]["multiplexed_samples"], objs[LIBM]["multiplexed_samples"]), (20, 0), "multiplexed samples")
    check_eq({p["phase"]: p["multiplexed_samples"] for p in j["phases"]}, {"solve": 20, "fft": 0},
             "multiplexed samples per phase")
    check_eq([(n["node"], n["node_type"], n["energy_joules"], n["energy_alone_joules"]) for n in j["nodes"]],
             [("cnA", NAME_A, 1300, 1000)], "job 5001's node")

    j = store.get_ok("/api/v1/jobs/5002")
    check_eq((j["node_type"], j["energy"]["joules"], j["energy"]["estimated_joules"], j["exact"]["cpu_time_ns"],
              j["exact"]["cycles"], j["exact"]["ipc"], j["events"], j["bursts"]),
             (NAME_A, 300, 300, 10 * 10 ** 9, None, None, [], []), "job 5002: shared node, exact CPU time only")
    j = store.get_ok("/api/v1/jobs/5004")
    check_eq((j["node_type"], j["node_types_differ"], j["node_type_details"]), (None, True, None),
             "job 5004 on two types")
    check_eq([(n["node"], n["node_type"]) for n in j["nodes"]], [("cnA", NAME_A), ("cnB", NAME_B)],
             "job 5004's nodes say theirs")
    j = store.get_ok("/api/v1/jobs/5005")
    check_eq((j["node_type"], j["node_types_differ"], j["energy"], j["exact"], j["counters"], j["events"]),
             (None, False, None, None, [], []), "job 5005: nothing measured beyond samples")
    check_eq(store.get_ok("/api/v1/jobs/5006")["node_type"], NAME_A, "job 5006: the type its nodes told")

    nodes = {n["node"]: n for n in store.get_ok("/api/v1/nodes")["nodes"]}
    check_eq((nodes["cnA"]["node_type"]["name"], nodes["cnA"]["kernel"], nodes["cnA"]["memory_bytes"]),
             (NAME_A, TYPE_A["kernel"], TYPE_A["memory_bytes"]), "node cnA")
    check_eq((nodes["cnB"]["node_type"]["cores"], nodes["cnB"]["node_type"]["memory_gib"]), (128, 512), "node cnB")
    check_eq((nodes["cnC"]["node_type"], nodes["cnC"]["kernel"], nodes["cnC"]["memory_bytes"]), (None, None, None),
             "node cnC: its lmkd told no type")


def test_job_list(store):
    def jobs(query):
        o = store.get_ok("/api/v1/jobs?" + query)
        return sorted(j["job"] for j in o["jobs"]), o["total"]

    qa, qb = urllib.parse.quote(NAME_A), urllib.parse.quote(NAME_B)
    check_eq(jobs(f"node_type={qa}"), (["5001", "5002", "5006"], 3), "jobs of type A (not 5004: types differ)")
    check_eq(jobs(f"node_type={qb}"), (["5003"], 1), "jobs of type B")
    check_eq(jobs(f"node_type={qa}&user=bob"), (["5002"], 1), "type A and a user")
    check_eq(jobs("node_type=nosuchtype"), ([], 0), "a type no node has")
    for j in store.get_ok(f"/api/v1/jobs?node_type={qa}")["jobs"]:
        check_eq(j["node_type"], NAME_A, f"job {j['job']} in the list says its type")
    if not is_postgresql(store.db):
        con = sqlite3.connect(f"file:{store.db}?mode=ro", uri=True)
        plan = " ".join(r[-1] for r in con.execute(
            # the list's part for the jobs that are not live (schema/0018)
            "EXPLAIN QUERY PLAN SELECT j.id FROM jobs j WHERE j.live = 0 AND j.node_type_id = "
            "(SELECT t.id FROM node_types t WHERE t.name = ?) ORDER BY j.last_seen DESC LIMIT 10", (NAME_A,)))
        con.close()
        check("jobs_by_node_type" in plan and "TEMP B-TREE" not in plan, f"the filter walks its index: {plan}")
    out = lmk(store, "jobs", "--node-type", NAME_B)
    check("5003" in out and "5001" not in out, "lmk jobs --node-type")
    csv = store.request("GET", f"/api/v1/jobs?node_type={qb}&format=csv", token=ADMIN_TOKEN)[2]
    check(NAME_B in csv and "5003" in csv, f"CSV of the filtered list: {csv}")


def test_cli(store):
    out = lmk(store, "job", "5001")
    flat = " ".join(out.split())
    for want in ("Node type Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz, 2 x 20 cores, 80 threads, 192 GiB, "
                 "4 x NVIDIA GV100GL [Tesla V100 SXM2 32GB]",
                 "(300 J estimated: shared nodes)",
                 "(lmkd's totals, not from samples)",
                 "Counters cycles=PAPI_TOT_CYC, instructions=PAPI_TOT_INS, fp=PAPI_FP_OPS (unavailable), "
                 "l1m=PAPI_L1_DCM",
                 # 1,300 J over the 99 s it was seen
                 "Energy 1.30 kJ, mean 13.1 W",
                 "Exact CPU time 30s, IPC 1.50",
                 # 1.6e9 misses in 32 CPU seconds, 1.3e9 in 9.1e10 instructions
                 "l1m 50.0 M/s 14.286 320 PAPI_L1_DCM",
                 "5 1.56 cycles 2.30 G/s, instructions 3.60 G/s, l1m 16.0 M/s /opt/app/bin/app [solve]"):
        check(want in flat, f"lmk job 5001 shows {want!r}")
    out = lmk(store, "job", "5005")
    check("Energy      - (no energy counters on its nodes)" in out and "Node type" not in out,
          "lmk job 5005: energy unavailable, no node type")
    out = lmk(store, "job", "5004")
    check("Node type   several" in out, "lmk job 5004: several node types")
    status, _, page = store.request("GET", "/jobs/5001", token=ADMIN_TOKEN)
    check_eq(status, 200, "the job's page")
    page = page.decode() if isinstance(page, bytes) else str(page)
    for want in (f"<dt>Node type</dt><dd>{NAME_A}</dd>", "1.30&nbsp;kJ", "13.1&nbsp;W", "300&nbsp;J",
                 "PAPI_FP_OPS <span class=\"muted\">(unavailable)</span>", "50.0&nbsp;M/s", "14.286",
                 "<h2 id=\"bursts\">Burst rates</h2>", "2.30&nbsp;G/s"):
        check(want in page, f"the job's page shows {want!r}")
    out = lmk(store, "nodes")
    check(all(len(line) <= 80 for line in out.splitlines()), "lmk nodes fits 80 columns")
    types = " ".join(out.split("Node types", 1)[-1].split())
    check(types == f"{NAME_A} cnA ({TYPE_A['kernel']}) {NAME_B} cnB ({TYPE_B['kernel']}) (told none) cnC",
          f"lmk nodes: the types with their nodes and kernels: {types}")


def test_duplicate(store):
    before = snapshot(store)
    status, _, answer = store.ingest(BATCHES[0])
    check_eq((status, answer["duplicate"]), (200, True), "the first batch again")
    check_eq(snapshot(store), before, "a duplicate adds nothing to the measured sums")


def expect_overflow(store, b, field, what):
    before = snapshot(store)
    status, _, answer = store.ingest(b)
    if status != 400 or answer.get("field") != field or "overflow" not in answer.get("error", "") + \
            answer.get("message", ""):
        fail(f"{what}: expected 400 naming {field} and an overflow, got {status} {answer}")
    check_eq(snapshot(store), before, f"stored sums after the refused batch ({what})")


def big_batch(node, seq, rows, jobs=()):
    """A node big enough that a row may count 2^53 of anything."""
    b = make_batch(node=node, seq=seq, rows=rows, jobs=list(jobs))
    b["node"]["cpus"] = 1 << 20
    b["interval"]["end"] = START + 3600
    b["counters"] = [{"role": "cycles", "event": "cycles", "available": True},
                     {"role": "l1m", "event": "PAPI_L1_DCM", "available": True}]
    return b


def test_overflow(store):
    big = 1 << 53
    # named events: 600 rows of 2^53 fit in one batch, not in two
    b1 = big_batch("cnbig", 1, [dict(row("88", "/bin/big", "exe", 1), events={"l1m": big}) for _ in range(600)])
    check_eq(store.ingest(b1)[0], 200, "600 x 2^53 misses")
    b2 = json.loads(json.dumps(b1))
    b2["batch"]["seq"] = 2
    expect_overflow(store, b2, "rows", "the job's misses past INT64_MAX")

    # burst windows: within one batch (the row that tips it) and across two
    bursts = [dict(row("89", "/bin/big", "exe", 1), burst=burst(1, big, cycles=1.0)) for _ in range(1100)]
    expect_overflow(store, big_batch("cnbig", 3, bursts), "rows[1023].burst", "one batch's burst windows")
    b1 = big_batch("cnbig", 3, bursts[:600])
    check_eq(store.ingest(b1)[0], 200, "600 windows of 2^53 ns")
    b2 = json.loads(json.dumps(b1))
    b2["batch"]["seq"] = 4
    expect_overflow(store, b2, "rows", "the job's burst windows past INT64_MAX")

    # events of a row without cpu_time_ns rest on samples / frequency, here
    # 10^10 s: more nanoseconds than an int64 holds
    b = big_batch("cnbig", 5, [dict(row("90", "/bin/big", "exe", 10 ** 10), events={"l1m": 1})])
    b["interval"]["end"] = START + 86400
    expect_overflow(store, b, "rows[0].samples", "a row's CPU time from its samples")

    # exact figures near the limit, written beside a stopped store
    store.stop()
    sql_write(store.db, [
        ("UPDATE jobs SET exact_cpu_time_ns = ? WHERE job = '5002'", (INT64_MAX - 10,)),
        ("UPDATE job_events SET exact_count = ? WHERE job_id = (SELECT id FROM jobs WHERE job = '5001')",
         (INT64_MAX - 10,)),
    ])
    store.start()
    b = batch("cnA", 10, START + 240, [mrow("5002", "/bin/other", "exe", 1, user="bob")],
              [job("5002", user="bob", cpu_time_ns=100)], node_type=TYPE_A, counters=COUNTERS)
    expect_overflow(store, b, "jobs[0].cpu_time_ns", "the job's exact CPU time")
    b = batch("cnA", 10, START + 240, [mrow("5001", APP, "exe", 1, events={"l1m": 5})],
              [job("5001", events={"l1m": 100})], node_type=TYPE_A, counters=COUNTERS)
    expect_overflow(store, b, "jobs[0].events", "the job's exact count of l1m")
    # the same batch without the exact count is fine
    b["jobs"][0]["events"] = {"l1m": None}
    check_eq(store.ingest(b)[0], 200, "the rows' misses without an exact count")


def main():
    with Store() as store:
        for b in BATCHES:
            status, _, answer = store.ingest(b)
            check_eq(status, 200, f"ingest {b['batch']}: {answer}")
        test_stored_rows(store)
        test_job_api(store)
        test_job_list(store)
        test_cli(store)
        test_duplicate(store)
        test_overflow(store)
    log("PASS")


if __name__ == "__main__":
    main()
