#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""A batch's key (node, boot id, spool, seq) and its digest (issue 33,
item 7; docs/batch-format.md, "How a store answers").

A retry of a stored batch is a duplicate (200); other content under a
stored key is refused with 409, stores nothing, leaves the first batch as
it was, is counted in /metrics and logged at most once a minute; two
spools of one node with the same seq are two batches. On PostgreSQL the
key is found whatever interval the new body says (batches' primary key
there holds interval_start). A batch stored before digests were kept
stays a duplicate of anything under its key."""
import re
import time

from lmktest import check, fail
from storetest import START, Store, check_eq, make_batch, row, sql_write

SPOOL_A = "5f0c1e8a9b7d4c3e2a1f0e9d8c7b6a59"
SPOOL_B = "0123456789abcdef0123456789abcdef"


def keyed(spool, seq=3, samples=40, job="9001", start=START, node="cnkey"):
    b = make_batch(node=node, seq=seq, boot_id="boot-k", start=start, jobs=[{"job": job, "user": "alice"}],
                   rows=[row(job, "/bin/keyed", "exe", samples)])
    if spool is not None:
        b["batch"]["spool"] = spool
    return b


def metric(store, name):
    status, _, text = store.request("GET", "/metrics")
    check_eq(status, 200, "metrics")
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.rsplit(" ", 1)[1])
    return None


def conflict_lines(store):
    return len(re.findall(r"Refused batch cnkey/", store.read_log()))


def samples_of(store, job):
    status, _, body = store.get(f"/api/v1/jobs/{job}")
    return body["samples"] if status == 200 else status


def main():
    with Store() as store:
        first = keyed(SPOOL_A)
        status, _, body = store.ingest(first)
        check_eq((status, body["status"]), (200, "stored"), f"first push: {body}")
        status, _, body = store.ingest(first)
        check_eq((status, body["status"], body["duplicate"]), (200, "duplicate", True), f"retry: {body}")
        status, _, body = store.ingest(first, gzipped=True)
        check_eq((status, body["status"]), (200, "duplicate"), f"retry, gzip: {body}")
        before = store.counts()
        check_eq((before["batches"], before["sample_packs"]), (1, 1), "one batch, one pack")

        # Other content under the same key: another job, other samples,
        # and (what PostgreSQL's partitioned key would miss) another
        # interval, a day later.
        others = [keyed(SPOOL_A, samples=7), keyed(SPOOL_A, samples=7, job="9002"),
                  keyed(SPOOL_A, samples=7, start=START + 86400)]
        for i, other in enumerate(others):
            status, _, body = store.ingest(other)
            check_eq(status, 409, f"other content {i}: {body}")
            check_eq((body.get("field"), body.get("conflict")), ("batch.seq", True), f"409 body {i}")
            check_eq(body["error"], f"batch cnkey/boot-k/{SPOOL_A}/3 was already stored with other content",
                     f"409 message {i}")
        check_eq(store.counts(), before, "nothing of the refused batches stored")
        check_eq(samples_of(store, "9001"), 40, "the first batch's job, intact")
        check_eq(samples_of(store, "9002"), 404, "the refused batch's job was not made")
        check_eq(store.sql("SELECT batches FROM nodes WHERE name = 'cnkey'"), [(1,)], "the node's batch count")
        check_eq(metric(store, 'lmk_store_batches_total{result="conflict"}'), 3, "conflicts counted")
        check_eq(metric(store, 'lmk_store_batches_total{result="rejected"}'), 0, "a conflict is no rejection")
        check_eq(conflict_lines(store), 1, "three conflicts within a minute, one log line")

        # The first content is still a retry after the conflicts.
        status, _, body = store.ingest(first)
        check_eq((status, body["status"]), (200, "duplicate"), f"retry after conflicts: {body}")

        # A second spool of the node (lmkd's spool made anew in the same
        # boot) starts its seq again: the same key but for the spool, the
        # same job and hour: a batch of its own. So is one of an older
        # lmkd that sends no spool.
        for spool, samples in ((SPOOL_B, 5), (None, 2)):
            status, _, body = store.ingest(keyed(spool, samples=samples))
            check_eq((status, body["status"]), (200, "stored"), f"spool {spool}: {body}")
        check_eq(samples_of(store, "9001"), 47, "three spools' batches of seq 3, each counted once")
        check_eq(sorted(store.sql("SELECT spool, seq FROM batches b JOIN nodes n ON n.id = b.node_id "
                                  "WHERE n.name = 'cnkey'")),
                 sorted([("", 3), (SPOOL_A, 3), (SPOOL_B, 3)]), "the receipts' keys")
        check_eq(sorted(r[0] for r in store.sql("SELECT spool FROM sample_packs")), sorted(["", SPOOL_A, SPOOL_B]),
                 "one pack per batch")
        check(all(len(bytes(d)) == 32 for (d,) in store.sql("SELECT digest FROM batches")), "digests kept")

        # A batch stored before digests were kept (schema/0020) has none:
        # whatever comes under its key is a duplicate, as before.
        old = keyed(None, seq=9, samples=11)
        check_eq(store.ingest(old)[0], 200, "a batch to be made old")
        sql_write(store.db, [("UPDATE batches SET digest = NULL WHERE seq = 9", ())])
        status, _, body = store.ingest(keyed(None, seq=9, samples=12))
        check_eq((status, body["status"]), (200, "duplicate"), f"other content, key stored without digest: {body}")
        check_eq(samples_of(store, "9001"), 58, "the old batch's samples, once")
        check_eq(store.stop(), 0, "exit code")

    # Retention deletes a spool's old receipts by the oldest prefix of its
    # seqs. Spools of one node share seq numbers, so each is its own walk:
    # the old spools' receipts go, the young spool's of the same seq stays,
    # and a retry of its batch is still a duplicate.
    sql_write(store.db, [("UPDATE batches SET received_at = received_at - ? WHERE spool <> ?",
                          (3 * 86400, SPOOL_B))])
    with Store(directory=store.dir, db=store.db,
               extra=["--keep-raw-days", "1", "--retention-interval", "1"]) as again:
        end = time.monotonic() + 30
        while metric(again, 'lmk_store_retention_deleted_rows_total{table="batches"}') != 3:
            if time.monotonic() > end:
                fail(f"retention did not delete the 3 old receipts within 30 s:\n{again.read_log()}")
            time.sleep(0.2)
        check_eq(again.sql("SELECT spool, seq FROM batches"), [(SPOOL_B, 3)], "the young spool's receipt kept")
        status, _, body = again.ingest(keyed(SPOOL_B, samples=5))
        check_eq((status, body["status"]), (200, "duplicate"), f"retry of the young spool's batch: {body}")
        check_eq(samples_of(again, "9001"), 58, "no batch counted twice")


if __name__ == "__main__":
    main()
