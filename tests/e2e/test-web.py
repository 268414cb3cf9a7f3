#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""The web pages in a real headless Chromium, on a store filled by a real
lmkd run.

A marked program runs as a job (named with markup, which must show as
text), lmkd samples it and pushes to lmk-store, and Chromium signs in with
a login link and loads the job page, the job list and the site page, both
directly and through a reverse proxy that mounts the store at /lmk/. Each
page must load without a console error, failed request or dialog, show
the objects, phases and nodes with the numbers of the JSON API for the same
query, and its links must work. Screenshots of each page go to
BUILD/web-screenshots/. lmkd's software inventory of this machine reaches
the store on the way (/api/v1/packages)."""
import http.client
import http.server
import json
import os
import pwd
import re
import socketserver
import subprocess
import threading
import time

import storetest
from browser import Browser, browser_available
from e2etest import Lmkd
from lmktest import build_path, check, job_notice, log, require_bpf, skip, tmpdir

JOB = "9001"
HOSTILE = "<script>alert('lmk')</script> & <b>bold</b>"


class Proxy(socketserver.ThreadingMixIn, http.server.HTTPServer):
    """A reverse proxy that mounts the store at /lmk/, the way a site's
    web server would (prefix stripped, everything else passed on)."""
    daemon_threads = True


def proxy_handler(port):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if not self.path.startswith("/lmk/"):
                self.send_error(404)
                return
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
            c.request("GET", self.path[len("/lmk"):], headers=headers)
            r = c.getresponse()
            body = r.read()
            self.send_response(r.status)
            for k, v in r.getheaders():
                if k.lower() not in ("connection", "transfer-encoding", "content-length", "date", "server"):
                    self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass
    return Handler


def login(store, next_page):
    status, _, body = store.request("POST", "/api/v1/sessions", body={"next": next_page},
                                    token=storetest.ADMIN_TOKEN)
    check(status == 200, f"POST /api/v1/sessions: {status} {body}")
    return body["login"]


def cells(page, selector):
    """The rows of a table as lists of cell texts."""
    rows = page.evaluate(f"""Array.from(document.querySelectorAll({json.dumps(selector)})).map(
        tr => Array.from(tr.querySelectorAll('td')).map(td => td.innerText.trim()))""")
    return rows or []


def pct(share):
    return f"{share * 100:.1f}%"


def check_shares(page, selector, entries, name_key):
    """Each entry of the API is a row with its name, share and samples."""
    rows = cells(page, selector)
    check(len(rows) == len(entries), f"{selector}: {len(rows)} rows, the API has {len(entries)}")
    for e, cols in zip(entries, rows):
        name = e[name_key] or "(outside markers)"
        check(cols[0] == name, f"{selector}: row {cols} is not {name}")
        text = " ".join(cols)
        want = pct(e["share"]) if e["share_reliable"] else f"~{e['share'] * 100:.0f}%"
        check(want in text, f"{selector}: {name}'s share {want} not in {cols}")
        check(str(e["samples"]) in cols, f"{selector}: {name}'s samples {e['samples']} not in {cols}")
        if e["share_reliable"]:
            lo, hi = e["share_ci95"]
            check(f"{lo * 100:.1f}–{hi * 100:.1f}" in text, f"{selector}: {name}'s interval not in {cols}")


def check_job_page(page, api):
    page.assert_clean()
    check(page.status == 200, f"job page: {page.status}")
    check(HOSTILE in page.title and HOSTILE in page.text, f"the job's name is not shown as text: {page.title!r}")
    check(page.query("script") == [] and page.query("main b") == [], "markup from the job's name became elements")
    check(not page.dialogs, f"a dialog opened: {page.dialogs}")
    check_shares(page, "table.objects tbody tr", api["objects"], "object")
    check_shares(page, "table.phases tbody tr", api["phases"], "phase")
    nodes = cells(page, "table.nodes tbody tr")
    check([r[0] for r in nodes] == [n["node"] for n in api["nodes"]], f"nodes: {nodes}")
    check("timestep/solve" in page.text, "the marked phase is not on the page")
    tl = page.query("svg.timeline rect.cell")
    busy = sum(1 for n in api["timeline"]["nodes"] for v in n["busy_cores"] if v is not None)
    check(len(tl) == busy, f"the time line has {len(tl)} cells, the API {busy} busy steps")
    facts = page.evaluate("Object.fromEntries(Array.from(document.querySelectorAll('dl.facts dt')).map("
                          "dt => [dt.innerText, dt.nextElementSibling.innerText]))")
    check(facts.get("User") == api["user"] and facts.get("Account") == api["account"], f"facts: {facts}")
    check(str(api["samples"]) in facts.get("CPU time", ""), f"the job's samples not in {facts}")
    check(facts.get("app") == api["notes"]["app"], f"a note shown as {facts.get('app')!r}")


def visit_links(b, page, base):
    """Every link of ours on the page answers 200 without errors (the JSON
    ones with JSON). A download link (the job's profiles) is saved, not
    shown, by a browser: tests/store/test-functions.py reads those."""
    hrefs = sorted({ln["href"] for ln in page.links if ln["href"].startswith(base)
                    and "logout" not in ln["href"] and not ln["download"]})
    for href in hrefs:
        p = b.open(href)
        check(p.status == 200, f"link {href}: {p.status}")
        p.assert_clean()
        if "/api/v1/" in href:
            json.loads(p.text)
    return hrefs


def main():
    require_bpf()
    ok, why = browser_available()
    if not ok:
        skip(why)
    d = tmpdir()
    shots = build_path("web-screenshots")
    os.makedirs(shots, exist_ok=True)
    # a user as a single-sign-on proxy names them: the pages as a person sees them
    with storetest.Store(extra=["--user-header", "X-Remote-User", "--trusted-proxies", "127.0.0.1"]) as store:
        sock = os.path.join(d, "lmkd.sock")
        lmkd = Lmkd(d, store, interval=2, hz=99, notify_socket=sock).start()
        # the job is nobody's: root's notice says so, as a site's Prolog
        # does, and its program runs as nobody, whose environment then
        # names the job and its metadata
        nobody = pwd.getpwnam("nobody")
        job_notice(sock, "job-start", JOB, uid=nobody.pw_uid)
        env = {**os.environ, "LD_LIBRARY_PATH": build_path("liblmk"), "SLURM_JOB_ID": JOB,
               "SLURM_JOB_NAME": HOSTILE, "SLURM_JOB_ACCOUNT": "webtest",
               "SLURM_JOB_PARTITION": "batch", "SLURM_CPUS_ON_NODE": "2",
               "LMK_NOTES": "app=<i>marked</i>:size=64"}

        def as_nobody():
            os.setgid(nobody.pw_gid)
            os.setgroups([])
            os.setuid(nobody.pw_uid)
        subprocess.run([build_path("tests", "phases", "lmk-marked"), "2", "4"], env=env, check=True, timeout=60,
                       preexec_fn=as_nobody, cwd="/")
        job_notice(sock, "job-end", JOB, uid=nobody.pw_uid)
        time.sleep(3)
        lmkd.stop()
        api = store.get_ok(f"/api/v1/jobs/{JOB}")
        log(f"job {JOB}: {api['samples']} samples, {len(api['objects'])} objects, {len(api['phases'])} phases")
        check(api["samples"] > 200 and api["name"] == HOSTILE, f"the job in the store: {api['samples']} {api['name']}")

        # the node's software inventory came with a batch (lmkd scanned this
        # machine): dpkg's libc6 is there, and what ran used some package
        pk = store.get_ok("/api/v1/packages?since=1d&limit=100000")
        names = {p["name"] for p in pk["packages"] if p["manager"] == "debian"}
        used = [p for p in pk["packages"] if p["samples"] > 0]
        log(f"inventory: {len(pk['packages'])} packages, {len(used)} used: "
            f"{[(p['name'], p['samples']) for p in used[:5]]}")
        check("libc6" in names and len(names) > 50, f"dpkg's packages not in the store: {len(names)}")
        check(used and sum(p["samples"] for p in used) <= pk["total_samples"], "no package was used")

        base = store.url("/")
        with Browser(screenshot_dir=shots) as b:
            page = b.open(base + "jobs")
            check(page.status == 401 and "lmk web" in page.text, f"without a session: {page.status}")
            page.assert_clean()

            page = b.open(base + login(store, f"jobs/{JOB}"))
            check(page.url == base + f"jobs/{JOB}", f"the login link led to {page.url}")
            cookie = [c for c in b.cookies() if c["name"] == "lmk_session"]
            check(cookie and cookie[0]["httpOnly"] and cookie[0]["sameSite"] == "Strict", f"cookie: {cookie}")
            check_job_page(page, api)
            page.screenshot("job")
            log("links of the job page:", visit_links(b, page, base))

            page = b.open(base + "jobs")
            page.assert_clean()
            rows = cells(page, "table.jobs tbody tr")
            check([r[0] for r in rows] == [j["job"] for j in store.get_ok("/api/v1/jobs")["jobs"]],
                  f"the job list: {rows}")
            check(HOSTILE in page.text and page.query("main b") == [], "the list shows the name as text")
            page.screenshot("jobs")
            visit_links(b, page, base)
            page = b.open(base + "jobs?user=nobody&since=7d")
            page.assert_clean()
            check(any(r[0] == JOB for r in cells(page, "table.jobs tbody tr")), "the filtered list")

            page = b.open(base + "site")
            page.assert_clean()
            exes = store.get_ok("/api/v1/objects?since=7d&kind=exe&limit=25")["objects"]
            rows = cells(page, "table.objects tbody tr")
            marked = [r for r in rows if r[0].endswith("/lmk-marked")]
            want = [e for e in exes if e["object"].endswith("/lmk-marked")][0]
            check(marked and pct(want["share"]) in " ".join(marked[0]),
                  f"the site page's share of lmk-marked {marked} is not the API's {want['share']}")
            page.screenshot("site")
            visit_links(b, page, base)

            page = b.open(base + "site/software")
            page.assert_clean()
            used = [p for p in store.get_ok("/api/v1/packages?since=30d&until=now&limit=25")["packages"]
                    if p["samples"] > 0]
            rows = cells(page, "table.packages tbody tr")
            check([r[0] for r in rows] == [p["name"] for p in used], f"the software page's packages: {rows[:3]}")
            want = pct(used[0]["share"]) if used[0]["share_reliable"] else f"~{used[0]['share'] * 100:.0f}%"
            check(want in " ".join(rows[0]), f"the share {want} of {used[0]['name']} on the software page: {rows[0]}")
            unused = store.get_ok("/api/v1/packages?since=30d&until=now&unused=true&limit=50")["packages"]
            check([r[0] for r in cells(page, "table.unused tbody tr")] == [p["name"] for p in unused],
                  "the software page's unused packages")
            page.screenshot("software")

            # the application mix: the page's groups are the API's, the real job among them
            page = b.open(base + "site/apps?since=7d")
            page.assert_clean()
            mix = store.get_ok("/api/v1/apps?since=7d&until=now&top=10")
            rows = cells(page, "table.apps tbody tr")
            check([r[0].strip() for r in rows[:len(mix["groups"])]] == [g["name"] or "(unknown)" for g in mix["groups"]],
                  f"the mix page's applications {rows} are not the API's {mix['groups']}")
            first = mix["groups"][0]
            want = pct(first["share"]) if first["share_reliable"] else f"~{first['share'] * 100:.0f}%"
            check(mix["total_samples"] > 0 and want in " ".join(rows[0]), f"the mix page's first share {want}: {rows[0]}")
            check(len(page.query("svg.weeks rect")) >= 1, "no weekly bars on the mix page")
            page.screenshot("apps")

            # as the job's owner (named by the trusted proxy's header), and as someone else
            b.clear_cookies()
            page = b.open(base + "jobs", extra_headers={"X-Remote-User": "nobody"})
            page.assert_clean()
            check([r[0] for r in cells(page, "table.jobs tbody tr")] == [JOB] and "My jobs" in page.text
                  and "admin" not in page.evaluate("document.querySelector('header').innerText"),
                  f"the owner's job list: {cells(page, 'table.jobs tbody tr')}, "
                  f"the store's: {store.get_ok('/api/v1/jobs?since=1d&limit=100')['jobs']}")
            page.screenshot("jobs-user")
            # the mix for a person: the site's applications, no one else's use
            page = b.open(base + "site/apps?since=7d", extra_headers={"X-Remote-User": "nobody"})
            page.assert_clean()
            check(page.status == 200 and cells(page, "table.apps tbody tr") and
                  page.query("select[name=by] option[value=user]") == [] and page.query("input[name=user]") == [],
                  "the mix page for a person: applications, and no time per user")
            page.screenshot("apps-user")
            page = b.open(base + f"jobs/{JOB}", extra_headers={"X-Remote-User": "someoneelse"})
            check(page.status == 404 and HOSTILE not in page.text, f"another user's view of the job: {page.status}")
            page.assert_clean()
            page.screenshot("job-not-yours")

            # behind a proxy at /lmk/: the links, the stylesheet and the cookie follow
            b.clear_cookies()
            proxy = Proxy(("127.0.0.1", 0), proxy_handler(store.port))
            threading.Thread(target=proxy.serve_forever, daemon=True).start()
            try:
                pbase = f"http://127.0.0.1:{proxy.server_address[1]}/lmk/"
                page = b.open(pbase + login(store, f"jobs/{JOB}"))
                check(page.url == pbase + f"jobs/{JOB}", f"through the proxy the login led to {page.url}")
                check_job_page(page, api)
                check(page.evaluate("getComputedStyle(document.querySelector('header')).display") == "flex",
                      "the stylesheet did not load through the proxy")
                hrefs = visit_links(b, page, pbase)
                check(len(hrefs) >= 3, f"links through the proxy: {hrefs}")
                page = b.open(pbase + "logout")
                page.assert_clean()
                page = b.open(pbase + "jobs")
                check(page.status == 401, f"after signing out: {page.status}")
            finally:
                proxy.shutdown()
    for name in ("job", "jobs", "site", "software", "apps", "jobs-user", "apps-user", "job-not-yours"):
        path = os.path.join(shots, name + ".png")
        check(os.path.getsize(path) > 10000, f"{path} is too small to show anything")
    log(f"screenshots in {shots}")
    log("PASS")


if __name__ == "__main__":
    main()
