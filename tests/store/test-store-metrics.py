#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The site metrics of the store's /metrics worth alerting on (docs/api.md,
GET /metrics): nodes that stopped pushing (known, stale after 10m/1h/1d,
per node the last push, also across a restart of the store), the spool
backlog each node reports in its Lmk-Spool header, and batches not taken,
counted by reason, each reason provoked here and counted exactly. The
whole answer is valid Prometheus text: every sample's family has HELP and
TYPE first."""
import gzip
import json
import re
import sqlite3
import time

from lmktest import check, fail, log
from storetest import ADMIN_TOKEN, BOUND_TOKEN, Store, check_eq, is_postgresql, make_batch, row

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*",?)*\})? (\S+)$')


def scrape(store):
    """{(name, labels text): value}, checking the text format on the way."""
    status, hdrs, text = store.request("GET", "/metrics")
    check_eq(status, 200, "GET /metrics")
    check_eq(hdrs.get("content-type"), "text/plain; version=0.0.4; charset=utf-8", "/metrics Content-Type")
    helped, typed, out = set(), set(), {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
        elif line.startswith("# TYPE "):
            typed.add(line.split()[2])
        else:
            m = SAMPLE.match(line)
            if not m:
                fail(f"/metrics: not a sample line: {line!r}")
            name = m.group(1)
            family = re.sub(r"_(bucket|sum|count)$", "", name) if name not in typed else name
            if family not in helped or family not in typed:
                fail(f"/metrics: {name} has no HELP or TYPE before it")
            out[(name, m.group(2) or "")] = float(m.group(3))
    return out


def set_last_push(db, node, when):
    """What the database says of a node, written beside a stopped store."""
    if is_postgresql(db):
        import psycopg2
        con = psycopg2.connect(db)
        with con, con.cursor() as cur:
            cur.execute("UPDATE nodes SET last_push = %s WHERE name = %s", (when, node))
    else:
        con = sqlite3.connect(db)
        with con:
            con.execute("UPDATE nodes SET last_push = ? WHERE name = ?", (when, node))
    con.close()


def rejected(metrics, reason):
    return metrics[("lmk_store_ingest_rejected_total", f'{{reason="{reason}"}}')]


def main():
    with Store(extra=["--max-body", "64K"]) as store:
        # spool backlogs as lmkd says them, and a header the store cannot read
        for seq, (node, spool) in enumerate((("cn001", "batches=3 bytes=12345"), ("cn002", "bytes=10 batches=0"),
                                             ("cn003", "batches=lots"), ('cn"4\\x', "batches=7 bytes=70"))):
            b = make_batch(node=node, seq=seq, rows=[row(None, "[idle]", "idle", 10)])
            check_eq(store.ingest(b, headers={"Lmk-Spool": spool})[0], 200, f"ingest of {node}")
        # a duplicate is a sign of life too, and brings the news of an empty spool
        b = make_batch(node="cn001", seq=0, rows=[row(None, "[idle]", "idle", 10)])
        check_eq(store.ingest(b, headers={"Lmk-Spool": "batches=0 bytes=0"})[2]["duplicate"], True, "a duplicate")
        m = scrape(store)
        check_eq(m[("lmk_store_node_spool_batches", '{node="cn001"}')], 0, "cn001's backlog, as it said last")
        check_eq(m[("lmk_store_node_spool_bytes", '{node="cn002"}')], 10, "cn002's bytes")
        check_eq(m[("lmk_store_node_spool_batches", '{node="cn\\"4\\\\x"}')], 7, "a node name escaped as a label")
        if ("lmk_store_node_spool_batches", '{node="cn003"}') in m:
            fail("a backlog from a header the store cannot read")
        check_eq(m[("lmk_store_nodes_known", "")], 4, "nodes known")
        for after in ("10m", "1h", "1d"):
            check_eq(m[("lmk_store_nodes_stale", f'{{after="{after}"}}')], 0, f"stale after {after}")
        now = time.time()
        for node in ("cn001", "cn002", "cn003"):
            t = m[("lmk_store_node_last_push_timestamp_seconds", f'{{node="{node}"}}')]
            if not now - 60 < t <= now + 1:
                fail(f"{node}'s last push at {t}, now is {now}")

        # every reason a batch is not taken, each once
        good = make_batch(node="cn001", seq=50, rows=[row(None, "[idle]", "idle", 10)])
        cases = [
            ("not-json", lambda: store.ingest(b"{nope")),
            ("not-json", lambda: store.ingest(b"\x1f\x8bnot gzip", headers={"Content-Encoding": "gzip"})),
            ("invalid", lambda: store.ingest({**good, "rows": [{"samples": -1}]})),
            ("version", lambda: store.ingest({**good, "version": 99})),
            ("too-large", lambda: store.ingest(b"x" * 70000)),
            ("too-large", lambda: store.ingest(gzip.compress(json.dumps(good).encode() + b" " * 2000000),
                                               gzipped=False, headers={"Content-Encoding": "gzip"})),
            ("media-type", lambda: store.ingest(good, headers={"Content-Type": "text/plain"})),
            ("unauthorized", lambda: store.ingest(good, token="no-such-token-0123456789")),
            ("forbidden", lambda: store.ingest(good, token=ADMIN_TOKEN)),
            ("forbidden", lambda: store.ingest(good, token=BOUND_TOKEN)),
        ]
        want = {}
        for reason, send in cases:
            status = send()[0]
            if status == 200:
                fail(f"a batch meant to be refused ({reason}) was taken")
            want[reason] = want.get(reason, 0) + 1
        m = scrape(store)
        for reason in ("not-json", "invalid", "version", "overflow", "too-large", "media-type", "unauthorized",
                       "forbidden", "busy", "error", "other"):
            check_eq(rejected(m, reason), want.get(reason, 0), f"batches rejected for {reason}")
        check_eq(m[("lmk_store_batches_total", '{result="rejected"}')], len(cases),
                 "the reasons add up to the rejected batches")

    # a node that stopped pushing before the store restarted is still known,
    # and stale by the time it last pushed
    old = int(time.time()) - 2 * 3600
    store.stop()
    set_last_push(store.db, "cn002", old)
    with Store(directory=store.dir, db=store.db, tokens=False) as again:
        m = scrape(again)
        check_eq(m[("lmk_store_nodes_known", "")], 4, "nodes known after a restart")
        # the store keeps a node's age on its monotonic clock, in whole
        # seconds from its start: the wall time it gives back may be one
        # second off the database's
        got = m[("lmk_store_node_last_push_timestamp_seconds", '{node="cn002"}')]
        check(abs(got - old) <= 1, f"cn002's last push, from the database: {got}, the database's {old}")
        check_eq([m[("lmk_store_nodes_stale", f'{{after="{a}"}}')] for a in ("10m", "1h", "1d")], [1, 1, 0],
                 "cn002 stale after 10m and 1h, not 1d")
        if any(k[0] == "lmk_store_node_spool_batches" for k in m):
            fail("backlogs are memory: a restarted store knows none until the next push")
    log("node staleness, spool backlogs and rejects by reason as provoked")


if __name__ == "__main__":
    main()
