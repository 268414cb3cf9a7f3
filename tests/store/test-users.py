#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""People who see their own jobs: real users (created here), a real munged,
the real lmk command and store.

Each user's `lmk jobs` lists only their jobs, `lmk job` on someone else's is
"no such job" (404, not 403), a project lead also sees the jobs of the
accounts they lead (from the leads file, reloaded on SIGHUP), and a forged,
replayed, expired or misdirected MUNGE credential is refused (401). People
cannot push, the site-wide views follow --site-views, and every denial is
counted in /metrics."""
import json
import os
import subprocess
import time

from lmktest import build_path, fail, log
from people import credential, lmk, with_people
from storetest import START, Store, check_eq, make_batch, row

def jobs_of(user, store, sock):
    r = lmk(user, store, sock, "--json", "jobs")
    if r.returncode != 0:
        fail(f"lmk jobs as {user}: {r.returncode} {r.stdout} {r.stderr}")
    return sorted(j["job"] for j in json.loads(r.stdout)["jobs"])


def job(jid, user, account):
    return {"job": jid, "user": user, "account": account, "cpus_allocated": 4,
            "first_seen": START, "last_seen": START + 600, "ended": True}


def main():
    out = subprocess.run([build_path("store", "lmk-store"), "--help"], capture_output=True, text=True).stdout
    if "--munge-socket" not in out:
        fail("lmk-store has no --munge-socket")
    with_people(run)


def run(d, sock):
    leads = os.path.join(d, "leads.conf")
    with open(leads, "w") as f:
        f.write("# account  leads\nchem  lmkcarol\n")
    with Store(extra=["--munge-socket", sock, "--leads", leads]) as s:
        b = make_batch(jobs=[job("501", "lmkalice", "chem"), job("502", "lmkbob", "phys"),
                             job("503", "lmkalice", "phys")],
                       rows=[row("501", "/apps/a", "exe", 100, user="lmkalice"),
                             row("502", "/apps/b", "exe", 100, user="lmkbob"),
                             row("503", "/apps/c", "exe", 100, user="lmkalice")])
        check_eq(s.ingest(b)[0], 200, "ingest")
        os.chmod(s.dir, 0o755)

        check_eq(jobs_of("lmkalice", s, sock), ["501", "503"], "lmkalice's jobs")
        check_eq(jobs_of("lmkbob", s, sock), ["502"], "lmkbob's jobs")
        check_eq(jobs_of("lmkcarol", s, sock), ["501"], "lmkcarol leads chem")

        r = lmk("lmkalice", s, sock, "job", "501")
        if r.returncode != 0 or "501" not in r.stdout:
            fail(f"lmk job 501 as its owner: {r.returncode} {r.stdout} {r.stderr}")
        r = lmk("lmkbob", s, sock, "job", "501")
        if r.returncode == 0 or "no such job: 501" not in r.stderr:
            fail(f"lmk job 501 as lmkbob: {r.returncode} {r.stdout} {r.stderr}")
        r = lmk("lmkcarol", s, sock, "job", "503")
        if r.returncode == 0 or "no such job: 503" not in r.stderr:
            fail(f"lmk job 503 (phys) as chem's lead: {r.returncode} {r.stderr}")
        r = lmk("lmkcarol", s, sock, "--json", "job", "501")
        check_eq((r.returncode, json.loads(r.stdout)["user"]), (0, "lmkalice"), "chem's lead reads 501")
        # the findings list follows the same rule
        r = lmk("lmkbob", s, sock, "--json", "flagged", "--since", "7d")
        check_eq(r.returncode, 0, f"lmk flagged as lmkbob: {r.stderr}")
        seen = {f["job"] for f in json.loads(r.stdout)["findings"]}
        check_eq(seen <= {"502"}, True, f"lmkbob's findings name only his job: {seen}")
        # a job that does not exist and one that is not yours look the same
        for path in ("/api/v1/jobs/502", "/api/v1/jobs/999"):
            cred = credential("lmkalice", sock, f"lmk-store GET {path}")
            status, _, body = s.request("GET", path, headers={"Authorization": f"MUNGE {cred}"})
            check_eq((status, body.get("error", "")[:12]), (404, "no such job:"), f"GET {path} as lmkalice")

        # credentials: each for one request, once, in time, and genuine
        cred = credential("lmkalice", sock, "lmk-store GET /api/v1/jobs")
        status, _, body = s.request("GET", "/api/v1/jobs", headers={"Authorization": f"MUNGE {cred}"})
        check_eq(status, 200, f"a fresh credential: {body}")
        status, headers, body = s.request("GET", "/api/v1/jobs", headers={"Authorization": f"MUNGE {cred}"})
        check_eq(status, 401, f"the same credential again: {body}")
        if "replayed" not in body["error"].lower():
            fail(f"a replayed credential's error does not say so: {body}")
        check_eq(headers.get("www-authenticate", "")[:6], "Bearer", "401 asks for credentials")
        cred = credential("lmkalice", sock, "lmk-store GET /api/v1/nodes")
        status, _, body = s.request("GET", "/api/v1/jobs", headers={"Authorization": f"MUNGE {cred}"})
        check_eq(status, 401, f"a credential made for another request: {body}")
        cred = credential("lmkalice", sock, "lmk-store GET /api/v1/jobs", ttl=1)
        time.sleep(2.5)
        status, _, body = s.request("GET", "/api/v1/jobs", headers={"Authorization": f"MUNGE {cred}"})
        check_eq(status, 401, f"an expired credential: {body}")
        forged = cred[:-12] + ("A" if cred[-12] != "A" else "B") + cred[-11:]
        for bad in (forged, "MUNGE:AwQFAAB", "not-a-credential", "x" * 5000):
            status, _, body = s.request("GET", "/api/v1/jobs", headers={"Authorization": f"MUNGE {bad}"})
            check_eq(status, 401, f"credential {bad[:30]!r}…: {body}")
        status, _, body = s.request("GET", "/api/v1/jobs")
        check_eq(status, 401, "no identity")

        # people do not push
        cred = credential("lmkalice", sock, "lmk-store POST /api/v1/ingest")
        status, _, body = s.request("POST", "/api/v1/ingest", body=make_batch(node="cn777"),
                                    headers={"Authorization": f"MUNGE {cred}"})
        check_eq(status, 403, f"ingest with a MUNGE credential: {body}")

        # site-wide aggregates: open to people by default
        r = lmk("lmkbob", s, sock, "--json", "top")
        check_eq(r.returncode, 0, f"lmk top as lmkbob: {r.stderr}")

        # a new lead on SIGHUP; a broken leads file keeps the old list
        s.reload(leads, "chem lmkcarol lmkbob\n", lambda: jobs_of("lmkbob", s, sock) == ["501", "502"],
                 "lmkbob leads chem")
        s.reload(leads, "chem\n", lambda: "Keeping the previous account leads" in s.read_log(),
                 "a broken leads file is reported")
        check_eq(jobs_of("lmkbob", s, sock), ["501", "502"], "the previous leads kept")

        # admin tokens keep working for scripts
        check_eq(sorted(j["job"] for j in s.get_ok("/api/v1/jobs")["jobs"]), ["501", "502", "503"], "admin")

        _, _, metrics = s.request("GET", "/metrics")
        counts = {}
        for line in metrics.splitlines():
            if line.startswith("lmk_store_denied_total{"):
                counts[line.split('"')[1]] = int(line.split()[-1])
        log(f"denials: {counts}")
        if counts.get("not-yours", 0) < 3 or counts.get("bad-credential", 0) < 7 or \
           counts.get("no-identity", 0) < 1 or counts.get("wrong-role", 0) < 1:
            fail(f"denials not counted: {counts}")

    # a site that keeps its views for admins
    with Store(extra=["--munge-socket", sock, "--site-views", "admin"]) as s:
        os.chmod(s.dir, 0o755)
        r = lmk("lmkbob", s, sock, "top")
        if r.returncode == 0 or "for admins" not in r.stderr:
            fail(f"lmk top with --site-views admin: {r.returncode} {r.stderr}")
        check_eq(jobs_of("lmkbob", s, sock), [], "an empty store")
    log("PASS")


if __name__ == "__main__":
    main()
