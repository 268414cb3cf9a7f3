#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""tests/lib/browser.py against pages served here by http.server.

The store's page tests trust this harness to fail them: so each kind of
trouble it must catch (console error, exception, missing image, image
from another site, CSP violation, dialog, a page that never finishes) is
served once and must be caught, and a clean page must come back clean with its text, links and a
full-page screenshot. Cookies must outlive a page and keep their flags, and
a title that looks like a script must stay text."""
import html
import http.server
import json
import os
import struct
import threading
import time

from browser import Browser, BrowserError, browser_available, live_in_group
from lmktest import build_path, check, fail, log, skip

HOSTILE = "<script>alert(1)</script>"
COOKIE = "lmk_session=0123abcd"
release = threading.Event()


def doc(title, body, head=""):
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8><title>{title}</title>{head}</head>"
            f"<body>{body}</body></html>")


PAGES = {
    "/clean": doc("Jobs", "<h1>Jobs</h1><p class=lead>Two jobs ran today.</p>"
                  "<ul><li><a href='/job/42'>Job 42</a>"
                  "<li><a href='/jobs?user=alice&amp;state=done'>Alice &amp; done</a></ul>"
                  "<div class=tall>end of page</div>",
                  "<link rel=stylesheet href=/style.css>"),
    "/errors": doc("Errors", "<p>bad script<script>console.error('lmk-console-marker');"
                   "throw new Error('lmk-thrown-marker')</script>"),
    "/broken-image": doc("Image", "<p>an image that is not there <img src=/missing.png alt=missing>"),
    "/offsite": doc("Offsite", "<p>an image from elsewhere <img src=http://lmk.example.com/logo.png alt=logo>"),
    "/hostile": doc(html.escape(HOSTILE), f"<h1>{html.escape(HOSTILE)}</h1>"),
    "/alert": doc("Alert", "<p>before<script>alert('lmk-dialog-marker')</script>"),
    "/csp": doc("CSP", "<p>inline script under a CSP<script>document.title = 'ran'</script>"),
    "/gone": doc("Not found", "<p>no such job"),
}


class Handler(http.server.BaseHTTPRequestHandler):
    def send(self, status, body, ctype="text/html; charset=utf-8", headers=()):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = self.path
        if path == "/style.css":
            self.send(200, ".tall { height: 1500px } body { font-family: sans-serif }", "text/css")
        elif path == "/login":
            self.send(303, "", headers=[("Location", "/echo"),
                                        ("Set-Cookie", f"{COOKIE}; HttpOnly; SameSite=Strict; Path=/")])
        elif path == "/echo":
            got = {"cookie": self.headers.get("Cookie", ""), "x-lmk-test": self.headers.get("X-Lmk-Test", "")}
            self.send(200, doc("Echo", f"<pre id=got>{html.escape(json.dumps(got))}</pre>"))
        elif path == "/csp":
            self.send(200, PAGES[path], headers=[("Content-Security-Policy", "default-src 'none'")])
        elif path == "/gone":
            self.send(404, PAGES[path])
        elif path == "/hang":
            # Headers and half a page, then nothing: the load event never comes.
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(b"<!doctype html><title>hang</title><p>half")
            self.wfile.flush()
            release.wait(30)
        elif path in PAGES:
            self.send(200, PAGES[path])
        else:
            self.send(404, "", "text/plain")

    def log_message(self, fmt, *args):
        pass


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR", f"{path} is not a PNG: {head[:16]!r}")
    return struct.unpack(">II", head[16:24])


def timed(b, url, **kw):
    t = time.monotonic()
    page = b.open(url, **kw)
    log(f"  {url}: HTTP {page.status} in {time.monotonic() - t:.3f} s")
    return page


def echo(b, base, **kw):
    page = timed(b, base + "/echo", **kw)
    return json.loads(page.query("#got")[0]["text"])


def main():
    ok, why = browser_available()
    if not ok:
        skip(why)
    log(why)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    shots = build_path("screenshots", "test-browser")

    t0 = time.monotonic()
    with Browser(screenshot_dir=shots) as b:
        pid = b.pid

        # A clean page: nothing reported, text, links and elements read back.
        page = timed(b, base + "/clean")
        check(page.errors() == [], f"/clean reported errors: {page.errors()}")
        page.assert_clean()
        check(page.status == 200 and page.url == base + "/clean", f"/clean: {page.status} {page.url}")
        check(page.title == "Jobs", f"/clean title: {page.title!r}")
        check("Two jobs ran today." in page.text and "<p" not in page.text, f"/clean text: {page.text!r}")
        check('<p class="lead">Two jobs ran today.</p>' in page.html, f"/clean html: {page.html[:300]!r}")
        check(page.links == [{"href": base + "/job/42", "text": "Job 42", "download": False},
                             {"href": base + "/jobs?user=alice&state=done", "text": "Alice & done",
                              "download": False}],
              f"/clean links: {page.links}")
        items = page.query("li a")
        check([i["attrs"]["href"] for i in items] == ["/job/42", "/jobs?user=alice&state=done"],
              f"/clean query('li a'): {items}")
        check(page.evaluate("getComputedStyle(document.querySelector('.tall')).height") == "1500px",
              "the stylesheet did not apply")
        png = page.screenshot("clean")
        width, height = png_size(png)
        # Wider than nothing, taller than the 800-pixel window: the whole page.
        check(width == 1280 and height >= 1500 and os.path.getsize(png) > 2000,
              f"{png}: {width}x{height}, {os.path.getsize(png)} bytes")
        log(f"  screenshot {png}: {width}x{height}, {os.path.getsize(png)} bytes")

        # A failing script must fail a test that asks for a clean page.
        page = timed(b, base + "/errors")
        errs = page.errors()
        check(any("lmk-console-marker" in e for e in errs), f"console.error not caught: {errs}")
        check(any("lmk-thrown-marker" in e for e in page.exceptions), f"exception not caught: {page.exceptions}")
        try:
            page.assert_clean()
            fail("assert_clean() passed a page that threw")
        except AssertionError as e:
            check("lmk-thrown-marker" in str(e), f"assert_clean() did not say why: {e}")

        # A missing image is one error, naming its URL and status.
        page = timed(b, base + "/broken-image")
        check([(r["url"], r.get("status")) for r in page.failed_requests] == [(base + "/missing.png", 404)],
              f"/broken-image failed requests: {page.failed_requests}")
        check(page.errors() == [f"request {base}/missing.png: 404"], f"/broken-image errors: {page.errors()}")

        # Nothing is fetched from elsewhere, whatever the network here.
        page = timed(b, base + "/offsite")
        check([(r["url"], r.get("error")) for r in page.failed_requests]
              == [("http://lmk.example.com/logo.png", "net::ERR_NAME_NOT_RESOLVED")] and len(page.errors()) == 1,
              f"/offsite: {page.failed_requests} {page.errors()}")

        # An HTTP error page is a status, not an error of the page.
        page = timed(b, base + "/gone")
        check(page.status == 404 and "no such job" in page.text and page.errors() == [],
              f"/gone: {page.status} {page.text!r} {page.errors()}")

        # A CSP violation is reported; the inline script did not run.
        page = timed(b, base + "/csp")
        check(page.headers.get("content-security-policy") == "default-src 'none'", f"/csp headers: {page.headers}")
        check(page.title == "CSP" and len(page.csp_violations) == 1 and "script" in page.csp_violations[0],
              f"/csp: title {page.title!r}, violations {page.csp_violations}")
        check(page.errors() != [], "a CSP violation is not an error")

        # The dialog listener works (a real alert is caught and dismissed)...
        page = timed(b, base + "/alert")
        check(page.dialogs == [{"type": "alert", "message": "lmk-dialog-marker"}], f"/alert dialogs: {page.dialogs}")
        check(page.text == "before", f"/alert did not finish loading after the dialog: {page.text!r}")
        # ...so a hostile title that opened none stayed text.
        page = timed(b, base + "/hostile")
        check(page.title == HOSTILE and page.text == HOSTILE, f"/hostile: {page.title!r} {page.text!r}")
        check(page.dialogs == [] and page.query("script") == [] and page.errors() == [],
              f"/hostile: dialogs {page.dialogs}, scripts {page.query('script')}, errors {page.errors()}")

        # A login link followed once: the session cookie comes back on later pages.
        page = timed(b, base + "/login")
        check(page.url == base + "/echo" and page.status == 200, f"/login ended at {page.url} ({page.status})")
        check(json.loads(page.query("#got")[0]["text"])["cookie"] == COOKIE, f"/login: {page.text!r}")
        check(page.evaluate("document.cookie") == "", "an HttpOnly cookie is visible to scripts")
        check(echo(b, base)["cookie"] == COOKIE, "the session cookie was not sent to the next page")
        cookies = [(c["name"], c["value"], c["httpOnly"], c.get("sameSite"), c["session"]) for c in b.cookies()]
        check(cookies == [("lmk_session", "0123abcd", True, "Strict", True)], f"cookies: {cookies}")
        b.clear_cookies()
        check(b.cookies() == [] and echo(b, base)["cookie"] == "", "clear_cookies() left a cookie")

        # Extra headers go with one open() only.
        check(echo(b, base, extra_headers={"X-Lmk-Test": "yes"})["x-lmk-test"] == "yes", "extra header not sent")
        check(echo(b, base)["x-lmk-test"] == "", "extra header sent again")

        # A page that never loads fails in time, naming what it waited for.
        t = time.monotonic()
        try:
            b.open(base + "/hang", timeout=1)
            fail("/hang loaded")
        except BrowserError as e:
            took = time.monotonic() - t
            check("load event of " + base + "/hang" in str(e) and "stderr" in str(e) and took < 5,
                  f"/hang after {took:.1f} s: {e}")
        release.set()
        check(timed(b, base + "/clean").errors() == [], "the tab did not recover from /hang")

    check(b.pid is None, "the Browser still has a process after close")
    alive = live_in_group(pid)
    check(alive == [], f"Chromium's processes {alive} (group {pid}) outlived the Browser")
    server.shutdown()
    log(f"PASS in {time.monotonic() - t0:.1f} s after the start ({why})")


if __name__ == "__main__":
    main()
