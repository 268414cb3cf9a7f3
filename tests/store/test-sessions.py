#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""Browser sessions: `lmk web` run by real users (MUNGE) gives a login link
that works once; following it sets an HttpOnly, SameSite=Strict session
cookie that shows the pages and the API of that user's jobs only, until it
expires. A cookie changed to name someone else, signed with another key,
past its time, or sent along with another person's credential is refused
(401), and each refusal is counted. Admins (--admin-users, or an admin
token's session) see every job and the site page.

Sessions end (issue 33):
- a session cookie cannot mint a login ticket, so it cannot renew itself;
- an admin token's session ends when SIGHUP takes the token away; a
  person is an admin while --admin-users says so now, not when they signed
  in (a restart without it takes it away);
- one identity mints at most 10 tickets in 2 minutes (429 with
  Retry-After beyond), and everyone else still signs in meanwhile;
- a ticket works once across two stores that share the session key and the
  database;
- a login link for someone else than the browser is signed in as asks
  first (a page with a form posted to the store, with a code only that
  browser's cookies make valid), whether the browser came from the store's
  own address or from a link on another site;
- `lmk web --open` hands the browser a page in the user's runtime
  directory, readable by them alone, not the ticket on a command line.
A headless Chromium (when there is one) goes through the confirmation and
the --open page as a user would."""
import hashlib
import hmac
import json
import os
import pwd
import re
import stat
import subprocess
import time

import rawhttp
from lmktest import build_path, check, fail, log
from people import as_user, credential, lmk, with_people
from storetest import (ADMIN_TOKEN, BOUND_TOKEN, NODE_TOKEN, START, Store, check_eq, make_batch, row, sql_write,
                       workdir)

TTL = 4
SPARE_ADMIN = "admin-token-spare-7d41c0a9e2b3"
REVOKED_ADMIN = "admin-token-revoked-5e8a1f0c93"
TOKENS = [f"node {NODE_TOKEN}", f"admin {ADMIN_TOKEN}", f"node {BOUND_TOKEN} cn042", f"admin {SPARE_ADMIN}",
          f"admin {REVOKED_ADMIN}"]
TICKETS_MAX = 10  # SESSION_TICKETS_MAX


def job(jid, user, account, name):
    return {"job": jid, "user": user, "account": account, "name": name, "cpus_allocated": 4,
            "first_seen": START, "last_seen": START + 600, "ended": True}


BATCH = make_batch(jobs=[job("501", "lmkalice", "chem", "alice-a"), job("502", "lmkbob", "phys", "bob-b"),
                         job("503", "lmkalice", "phys", "alice-c")],
                   rows=[row("501", "/apps/a", "exe", 100, user="lmkalice"),
                         row("502", "/apps/b", "exe", 100, user="lmkbob"),
                         row("503", "/apps/c", "exe", 100, user="lmkalice")])


def login_link(user, s, sock, *args):
    r = lmk(user, s, sock, "--json", "web", *args)
    if r.returncode != 0:
        fail(f"lmk web as {user}: {r.returncode} {r.stdout} {r.stderr}")
    o = json.loads(r.stdout)
    if not o["url"].startswith(s.url("/login?ticket=")):
        fail(f"lmk web's link: {o['url']}")
    return o


def token_link(s, token, next_page="jobs"):
    status, _, body = s.request("POST", "/api/v1/sessions", body={"next": next_page}, token=token)
    check_eq(status, 200, f"a ticket for an admin token: {body}")
    return s.url("/") + body["login"]


def follow(s, url, jar=None, cross_site=False):
    """GET the login link as a browser with jar would, without following its
    redirect: (status, headers, body, the jar after it)."""
    jar = jar or rawhttp.Jar()
    headers = jar.header(cross_site) + ([("Sec-Fetch-Site", "cross-site")] if cross_site else [])
    status, h, body = rawhttp.request(s.port, "GET", url[len(s.url("")):], headers)
    return status, h, body, jar.copy().take(h)


def sign_in(s, url):
    """A browser without a session follows url: its cookie jar."""
    status, h, body, jar = follow(s, url)
    check_eq(status, 303, f"the login link: {body}")
    if not jar.get("lmk_session"):
        fail(f"no session cookie: {h}")
    return jar


def with_cookie(cookie, extra=None):
    return {"Cookie": f"lmk_session={cookie}", **(extra or {})}


def jobs_of(s, jar):
    status, _, body = rawhttp.request(s.port, "GET", "/api/v1/jobs", jar.header())
    if status != 200:
        return status, body
    return status, sorted(j["job"] for j in json.loads(body)["jobs"])


def sign(key, kind, user, expires, admin=False, uid=-1, version=2, ref=None):
    nonce = os.urandom(8).hex()
    if version == 1:
        payload = f"1:{kind}:{'a' if admin else 'u'}:{uid}:{int(expires)}:{nonce}:{user}"
    else:
        payload = f"2:{kind}:{'a' if admin else 'u'}:{uid}:{int(expires)}:{nonce}:{ref or '-'}:{user}"
    mac = hmac.new(key, payload.encode(), hashlib.sha256).hexdigest()
    return payload.encode().hex() + "." + mac


def claims(token):
    return bytes.fromhex(token.split(".")[0]).decode().split(":")


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

    basics(d, sock, key, keyfile, leads)
    options = ["--munge-socket", sock, "--leads", leads, "--session-key", keyfile, "--admin-users", "lmkdave"]
    with Store(tokens=TOKENS, extra=options) as s:
        check_eq(s.ingest(BATCH)[0], 200, "ingest")
        os.chmod(s.dir, 0o755)
        revoked(s)
        limits(s, sock)
        two_stores(s, sock, options)
        confirmation(s, sock)
        in_browser(d, s, sock)
        counts = denials(s)
        log(f"denials: {counts}")
        if counts.get("ticket-limit", 0) < 5 or counts.get("bad-session", 0) < 8:
            fail(f"denials not counted: {counts}")
        admin_users_now(s, sock, options)
    log("PASS")


def basics(d, sock, key, keyfile, leads):
    with Store(extra=["--munge-socket", sock, "--leads", leads, "--session-key", keyfile,
                      "--session-ttl", str(TTL), "--admin-users", "lmkdave"]) as s:
        check_eq(s.ingest(BATCH)[0], 200, "ingest")
        os.chmod(s.dir, 0o755)

        # lmk web: a link to the job's page, that works once
        o = login_link("lmkalice", s, sock, "501")
        check_eq((o["user"], o["admin"], o["session_seconds"]), ("lmkalice", False, TTL), "the ticket's claims")
        status, headers, _, jar = follow(s, o["url"])
        check_eq((status, rawhttp.header(headers, "location")), (303, "jobs/501"), "the login link redirects to the job")
        flags = {v.split("=")[0]: v for k, v in headers if k == "set-cookie"}
        for name, want in (("lmk_session", ("HttpOnly", "SameSite=Strict", f"Max-Age={TTL}")),
                           ("lmk_signed_in", ("HttpOnly", "SameSite=Lax", f"Max-Age={TTL}"))):
            for flag in want:
                if flag not in flags.get(name, ""):
                    fail(f"the cookie {name} lacks {flag}: {flags}")
        cookie = jar.get("lmk_session")
        # the mark says who is signed in, and is no identity
        mark = jar.get("lmk_signed_in")
        check_eq((claims(mark)[1], claims(mark)[5], claims(mark)[7]),
                 ("m", claims(cookie)[5], "lmkalice"), "the mark: the session's nonce and user")
        status, _, body = s.request("GET", "/api/v1/jobs", headers={"Cookie": f"lmk_signed_in={mark}"})
        check_eq(status, 401, f"the mark as an identity: {body}")
        status, headers, body, again = follow(s, o["url"])
        check_eq((status, again.get("lmk_session")), (401, None), "the login link a second time")
        if "used already" not in body or not rawhttp.header(headers, "content-type").startswith("text/html"):
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

        # a session does not renew itself: a ticket needs MUNGE, a token or a proxy
        status, _, body = s.request("POST", "/api/v1/sessions", body={}, headers=with_cookie(cookie))
        check_eq(status, 401, f"a ticket for a session cookie: {body}")
        if "lmk web" not in body.get("error", ""):
            fail(f"the refusal does not say what signs in: {body}")
        cred = credential("lmkalice", sock, "lmk-store POST /api/v1/sessions")
        status, _, body = s.request("POST", "/api/v1/sessions", body={},
                                    headers=with_cookie(cookie, {"Authorization": f"MUNGE {cred}"}))
        check_eq(status, 200, f"a ticket for alice's credential, her cookie beside it: {body}")

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

        # changed, foreign, expired, of the wrong kind, of the format before
        # version 2 (an admin then was one until the cookie expired)
        payload, mac = cookie.split(".")
        text = bytes.fromhex(payload).decode()
        changed = text.replace(":lmkalice", ":lmkbob").encode().hex() + "." + mac
        stranger = sign(os.urandom(32), "s", "lmkbob", time.time() + 100)
        expired = sign(key, "s", "lmkbob", time.time() - 1)
        ticket = sign(key, "t", "lmkbob", time.time() + 100)
        version1 = sign(key, "s", "admin", time.time() + 100, admin=True, version=1)
        unknown_token = sign(key, "s", "admin", time.time() + 100, admin=True, ref="00" * 16)
        for what, bad in (("changed to name bob", changed), ("signed with another key", stranger),
                          ("expired", expired), ("a login ticket as a cookie", ticket), ("garbage", "x" * 600),
                          ("of version 1 for an admin", version1), ("of an admin token not in the file", unknown_token)):
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
        carol = sign_in(s, o["url"])
        check_eq(jobs_of(s, carol), (200, ["501"]), "chem's lead by cookie")
        o = login_link("lmkdave", s, sock, "--site")
        check_eq(o["admin"], True, "an --admin-users person's ticket")
        status, headers, _, dave = follow(s, o["url"])
        check_eq(rawhttp.header(headers, "location"), "site", "--site leads to the site page")
        check_eq(claims(dave.get("lmk_session"))[2], "u", "an --admin-users person's session: a person's")
        check_eq(jobs_of(s, dave), (200, ["501", "502", "503"]), "an admin person's jobs")
        status, _, page = rawhttp.request(s.port, "GET", "/site", dave.header())
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

        status, headers, _ = rawhttp.request(s.port, "GET", "/logout")
        cleared = [v for k, v in headers if k == "set-cookie" and "Max-Age=0" in v]
        if not any(v.startswith("lmk_session=;") for v in cleared) or \
           not any(v.startswith("lmk_signed_in=;") for v in cleared):
            fail(f"logout does not clear the cookies: {headers}")

        counts = denials(s)
        log(f"denials: {counts}")
        if counts.get("bad-session", 0) < 11 or counts.get("conflicting-identity", 0) < 1 or \
           counts.get("not-yours", 0) < 1:
            fail(f"denials not counted: {counts}")


def revoked(s):
    """An admin token's session lasts while the token is in the token file."""
    kept = sign_in(s, token_link(s, ADMIN_TOKEN))
    gone = sign_in(s, token_link(s, REVOKED_ADMIN))
    check_eq(jobs_of(s, gone), (200, ["501", "502", "503"]), "the session of an admin token")
    s.reload(s.token_file, "\n".join(t for t in TOKENS if REVOKED_ADMIN not in t) + "\n",
             lambda: s.get("/api/v1/jobs", token=REVOKED_ADMIN)[0] == 401, "the revoked token refused")
    status, body = jobs_of(s, gone)
    check_eq(status, 401, f"the session of a token taken away by SIGHUP: {body}")
    if "no longer valid" not in body:
        fail(f"the refusal does not say why: {body}")
    check_eq(jobs_of(s, kept), (200, ["501", "502", "503"]), "the session of a token still there")
    s.reload(s.token_file, "\n".join(TOKENS) + "\n",
             lambda: s.get("/api/v1/jobs", token=REVOKED_ADMIN)[0] == 200, "the token back")
    check_eq(jobs_of(s, gone), (200, ["501", "502", "503"]), "the session once its token is back")


def limits(s, sock):
    """One identity mints a few tickets at a time; nobody else notices."""
    got = []
    for _ in range(TICKETS_MAX + 5):
        status, headers, body = s.request("POST", "/api/v1/sessions", body={}, token=SPARE_ADMIN)
        got.append((status, headers.get("retry-after")))
    check_eq([g[0] for g in got], [200] * TICKETS_MAX + [429] * 5, "tickets of one token in a row")
    retry = int(got[-1][1] or 0)
    check(0 < retry <= 120, f"Retry-After of a refused ticket: {got[-1]}")
    # everyone else signs in meanwhile
    o = login_link("lmkalice", s, sock, "501")
    check_eq(jobs_of(s, sign_in(s, o["url"])), (200, ["501", "503"]), "alice signs in beside the flood")
    status, _, body = s.request("POST", "/api/v1/sessions", body={}, token=ADMIN_TOKEN)
    check_eq(status, 200, f"another token's ticket beside the flood: {body}")


def two_stores(s, sock, options):
    """Two stores behind one address share the key and the database: a
    ticket used at either is used at both. Rows of tickets long expired
    go as others are recorded."""
    now = int(time.time())
    sql_write(s.db, [("INSERT INTO used_tickets (nonce, expires) VALUES (?, ?)", (4711, now - 7200)),
                     ("INSERT INTO used_tickets (nonce, expires) VALUES (?, ?)", (4712, now - 60))])
    with Store(db=s.db, tokens=TOKENS, extra=options) as other:
        for first, second in ((other, s), (s, other)):
            o = login_link("lmkcarol", s, sock)
            url = first.url("/") + o["url"][len(s.url("/")):]
            status, _, body, _ = follow(first, url)
            check_eq(status, 303, f"a ticket at the first store: {body[:200]}")
            status, _, body, _ = follow(second, second.url("/") + o["url"][len(s.url("/")):])
            check_eq(status, 401, "the same ticket at the other store")
            if "used already" not in body:
                fail(f"the other store's page: {body[:300]}")
    left = sorted(n for (n,) in s.sql("SELECT nonce FROM used_tickets WHERE nonce IN (4711, 4712)"))
    check_eq(left, [4712], "the rows of used tickets after more logins (an hour past expiry: gone)")
    check(s.sql("SELECT count(*) FROM used_tickets")[0][0] >= 3, "the used tickets are recorded")


def confirmation(s, sock):
    """A login link for someone else asks before it switches the browser."""
    alice = sign_in(s, login_link("lmkalice", s, sock)["url"])
    o = login_link("lmkbob", s, sock, "502")
    path = o["url"][len(s.url("")):]

    # from the store's own address, or from another site's link (then the
    # browser sends the mark alone)
    for cross_site in (False, True):
        status, headers, page, after = follow(s, o["url"], alice, cross_site)
        check_eq(status, 200, f"bob's link in alice's browser (cross-site {cross_site}): {page[:300]}")
        check_eq([v for k, v in headers if k == "set-cookie"], [], "cookies set by the confirmation page")
        for want in ("Switch user?", "signed in as <strong>lmkalice</strong>", "sign it in as <strong>lmkbob</strong>",
                     'method="post"'):
            if want not in page:
                fail(f"the confirmation page lacks {want!r}: {page}")
    action = re.search(r'<form [^>]*action="([^"]*)"', page).group(1).replace("&amp;", "&")
    check(action.startswith("login?ticket=") and "&next=jobs%2F502&" in action and "&confirm=" in action,
          f"the form's action: {action}")
    code = re.search(r"confirm=([0-9a-f]+)", action).group(1)
    post = "/" + action

    def confirm(jar, where, site="same-origin"):
        headers = jar.header(site == "cross-site") + ([("Sec-Fetch-Site", site)] if site else []) + \
            [("Content-Type", "application/x-www-form-urlencoded")]
        return rawhttp.request(s.port, "POST", where, headers)

    carol = sign_in(s, login_link("lmkcarol", s, sock)["url"])
    for what, jar, where, site in (
            ("posted from another site", alice, post, "cross-site"),
            ("without the browser's cookies", rawhttp.Jar(), post, "same-origin"),
            ("from another browser", carol, post, "same-origin"),
            ("with another code", alice, post.replace(code, "0" * 32), "same-origin"),
            ("with a code for another ticket", alice, post.replace(path.split("ticket=")[1].split("&")[0],
                                                                   login_link("lmkbob", s, sock)["url"]
                                                                   .split("ticket=")[1].split("&")[0]),
             "same-origin")):
        status, headers, body = confirm(jar, where, site)
        check_eq(status, 403, f"a confirmation {what}: {body[:300]}")
        check_eq([v for k, v in headers if k == "set-cookie"], [], f"cookies set by a confirmation {what}")
    check_eq(jobs_of(s, alice), (200, ["501", "503"]), "alice's browser after the refused confirmations")

    before = alice.copy()
    status, headers, body = confirm(alice, post)
    check_eq((status, rawhttp.header(headers, "location")), (303, "jobs/502"), f"bob's link confirmed: {body}")
    check_eq(jobs_of(s, alice.take(headers)), (200, ["502"]), "the browser after the confirmation")
    status, _, body = confirm(before, post)
    check_eq(status, 401, f"a confirmed ticket posted again: {body[:300]}")

    # a browser without a session, or signed in as the same person, is
    # not asked; one led here by another site gets a page of the store's
    # that goes on, so that the next page has the SameSite=Strict session
    again = login_link("lmkbob", s, sock, "502")
    status, headers, body, _ = follow(s, again["url"], alice)
    check_eq((status, rawhttp.header(headers, "location")), (303, "jobs/502"), f"bob's link for bob: {body[:300]}")
    status, headers, page, fresh = follow(s, login_link("lmkalice", s, sock, "501")["url"], cross_site=True)
    check_eq(status, 200, f"a link from another site in a browser without a session: {page[:300]}")
    check('<meta http-equiv="refresh" content="0; url=jobs/501">' in page and "lmkalice" in page,
          f"the page that goes on: {page}")
    check_eq(jobs_of(s, fresh), (200, ["501", "503"]), "the session from another site's link")


def admin_users_now(s, sock, options):
    """Whether a person is an admin is --admin-users' word now."""
    dave = sign_in(s, login_link("lmkdave", s, sock)["url"])
    check_eq(jobs_of(s, dave), (200, ["501", "502", "503"]), "dave, an admin")
    s.stop()
    s.extra = [o for o in options if o not in ("--admin-users", "lmkdave")]
    s.start()
    check_eq(jobs_of(s, dave), (200, []), "dave's session after a restart without --admin-users")
    status, _, page = rawhttp.request(s.port, "GET", "/jobs", dave.header())
    check(status == 200 and 'class="tag">admin' not in page, f"dave's page after the restart: {status}")


def in_browser(d, s, sock):
    """Chromium: the confirmation page, clean, and the way through it; the
    page `lmk web --open` hands xdg-open (read by a fake one here), which
    signs a new browser in and asks one signed in as someone else."""
    rundir = os.path.join(d, "run-alice")
    fakebin = os.path.join(d, "fakebin")
    os.makedirs(rundir, exist_ok=True)
    os.makedirs(fakebin, exist_ok=True)
    alice = pwd.getpwnam("lmkalice")
    os.chown(rundir, alice.pw_uid, alice.pw_gid)
    os.chmod(rundir, 0o700)
    with open(os.path.join(fakebin, "xdg-open"), "w") as f:
        f.write('#!/bin/sh\nprintf "%s\\n" "$@" > "$XDG_RUNTIME_DIR/xdg-open.args"\n')
    os.chmod(os.path.join(fakebin, "xdg-open"), 0o755)
    env = {"PATH": f"{fakebin}:/usr/bin:/bin", "DISPLAY": ":0", "XDG_RUNTIME_DIR": rundir}

    def web_open(*args):
        r = as_user("lmkalice", [build_path("cli", "lmk"), "--store", s.url(), "--munge-socket", sock,
                                 "web", "--open", *args], env=env)
        check_eq(r.returncode, 0, f"lmk web --open: {r.stderr}")
        with open(os.path.join(rundir, "xdg-open.args")) as f:
            argv = f.read().splitlines()
        os.unlink(os.path.join(rundir, "xdg-open.args"))
        return r, argv

    r, argv = web_open("501")
    ticket = re.search(r"login\?ticket=([0-9a-f.]+)", r.stdout).group(1)
    check(len(argv) == 1 and re.fullmatch(re.escape(rundir) + r"/lmk-web-\w{6}\.html", argv[0]) and
          ticket not in argv[0], f"xdg-open's command line: {argv}")
    st = os.stat(argv[0])
    check_eq((stat.S_IMODE(st.st_mode), st.st_uid), (0o600, alice.pw_uid), "the page lmk web --open writes")
    with open(argv[0]) as f:
        text = f.read()
    check(f"url={s.url('/login?ticket=')}{ticket}&amp;next=jobs%2F501" in text, f"the page's link: {text}")
    first = argv[0]
    # not in a directory others may read
    os.chmod(rundir, 0o755)
    r = as_user("lmkalice", [build_path("cli", "lmk"), "--store", s.url(), "--munge-socket", sock,
                             "web", "--open"], env=env)
    os.chmod(rundir, 0o700)
    check(r.returncode == 0 and "open it yourself" in r.stderr and
          not os.path.exists(os.path.join(rundir, "xdg-open.args")), f"lmk web --open, runtime dir 0755: {r.stderr}")

    from browser import Browser, BrowserError, browser_available
    ok, why = browser_available()
    if not ok:
        log(f"no browser check of the login confirmation: {why}")
        return
    shots = build_path("web-screenshots")

    def settle(b, page, path, what):
        """Waits until the tab shows the store's path, loaded: a page that
        goes on by itself, or a form sent, leaves the Page where it was."""
        end, where = time.monotonic() + 15, None
        while time.monotonic() < end:
            try:
                where = page.evaluate("[location.href, document.readyState, document.body.innerText]")
            except BrowserError:  # between two documents
                where = None
            if where and where[0].startswith(s.url(path)) and where[1] == "complete":
                return where[2]
            time.sleep(0.1)
        fail(f"{what}: the tab is at {where}, not {path}")

    def open_moving(b, url):
        """b.open() of a page that goes on at once: the snapshot it takes
        after the load event may fall between two documents. The tab's
        Page is then the one that failed (browser.py has no other way)."""
        try:
            return b.open(url)
        except BrowserError:
            return b._page

    with Browser(screenshot_dir=shots) as b:
        # a new browser opens the --open page: a page of the file system
        # leads to the store (another site to the browser), which signs it in
        page = open_moving(b, "file://" + first)
        text = settle(b, page, "/jobs/501", "the --open page in a new browser")
        check("alice-a" in text and "lmkalice" in text, f"alice's job after --open: {text[:300]}")
        # bob's link in alice's browser asks
        page = b.open(login_link("lmkbob", s, sock, "502")["url"])
        page.assert_clean()
        check(page.status == 200 and "Switch user?" in page.text and "lmkalice" in page.text and
              "lmkbob" in page.text, f"the confirmation page in Chromium: {page.status} {page.text[:300]}")
        page.screenshot("login-confirm")
        page.evaluate("document.querySelector('form button').click()")
        text = settle(b, page, "/jobs/502", "after the confirmation")
        check("bob-b" in text and "lmkbob" in text, f"bob's job after the confirmation: {text[:300]}")
        # the --open page, now in bob's browser: it asks too (the mark
        # tells who the browser is, though another site led here)
        _, argv = web_open("501")
        page = open_moving(b, "file://" + argv[0])
        text = settle(b, page, "/login", "the --open page in bob's browser")
        check("Switch user?" in text and "lmkbob" in text, f"the --open page in bob's browser: {text[:300]}")
        cookies = {c["name"]: c for c in b.cookies()}
        check_eq((cookies["lmk_session"]["sameSite"], cookies["lmk_signed_in"]["sameSite"]), ("Strict", "Lax"),
                 "the cookies' SameSite in Chromium")


if __name__ == "__main__":
    main()
