#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Browser sessions: `lmk web` run by real users (MUNGE) gives a login link
that works once; following it sets an HttpOnly, SameSite=Strict session
cookie that shows the pages and the API of that user's jobs only, until it
expires. A cookie changed to name someone else, signed with another key,
past its time, or sent along with another person's credential is refused
(401), and each refusal is counted. Admins (--admin-users, or an admin
token's session) see every job and the site page."""
import hashlib
import hmac
import json
import os
import re
import subprocess
import time

from lmktest import build_path, fail, log
from people import credential, lmk, with_people
from storetest import ADMIN_TOKEN, START, Store, check_eq, make_batch, row

TTL = 4


def job(jid, user, account, name):
    return {"job": jid, "user": user, "account": account, "name": name, "cpus_allocated": 4,
            "first_seen": START, "last_seen": START + 600, "ended": True}


def login_link(user, s, sock, *args):
    r = lmk(user, s, sock, "--json", "web", *args)
    if r.returncode != 0:
        fail(f"lmk web as {user}: {r.returncode} {r.stdout} {r.stderr}")
    o = json.loads(r.stdout)
    if not o["url"].startswith(s.url("/login?ticket=")):
        fail(f"lmk web's link: {o['url']}")
    return o


def follow(s, url):
    """GET the login link without following its redirect: (status, headers, cookie value)."""
    path = url[len(s.url("")):]
    status, headers, body = s.request("GET", path)
    cookie = None
    m = re.match(r"lmk_session=([^;]*)", headers.get("set-cookie", ""))
    if m:
        cookie = m.group(1)
    return status, headers, body, cookie


def with_cookie(cookie, extra=None):
    return {"Cookie": f"lmk_session={cookie}", **(extra or {})}


def sign(key, kind, user, expires, admin=False, uid=-1):
    payload = f"1:{kind}:{'a' if admin else 'u'}:{uid}:{int(expires)}:{os.urandom(8).hex()}:{user}"
    mac = hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()
    return payload.encode().hex() + "." + mac


def denials(s):
    _, _, metrics = s.request("GET", "/metrics")
    out = {}
    for line in metrics.splitlines():
        if line.startswith("lmk_store_denied_total{"):
            out[line.split('"')[1]] = int(line.split()[-1])
    return out


def main():
    with_people(run)


def run(d, sock):
    keyfile = os.path.join(d, "session.key")
    with open(keyfile, "wb") as f:
        f.write(os.urandom(48))
    os.chmod(keyfile, 0o600)
    with open(keyfile, "rb") as f:
        key = hashlib.sha256(f.read()).digest()
    leads = os.path.join(d, "leads.conf")
    with open(leads, "w") as f:
        f.write("chem lmkcarol\n")

    # a key others may read is refused at start, with the reason
    os.chmod(keyfile, 0o644)
    r = subprocess.run([build_path("store", "lmk-store"), "--db", os.path.join(d, "x.db"), "--listen",
                        "127.0.0.1:0", "--token-file", "/dev/null", "--session-key", keyfile],
                       capture_output=True, text=True, timeout=30)
    if r.returncode == 0 or "chmod 600" not in r.stderr:
        fail(f"a world-readable session key: {r.returncode} {r.stderr}")
    os.chmod(keyfile, 0o600)

    with Store(extra=["--munge-socket", sock, "--leads", leads, "--session-key", keyfile,
                      "--session-ttl", str(TTL), "--admin-users", "lmkdave"]) as s:
        b = make_batch(jobs=[job("501", "lmkalice", "chem", "alice-a"), job("502", "lmkbob", "phys", "bob-b"),
                             job("503", "lmkalice", "phys", "alice-c")],
                       rows=[row("501", "/apps/a", "exe", 100, user="lmkalice"),
                             row("502", "/apps/b", "exe", 100, user="lmkbob"),
                             row("503", "/apps/c", "exe", 100, user="lmkalice")])
        check_eq(s.ingest(b)[0], 200, "ingest")
        os.chmod(s.dir, 0o755)

        # lmk web: a link to the job's page, that works once
        o = login_link("lmkalice", s, sock, "501")
        check_eq((o["user"], o["admin"], o["session_seconds"]), ("lmkalice", False, TTL), "the ticket's claims")
        status, headers, _, cookie = follow(s, o["url"])
        check_eq((status, headers.get("location")), (303, "jobs/501"), "the login link redirects to the job")
        sc = headers.get("set-cookie", "")
        for flag in ("HttpOnly", "SameSite=Strict", f"Max-Age={TTL}"):
            if flag not in sc:
                fail(f"the session cookie lacks {flag}: {sc}")
        if not cookie:
            fail(f"no session cookie: {sc}")
        status, headers, body, again = follow(s, o["url"])
        check_eq((status, again), (401, None), "the login link a second time")
        if "used already" not in body or not headers.get("content-type", "").startswith("text/html"):
            fail(f"a used link's page: {headers} {body[:200]}")

        # the cookie is alice: her jobs, in the API and the pages
        status, _, body = s.request("GET", "/api/v1/jobs", headers=with_cookie(cookie))
        check_eq((status, sorted(j["job"] for j in body["jobs"])), (200, ["501", "503"]), "alice's jobs by cookie")
        status, headers, page = s.request("GET", "/jobs", headers=with_cookie(cookie))
        check_eq(status, 200, "the job list page")
        for jid in ("501", "503"):
            if f'href="./jobs/{jid}' not in page:
                fail(f"the job list does not link job {jid}")
        if "502" in page or "bob-b" in page:
            fail("alice's job list shows bob's job")
        csp = headers.get("content-security-policy", "")
        if "default-src 'none'" not in csp:
            fail(f"pages without a content security policy: {csp!r}")
        status, _, page = s.request("GET", "/jobs/502", headers=with_cookie(cookie))
        check_eq(status, 404, "bob's job page for alice")
        if "no such job: 502" not in page or "bob-b" in page:
            fail(f"bob's job page for alice tells too much: {page[:300]}")
        status, _, page = s.request("GET", "/jobs/501", headers=with_cookie(cookie))
        check_eq(status, 200, "alice's job page")
        if "alice-a" not in page or "/apps/a" not in page:
            fail("alice's job page lacks its name or object")

        # a cookie along with someone else's credential
        cred = credential("lmkbob", sock, "lmk-store GET /api/v1/jobs")
        status, _, body = s.request("GET", "/api/v1/jobs",
                                    headers=with_cookie(cookie, {"Authorization": f"MUNGE {cred}"}))
        check_eq(status, 401, f"alice's cookie with bob's credential: {body}")
        # ... and with the same person's: fine
        cred = credential("lmkalice", sock, "lmk-store GET /api/v1/jobs")
        status, _, body = s.request("GET", "/api/v1/jobs",
                                    headers=with_cookie(cookie, {"Authorization": f"MUNGE {cred}"}))
        check_eq(status, 200, f"alice's cookie with her own credential: {body}")

        # changed, foreign, expired, of the wrong kind
        payload, mac = cookie.split(".")
        text = bytes.fromhex(payload).decode()
        changed = text.replace(":lmkalice", ":lmkbob").encode().hex() + "." + mac
        stranger = sign(os.urandom(32), "s", "lmkbob", time.time() + 100)
        expired = sign(key, "s", "lmkbob", time.time() - 1)
        ticket = sign(key, "t", "lmkbob", time.time() + 100)
        for what, bad in (("changed to name bob", changed), ("signed with another key", stranger),
                          ("expired", expired), ("a login ticket as a cookie", ticket), ("garbage", "x" * 600)):
            status, _, body = s.request("GET", "/api/v1/jobs", headers=with_cookie(bad))
            check_eq(status, 401, f"a cookie {what}: {body}")
        # the key signs: a cookie for bob made with it is bob (the format is docs/web.md's)
        status, _, body = s.request("GET", "/api/v1/jobs",
                                    headers=with_cookie(sign(key, "s", "lmkbob", time.time() + 100)))
        check_eq((status, [j["job"] for j in body["jobs"]]), (200, ["502"]), "a cookie signed with the key")
        # an expired ticket, a used one
        status, _, body = s.request("GET", "/login?ticket=" + sign(key, "t", "lmkbob", time.time() - 1))
        check_eq(status, 401, "an expired login ticket")
        if "expired" not in body:
            fail(f"an expired ticket's page does not say so: {body[:300]}")

        # a lead, an admin
        o = login_link("lmkcarol", s, sock)
        status, _, _, carol = follow(s, o["url"])
        status, _, body = s.request("GET", "/api/v1/jobs", headers=with_cookie(carol))
        check_eq(sorted(j["job"] for j in body["jobs"]), ["501"], "chem's lead by cookie")
        o = login_link("lmkdave", s, sock, "--site")
        check_eq(o["admin"], True, "an --admin-users person's ticket")
        status, headers, _, dave = follow(s, o["url"])
        check_eq(headers.get("location"), "site", "--site leads to the site page")
        status, _, body = s.request("GET", "/api/v1/jobs", headers=with_cookie(dave))
        check_eq(sorted(j["job"] for j in body["jobs"]), ["501", "502", "503"], "an admin person's jobs")
        status, _, page = s.request("GET", "/site", headers=with_cookie(dave))
        check_eq(status, 200, "the site page for an admin")
        if "Jobs that stand out" not in page:
            fail("the admin's site page lacks the jobs that stand out")
        # an admin token's session is an admin's
        status, _, body = s.request("POST", "/api/v1/sessions", body={"next": "jobs"}, token=ADMIN_TOKEN)
        check_eq((status, body.get("admin")), (200, True), "a ticket for an admin token")
        for bad_next in ("//evil.example/", "https://evil.example/", "jobs/../../x", "nodes"):
            status, _, body = s.request("POST", "/api/v1/sessions", body={"next": bad_next}, token=ADMIN_TOKEN)
            check_eq((status, body.get("field")), (400, "next"), f"next={bad_next!r}")

        # time runs out
        time.sleep(TTL + 1)
        status, _, body = s.request("GET", "/api/v1/jobs", headers=with_cookie(cookie))
        check_eq(status, 401, f"alice's cookie after --session-ttl: {body}")
        status, _, page = s.request("GET", "/jobs", headers=with_cookie(cookie))
        check_eq(status, 401, "a page with an expired cookie")
        if "lmk web" not in page:
            fail("the sign-in page does not say how to sign in")

        status, headers, _ = s.request("GET", "/logout")
        if "lmk_session=;" not in headers.get("set-cookie", "") or "Max-Age=0" not in headers.get("set-cookie", ""):
            fail(f"logout does not clear the cookie: {headers}")

        counts = denials(s)
        log(f"denials: {counts}")
        if counts.get("bad-session", 0) < 9 or counts.get("conflicting-identity", 0) < 1 or \
           counts.get("not-yours", 0) < 1:
            fail(f"denials not counted: {counts}")
    log("PASS")


if __name__ == "__main__":
    main()
