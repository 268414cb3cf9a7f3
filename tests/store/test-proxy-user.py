#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Single sign-on through a reverse proxy: lmk-store believes the user the
proxy names in --user-header only from --trusted-proxies, and then narrows
every query to that user's jobs like a MUNGE identity; from anywhere else
the header is ignored. The two options go together."""
import os
import subprocess

from lmktest import build_path, fail, log
from storetest import START, Store, check_eq, make_batch, row, workdir


def job(jid, user, account):
    return {"job": jid, "user": user, "account": account, "first_seen": START, "last_seen": START + 60}


def main():
    leads = os.path.join(workdir(), "leads.conf")
    with open(leads, "w") as f:
        f.write("chem carol@EXAMPLE.ORG\n")
    b = make_batch(jobs=[job("601", "alice@EXAMPLE.ORG", "chem"), job("602", "bob@EXAMPLE.ORG", "phys")],
                   rows=[row("601", "/apps/a", "exe", 10, user="alice@EXAMPLE.ORG"),
                         row("602", "/apps/b", "exe", 10, user="bob@EXAMPLE.ORG")])
    hdr = "X-Remote-User"
    with Store(extra=["--user-header", hdr, "--trusted-proxies", "127.0.0.1 ::1", "--leads", leads]) as s:
        check_eq(s.ingest(b)[0], 200, "ingest")

        def get(path, user):
            return s.request("GET", path, headers={hdr: user})

        status, _, body = get("/api/v1/jobs", "alice@EXAMPLE.ORG")
        check_eq((status, [j["job"] for j in body["jobs"]]), (200, ["601"]), "alice through the proxy")
        status, _, body = get("/api/v1/jobs", "carol@EXAMPLE.ORG")
        check_eq((status, [j["job"] for j in body["jobs"]]), (200, ["601"]), "carol leads chem")
        check_eq(get("/api/v1/jobs/602", "alice@EXAMPLE.ORG")[0], 404, "bob's job to alice")
        check_eq(get("/api/v1/jobs/602", "bob@EXAMPLE.ORG")[0], 200, "bob's job to bob")
        for bad in ("alice smith", "", "x" * 65, "a;b"):
            check_eq(get("/api/v1/jobs", bad)[0], 401, f"user {bad!r}")
        status, _, body = s.request("POST", "/api/v1/ingest", body=make_batch(node="cn9"),
                                    headers={hdr: "alice@EXAMPLE.ORG"})
        check_eq(status, 403, f"a person through the proxy may not push: {body}")
        # a token still works beside the proxy, and wins over the header
        from storetest import ADMIN_TOKEN
        status, _, body = s.request("GET", "/api/v1/jobs", token=ADMIN_TOKEN, headers={hdr: "alice@EXAMPLE.ORG"})
        check_eq((status, len(body["jobs"])), (200, 2), "admin token beside the header")

    # the same header from an address that is not a trusted proxy counts for nothing
    with Store(extra=["--user-header", hdr, "--trusted-proxies", "10.9.9.9"]) as s:
        check_eq(s.ingest(b)[0], 200, "ingest")
        status, _, body = s.request("GET", "/api/v1/jobs", headers={hdr: "alice@EXAMPLE.ORG"})
        check_eq(status, 401, f"header from an untrusted address: {body}")

    d = workdir()
    for extra, want in ((["--user-header", hdr], "go together"),
                        (["--trusted-proxies", "10.9.9.9"], "go together"),
                        (["--user-header", hdr, "--trusted-proxies", "proxy.example"], "trusted-proxies"),
                        (["--user-header", "X Remote", "--trusted-proxies", "::1"], "user-header")):
        s = Store(directory=d)
        r = subprocess.run([build_path("store", "lmk-store"), "--db", os.path.join(d, "x.db"), "--listen",
                            "127.0.0.1:0", "--token-file", s.token_file, *extra],
                           capture_output=True, text=True, timeout=30)
        if r.returncode == 0 or want not in r.stderr:
            fail(f"lmk-store {extra}: exit {r.returncode}, expected {want!r}:\n{r.stderr}")
    log("PASS")


if __name__ == "__main__":
    main()
