#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A job's time line (GET /api/v1/jobs/{id}, "timeline"): busy cores per
node and step equal what the pushed batches said, in whole batches for a
short job and in buckets of a coarser grain for a long one (at most 120
steps, each a multiple of the grain read), with gaps where a node sent
nothing; and the grains agree with each other (the same job read from
batches and from 5-minute buckets gives the same cores)."""
from lmktest import check, log
from storetest import START, Store, check_eq, make_batch, row

INTERVAL = 60


def job(jid, first, last, cpus=8):
    return {"job": jid, "user": "alice", "account": "p1", "cpus_allocated": cpus,
            "first_seen": first, "last_seen": last, "ended": False}


def cores(node, k):
    """The busy cores of a node in its k-th minute: varies, never 0."""
    return 1 + (k * 3 + node) % 7


def push(s, jid, nodes, minutes, skip=(), seq0=0):
    t0 = START
    for n in range(nodes):
        for k in range(minutes):
            if (n, k) in skip:
                continue
            start = t0 + k * INTERVAL
            b = make_batch(node=f"cn{n:03d}", seq=seq0 + k, start=start,
                           jobs=[job(jid, t0, t0 + minutes * INTERVAL)],
                           rows=[row(jid, "/apps/x", "exe", cores(n, k) * INTERVAL)])
            status, _, body = s.ingest(b)
            check_eq(status, 200, f"batch {n}/{k}: {body}")


def main():
    with Store() as s:
        # short: 30 minutes on 2 nodes, node 1 silent in minute 10
        push(s, "801", 2, 30, skip={(1, 10)})
        tl = s.get_ok("/api/v1/jobs/801")["timeline"]
        check_eq((tl["step_seconds"], tl["steps"], tl["start"]), (INTERVAL, 30, START), "whole batches")
        for n, node in enumerate(tl["nodes"]):
            check_eq(node["node"], f"cn{n:03d}", "nodes by name")
            want = [None if (n, k) == (1, 10) else float(cores(n, k)) for k in range(30)]
            check_eq(node["busy_cores"], want, f"busy cores of {node['node']}")
            check_eq(node["busy_share"], [None if v is None else round(v / 8, 3) for v in want],
                     f"busy share of {node['node']}")

        # long: 20 hours on 1 node (1,200 batches) reads 30-minute buckets
        push(s, "802", 1, 20 * 60, seq0=1000)
        tl = s.get_ok("/api/v1/jobs/802")["timeline"]
        log(f"20 h: step {tl['step_seconds']} s, {tl['steps']} steps")
        check(tl["steps"] <= 120 and tl["step_seconds"] % 300 == 0, f"a long job's steps: {tl['step_seconds']}")
        check(tl["start"] % 300 == 0, "steps start on the grain")
        per_step = int(tl["step_seconds"] // INTERVAL)
        for i, v in enumerate(tl["nodes"][0]["busy_cores"]):
            ks = [k for k in range(20 * 60) if int((START + k * INTERVAL - tl["start"]) // tl["step_seconds"]) == i]
            want = round(sum(cores(0, k) for k in ks) / len(ks), 3) if ks else None
            check_eq(v, want, f"step {i} ({per_step} batches) of the long job")
    log("PASS")


if __name__ == "__main__":
    main()
