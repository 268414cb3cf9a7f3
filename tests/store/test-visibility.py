#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Visibility first (issue 33, item 5), as real people: users made here, a
real munged, MUNGE credentials per request.

No answer to a person differs by whether something exists that they may
not see: a job id on two clusters that are neither theirs is "no such
job" like an id nobody used (not 409), one of them theirs is theirs, and
/metrics (open to all) counts both refusals alike. A site view narrowed
to an account (account= of objects, packages, families and the
application mix) is for admins and the account's leads: anyone else gets
the same 403 for an account that exists and one that does not. People
see the nodes but not their batch keys (boot id, last seq), on the API
and the site page."""
import json
import os
import re

from lmktest import fail, log
from people import credential, with_people
from storetest import ADMIN_TOKEN, START, Store, check_eq, make_batch, row


def job(jid, user, account, cluster):
    return {"job": jid, "user": user, "account": account, "cluster": cluster, "first_seen": START,
            "last_seen": START + 600, "ended": True}


class Person:
    def __init__(self, store, sock, user):
        self.store, self.sock, self.user = store, sock, user

    def get(self, path):
        """GET path (with its query) with a credential made for it."""
        cred = credential(self.user, self.sock, f"lmk-store GET {path.split('?')[0]}")
        return self.store.request("GET", path, headers={"Authorization": f"MUNGE {cred}"})


def denied(store, reason):
    _, _, text = store.request("GET", "/metrics")
    m = re.search(r'^lmk_store_denied_total\{reason="' + reason + r'"\} (\d+)$', text, re.M)
    return int(m.group(1)) if m else 0


def run(d, sock):
    leads = os.path.join(d, "leads.conf")
    with open(leads, "w") as f:
        f.write("chem lmkcarol\n")
    with Store(extra=["--munge-socket", sock, "--leads", leads]) as s:
        os.chmod(s.dir, 0o755)
        batches = [
            # 601: on two clusters, bob's and dave's
            make_batch(node="cnv1", seq=1, cluster="c1",
                       jobs=[job("601", "lmkbob", "phys", "c1"), job("602", "lmkalice", "chem", "c1"),
                             job("603", "lmkalice", "chem", "c1")],
                       rows=[row("601", "/home/lmkbob/secret-project/solver", "exe", 50, user="lmkbob"),
                             row("602", "/apps/chem/a", "exe", 40, user="lmkalice"),
                             row("603", "/apps/chem/b", "exe", 30, user="lmkalice")]),
            make_batch(node="cnv2", seq=1, cluster="c2",
                       jobs=[job("601", "lmkdave", "geo", "c2"), job("602", "lmkbob", "phys", "c2"),
                             job("603", "lmkalice", "chem", "c2")],
                       rows=[row("601", "/home/lmkdave/x", "exe", 20, user="lmkdave"),
                             row("602", "/home/lmkbob/secret-project/solver", "exe", 10, user="lmkbob"),
                             row("603", "/apps/chem/b", "exe", 5, user="lmkalice")]),
        ]
        for b in batches:
            check_eq(s.ingest(b)[0], 200, "ingest")
        alice, carol = Person(s, sock, "lmkalice"), Person(s, sock, "lmkcarol")

        # A job id: only the clusters' jobs the asker may see count.
        before = denied(s, "not-yours")
        st601, _, body601 = alice.get("/api/v1/jobs/601")
        after601 = denied(s, "not-yours")
        st999, _, body999 = alice.get("/api/v1/jobs/999")
        after999 = denied(s, "not-yours")
        check_eq((st601, body601), (404, {"error": "no such job: 601"}), "601 on two clusters, neither alice's")
        check_eq((st999, body999), (404, {"error": "no such job: 999"}), "an id nobody used")
        check_eq((after601 - before, after999 - after601), (1, 1), "/metrics counts both refusals alike")
        status, _, body = alice.get("/api/v1/jobs/602")
        check_eq((status, body.get("user"), body.get("cluster")), (200, "lmkalice", "c1"),
                 f"602: alice's on c1, bob's on c2: {body}")
        status, _, body = alice.get("/api/v1/jobs/602?cluster=c2")
        check_eq((status, body), (404, {"error": "no such job: 602"}), "602 on c2, bob's")
        status, _, body = alice.get("/api/v1/jobs/603")
        check_eq((status, body.get("field")), (409, "cluster"), f"603: alice's on both clusters: {body}")
        status, _, body = s.get("/api/v1/jobs/601")
        check_eq(status, 409, f"an admin: 601 on two clusters: {body}")
        # the page answers as its API
        status, _, page = alice.get("/jobs/601")
        check_eq(status, 404, f"the job page of 601 as alice: {page[:200]}")

        # Two runs compared: each as its own answer, whichever side it is.
        # Bob's 601 (c1) and an id nobody used are the same 404, counted
        # alike; alice's own two compare; her account's lead sees both.
        answers = []
        for other in ("601", "999"):
            before = denied(s, "not-yours")
            st_b, _, body_b = alice.get(f"/api/v1/compare?a=602&b={other}&cluster=c1")
            st_a, _, body_a = alice.get(f"/api/v1/compare?a={other}&b=602&cluster=c1")
            answers.append(((st_b, body_b), (st_a, body_a), denied(s, "not-yours") - before))
        for other, answer in zip(("601", "999"), answers):
            check_eq(answer, ((404, {"error": f"no such job: {other}", "field": "b"}),
                              (404, {"error": f"no such job: {other}", "field": "a"}), 2),
                     f"{other} compared with alice's 602, as alice")
        status, _, page = alice.get("/compare?a=602&b=601&cluster=c1")
        check_eq((status, "secret-project" in page), (404, False), "the compare page of bob's job, as alice")
        status, _, body = alice.get("/api/v1/compare?a=602&b=603&cluster=c1")
        check_eq((status, body.get("a", {}).get("user"), body.get("b", {}).get("job")), (200, "lmkalice", "603"),
                 f"alice's two jobs: {body}")
        status, _, body = carol.get("/api/v1/compare?a=602&b=603&cluster=c1")
        check_eq(status, 200, f"chem's lead compares chem's jobs: {body}")
        status, _, body = alice.get("/api/v1/compare?a=603&b=602&cluster_a=c2&cluster_b=c2")
        check_eq((status, body), (404, {"error": "no such job: 602", "field": "b"}), "602 on c2 is bob's")

        # Site views narrowed to an account: its leads' and admins'.
        for path in ("/api/v1/objects", "/api/v1/packages", "/api/v1/families", "/api/v1/apps"):
            answers = []
            for account in ("phys", "nosuchaccount"):
                status, _, body = alice.get(f"{path}?account={account}")
                answers.append((status, body))
            check_eq(answers[0], (403, {"error": "a site view narrowed to an account is for admins and the "
                                                 "account's leads", "field": "account"}),
                     f"{path}?account=phys as alice")
            check_eq(answers[1], answers[0], f"{path}: an account that does not exist, the same answer")
            status, _, body = carol.get(f"{path}?account=chem")
            check_eq(status, 200, f"{path}?account=chem as its lead: {body}")
        status, _, body = carol.get("/api/v1/objects?account=chem&kind=exe")
        check_eq(sorted(o["object"] for o in body["objects"]), ["/apps/chem/a", "/apps/chem/b"],
                 "chem's executables, to its lead")
        status, _, body = s.get("/api/v1/objects?account=phys&kind=exe")
        check_eq([o["object"] for o in body["objects"]], ["/home/lmkbob/secret-project/solver"],
                 "phys's executables, to an admin")
        status, _, page = alice.get("/site/apps?account=phys")
        check_eq(status, 403, "the application mix page narrowed to phys, as alice")
        # the site as a whole stays a site view
        status, _, body = alice.get("/api/v1/objects?kind=exe")
        check_eq(status, 200, f"objects as alice: {body}")

        # Nodes: their batch keys are for admins.
        status, _, body = alice.get("/api/v1/nodes")
        check_eq(status, 200, f"nodes as alice: {body}")
        check_eq(sorted((n["node"], n["boot_id"], n["last_seq"]) for n in body["nodes"]),
                 [("cnv1", None, None), ("cnv2", None, None)], "no boot id or seq for a person")
        check_eq(all(n["last_push"] > 0 and n["cpus"] == 64 for n in body["nodes"]), True,
                 "the rest of a node for a person")
        status, _, text = alice.get("/api/v1/nodes?format=csv")
        check_eq((status, "boot-a" in text), (200, False), f"CSV of the nodes as alice: {text[:300]}")
        status, _, page = alice.get("/site")
        check_eq((status, "boot-a" in page), (200, False), "the site page as alice")
        nodes = s.get_ok("/api/v1/nodes")["nodes"]
        check_eq(sorted((n["node"], n["boot_id"], n["last_seq"]) for n in nodes),
                 [("cnv1", "boot-a", 1), ("cnv2", "boot-a", 1)], "an admin sees the keys")
        check_eq(s.stop(), 0, "exit code")
    log("PASS")


def main():
    with_people(run)


if __name__ == "__main__":
    main()
