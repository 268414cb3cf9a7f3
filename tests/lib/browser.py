# SPDX-License-Identifier: GPL-2.0-or-later
"""A real headless Chromium for tests of lmk-store's web pages.

Standard library only: the DevTools protocol over --remote-debugging-pipe
(Chromium reads commands on its fd 3 and writes replies and events on its
fd 4, each message JSON ended by a NUL byte). One Chromium per Browser, one
tab, one profile: cookies set by one page are sent with the next.

    ok, why = browser_available()
    if not ok:
        skip(why)
    with Browser(screenshot_dir=d) as b:
        page = b.open(url)
        page.assert_clean()          # no console error, exception, failed request, dialog
        check("Jobs" in page.text, ...)
        page.screenshot("jobs")

A Page is what the tab showed once its load event fired; evaluate(),
query() and screenshot() act on the live tab, so only on the latest Page.
Every wait has a timeout and says what it waited for; Chromium's stderr is
quoted when it fails. Chromium dies with the Browser, and with this process
(PR_SET_PDEATHSIG) if the test is killed.
"""
import atexit
import base64
import ctypes
import fcntl
import json
import os
import select
import shutil
import signal
import subprocess
import tempfile
import time

WIDTH, HEIGHT = 1280, 800
# Full-page screenshots of a runaway page stop here rather than grow without bound.
MAX_SCREENSHOT_HEIGHT = 16384
START_TIMEOUT = 30.0
LOAD_TIMEOUT = 10.0

# Chromium's own binary, not Debian's /usr/bin/chromium wrapper: the wrapper
# adds flags of its own (extensions, remote extensions) and its /dev/shm
# test breaks when findmnt prints more than one line.
CANDIDATES = ("/usr/lib/chromium/chromium", "chromium", "chromium-browser",
              "google-chrome", "google-chrome-stable")

# A blank, quiet profile: nothing fetched that the test did not ask for.
FLAGS = (
    "--headless=new",
    "--remote-debugging-pipe",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-default-apps",
    "--disable-extensions",
    "--disable-sync",
    "--disable-breakpad",
    "--disable-crash-reporter",
    "--disable-client-side-phishing-detection",
    "--disable-domain-reliability",
    "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
    "--metrics-recording-only",
    "--password-store=basic",
    "--no-proxy-server",
    # Names resolve only to this machine: Chromium's own calls home (update
    # checks, sign-in) go nowhere, and a page that loads something from
    # elsewhere gets a failed request.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1, EXCLUDE ::1",
    "--mute-audio",
    "--hide-scrollbars",
    "--force-device-scale-factor=1",
    f"--window-size={WIDTH},{HEIGHT}",
)

# Chromium cannot reach a D-Bus in a container and says so some 25 times;
# these lines would bury the one that explains a failure.
NOISE = ("dbus/",)


class BrowserError(Exception):
    """Chromium failed, timed out, or refused a command."""


class BrowserUnavailable(BrowserError):
    """Chromium is not installed or cannot start here."""


def find_chromium():
    """Path of the Chromium binary ($LMK_CHROMIUM first), or None."""
    env = os.environ.get("LMK_CHROMIUM")
    for c in ((env,) if env else CANDIDATES):
        p = c if os.path.isabs(c) else shutil.which(c)
        if p and os.access(p, os.X_OK):
            return p
    return None


def _shm_usable():
    """Chromium puts shared memory in /dev/shm; a missing or small one
    (containers default to 64 MB) crashes renderers, so it then uses /tmp."""
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return False
    return os.access("/dev/shm", os.W_OK) and st.f_bavail * st.f_frsize >= 512 << 20


def _high_cloexec(fd):
    """Moves fd above 2..9 so the child's dup2 to 3 and 4 cannot clobber it."""
    n = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return n


def live_in_group(pgid):
    """Pids of the process group that are not yet dead (zombies are)."""
    pids = []
    for d in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{d}/stat") as f:
                # After "pid (comm)": state, ppid, pgrp.
                state, _, pgrp = f.read().rpartition(")")[2].split()[:3]
        except OSError:
            continue
        if int(pgrp) == pgid and state not in ("Z", "X"):
            pids.append(int(d))
    return pids


_libc = ctypes.CDLL(None, use_errno=True)
PR_SET_PDEATHSIG = 1


class _Chromium:
    """One Chromium process and its DevTools pipe: commands, replies, events."""

    def __init__(self, binary):
        self.binary = binary
        self.dir = tempfile.mkdtemp(prefix="lmk-chromium-")
        self.stderr_path = os.path.join(self.dir, "stderr")
        self.proc = None
        self.rfd = self.wfd = -1
        self.buf = b""
        self.next_id = 1
        self.replies = {}
        self.on_event = None
        flags = list(FLAGS)
        if os.geteuid() == 0:
            flags.append("--no-sandbox")
        if not _shm_usable():
            flags.append("--disable-dev-shm-usage")
        self.argv = [binary, *flags, f"--user-data-dir={os.path.join(self.dir, 'profile')}", "about:blank"]

    def start(self, timeout=START_TIMEOUT):
        child_r, self.wfd = os.pipe()
        self.rfd, child_w = os.pipe()
        child_r, child_w = _high_cloexec(child_r), _high_cloexec(child_w)

        def in_child():
            os.dup2(child_r, 3)
            os.dup2(child_w, 4)
            _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

        try:
            with open(self.stderr_path, "wb") as err:
                # close_fds=False: pass_fds would close the dup2'ed 3 and 4;
                # every other fd this process opened is O_CLOEXEC (PEP 446).
                self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=err, stderr=err,
                                             close_fds=False, preexec_fn=in_child, start_new_session=True)
        except OSError as e:
            raise BrowserUnavailable(f"cannot run {self.binary}: {e}") from e
        finally:
            os.close(child_r)
            os.close(child_w)
        try:
            self.version = self.call("Browser.getVersion", timeout=timeout)["product"]
        except BrowserError as e:
            self.kill()
            raise BrowserUnavailable(f"{self.binary} did not start: {e}") from e
        return self

    def stderr_tail(self, lines=25):
        try:
            with open(self.stderr_path, errors="replace") as f:
                text = [ln.rstrip() for ln in f if not any(n in ln for n in NOISE)]
        except OSError:
            return ""
        return "\n".join(text[-lines:])

    def _failure(self, msg):
        tail = self.stderr_tail()
        return BrowserError(f"{msg}\nChromium: {' '.join(self.argv)}\n"
                            f"Chromium's stderr (last lines, D-Bus noise left out):\n{tail or '(empty)'}")

    def post(self, method, params=None, session=None):
        """Sends a command without waiting for its reply; returns its id."""
        cid = self.next_id
        self.next_id += 1
        msg = {"id": cid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        try:
            while data:
                data = data[os.write(self.wfd, data):]
        except OSError as e:
            raise self._failure(f"cannot send {method} to Chromium: {e}") from e
        return cid

    def call(self, method, params=None, session=None, timeout=LOAD_TIMEOUT):
        cid = self.post(method, params, session)
        self.wait(lambda: cid in self.replies, f"the reply to {method}", timeout)
        reply = self.replies.pop(cid)
        if "error" in reply:
            raise BrowserError(f"{method} {json.dumps(params or {})[:200]} failed: {reply['error'].get('message')}")
        return reply.get("result", {})

    def wait(self, done, what, timeout):
        """Reads messages until done() holds; raises naming `what` on timeout."""
        deadline = time.monotonic() + timeout
        while not done():
            left = deadline - time.monotonic()
            if left <= 0:
                raise self._failure(f"timed out after {timeout:g} s waiting for {what}")
            self._read(left, what)

    def _read(self, timeout, what):
        if not select.select([self.rfd], [], [], timeout)[0]:
            return
        chunk = os.read(self.rfd, 1 << 20)
        if not chunk:
            status = self.proc.poll() if self.proc else None
            raise self._failure(f"Chromium closed its DevTools pipe (exit status {status}) "
                                f"while waiting for {what}")
        self.buf += chunk
        *msgs, self.buf = self.buf.split(b"\0")
        for m in msgs:
            msg = json.loads(m)
            if "id" in msg:
                self.replies[msg["id"]] = msg
            elif self.on_event:
                self.on_event(msg)

    def kill(self):
        """Asks Chromium to quit, then kills what is left of its process group."""
        if self.proc and self.proc.poll() is None:
            try:
                self.post("Browser.close")
                self.proc.wait(timeout=3)
            except (BrowserError, subprocess.TimeoutExpired):
                pass
        if self.proc:
            try:
                # start_new_session: the group is Chromium's own, renderers
                # and zygotes included, and nothing of ours.
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()
            # SIGKILL is not instant; closed means gone.
            deadline = time.monotonic() + 5
            while live_in_group(self.proc.pid) and time.monotonic() < deadline:
                time.sleep(0.02)
        for fd in (self.rfd, self.wfd):
            if fd >= 0:
                os.close(fd)
        self.rfd = self.wfd = -1
        shutil.rmtree(self.dir, ignore_errors=True)


# browser_available() starts a Chromium to know that one can start; the next
# Browser takes it over, so a test file still starts Chromium once.
_spare = None


def _kill_spare():
    global _spare
    if _spare:
        _spare.kill()
        _spare = None


atexit.register(_kill_spare)


def browser_available():
    """(True, "Chrome/… at path") when Chromium starts here, else (False, why)."""
    global _spare
    if _spare:
        return True, f"{_spare.version} at {_spare.binary}"
    binary = find_chromium()
    if not binary:
        return False, ("no Chromium (apt install chromium, or set LMK_CHROMIUM); looked for "
                       + ", ".join(CANDIDATES))
    try:
        _spare = _Chromium(binary).start()
    except BrowserUnavailable as e:
        return False, str(e)
    return True, f"{_spare.version} at {binary}"


class Page:
    """One document as the tab showed it after its load event.

    requested      the URL given to open()
    url            the final URL (after redirects)
    status         HTTP status of the main document (None for about:, data:)
    headers        the main document's response headers, names in lower case
    title, html    document.title and document.documentElement.outerHTML
    text           document.body.innerText: what a reader sees
    links          [{"href": absolute URL, "text": innerText, "download": bool}] of every a[href]
    console        [{"level", "source", "text", "url"}]: console calls (level
                   "log", "warning", "error", …) and Chromium's own messages
                   (CSP violations, failed loads; level "error", "warning", …)
    exceptions     ["Uncaught Error: …"]: uncaught JavaScript exceptions
    failed_requests [{"url", "type", "status" or "error"}]: requests that
                   failed or answered >= 400, the main document's excluded
                   (it is .status) and so is the /favicon.ico Chromium asks
                   for on its own after the load event
    csp_violations the console texts that report a Content-Security-Policy violation
    dialogs        [{"type", "message"}]: alert/confirm/prompt, dismissed
    """

    def __init__(self, browser, generation, requested):
        self._browser = browser
        self._generation = generation
        self.requested = requested
        self.url = requested
        self.status = None
        self._request = None
        self.headers = {}
        self.title = self.html = self.text = ""
        self.links = []
        self.console = []
        self.exceptions = []
        self.failed_requests = []
        self.dialogs = []

    @property
    def csp_violations(self):
        return [c["text"] for c in self.console if "Content Security Policy" in c["text"]]

    def errors(self):
        """Everything that should fail a clean page, one line each."""
        # Chromium also logs each failed request to the console, without
        # its URL; the failed request says it better, the status the page's own.
        said = {r["request"] for r in self.failed_requests} | {self._request}
        out = [f"console {c['level']}: {c['text']}" for c in self.console
               if c["level"] == "error" and c.get("request") not in said]
        out += [f"exception: {e}" for e in self.exceptions]
        out += [f"request {r['url']}: {r.get('status') or r.get('error')}" for r in self.failed_requests]
        out += [f"{d['type']} dialog: {d['message']}" for d in self.dialogs]
        return out

    def assert_clean(self):
        errs = self.errors()
        if errs:
            raise AssertionError(f"{self.url} (HTTP {self.status}) is not clean:\n  " + "\n  ".join(errs))

    def _live(self, what):
        if self._generation != self._browser._generation:
            raise BrowserError(f"{what} on {self.url}: the tab has since opened another page")

    def evaluate(self, expression):
        """Value of a JavaScript expression in the page, as JSON; raises if it throws."""
        self._live("evaluate")
        return self._browser._evaluate(expression)

    def query(self, selector):
        """[{"tag", "text", "attrs", "html"}] of document.querySelectorAll(selector)."""
        return self.evaluate(
            f"Array.from(document.querySelectorAll({json.dumps(selector)}), e => ({{"
            "tag: e.tagName.toLowerCase(), text: e.innerText, html: e.outerHTML,"
            "attrs: Object.fromEntries(Array.from(e.attributes, a => [a.name, a.value]))}))")

    def screenshot(self, name):
        """Writes the whole page as screenshot_dir/<name>.png; returns the path."""
        self._live("screenshot")
        return self._browser._screenshot(name)


class Browser:
    """A headless Chromium with one tab; cookies persist across open()."""

    def __init__(self, screenshot_dir=None, timeout=LOAD_TIMEOUT, width=WIDTH, height=HEIGHT):
        self.screenshot_dir = screenshot_dir
        self.timeout = timeout
        self.width, self.height = width, height
        self._c = None
        self._session = self._frame = None
        self._generation = 0
        self._page = None
        self._requests = {}
        self._lifecycle = set()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.close()

    @property
    def version(self):
        return self._c.version

    @property
    def pid(self):
        """Chromium's pid (and process group) while it runs, else None."""
        return self._c.proc.pid if self._c else None

    def start(self):
        global _spare
        if self._c:
            return self
        if not _spare:
            ok, why = browser_available()
            if not ok:
                raise BrowserUnavailable(why)
        self._c, _spare = _spare, None
        atexit.register(self.close)
        try:
            self._c.on_event = self._event
            pages = [t for t in self._c.call("Target.getTargets")["targetInfos"] if t["type"] == "page"]
            target = pages[0]["targetId"] if pages else \
                self._c.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            # A tab's main frame has the tab's target id.
            self._frame = target
            self._session = self._c.call("Target.attachToTarget",
                                         {"targetId": target, "flatten": True})["sessionId"]
            for domain in ("Page", "Runtime", "Log", "Network"):
                self._call(f"{domain}.enable")
            self._call("Page.setLifecycleEventsEnabled", {"enabled": True})
            self._call("Emulation.setDeviceMetricsOverride",
                       {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})
        except BaseException:
            self.close()
            raise
        return self

    def close(self):
        """Ends Chromium and removes its profile; safe to call twice."""
        if self._c:
            self._c.kill()
            self._c = None
        atexit.unregister(self.close)

    def _call(self, method, params=None, timeout=None, tab=True):
        """A command to the tab, or with tab=False to the browser itself."""
        if not self._c:
            raise BrowserError(f"{method}: the browser is not running (use `with Browser() as b`)")
        return self._c.call(method, params, self._session if tab else None, timeout or self.timeout)

    def open(self, url, extra_headers=None, timeout=None):
        """Navigates the tab to url, waits for its load event, returns the Page.

        extra_headers go with every request of this page (subresources
        too) and are dropped for the next open(). An HTTP error status
        is not an exception: the Page has it in .status."""
        timeout = timeout or self.timeout
        # The reply comes after the events already sent, which still go to
        # the previous page.
        self._call("Network.setExtraHTTPHeaders", {"headers": dict(extra_headers or {})})
        self._generation += 1
        page = self._page = Page(self, self._generation, url)
        self._requests.clear()
        self._lifecycle.clear()
        nav = self._call("Page.navigate", {"url": url}, timeout)
        # Chromium shows its own error page for an HTTP error with an empty
        # body; the status is still the server's answer.
        if nav.get("errorText") and nav["errorText"] != "net::ERR_HTTP_RESPONSE_CODE_FAILURE":
            raise BrowserError(f"cannot load {url}: {nav['errorText']}")
        loader = nav.get("loaderId")
        if loader:  # None: a same-document navigation, nothing to load
            self._c.wait(lambda: (nav["frameId"], loader, "load") in self._lifecycle,
                         f"the load event of {url}", timeout)
        snap = self._evaluate(
            "({url: location.href, title: document.title, html: document.documentElement.outerHTML,"
            " text: document.body ? document.body.innerText : '',"
            " links: Array.from(document.querySelectorAll('a[href]'), a => ({href: a.href, text: a.innerText, download: a.hasAttribute('download')}))})")
        page.title, page.html, page.text, page.links = snap["title"], snap["html"], snap["text"], snap["links"]
        if not snap["url"].startswith("chrome-error:"):  # else .url stays the one that failed
            page.url = snap["url"]
        return page

    def cookies(self):
        """Every cookie of the profile: {"name", "value", "domain", "path",
        "httpOnly", "secure", "sameSite" (absent when unset), "session", …}."""
        return self._call("Storage.getCookies", tab=False)["cookies"]

    def clear_cookies(self):
        self._call("Storage.clearCookies", tab=False)

    def _evaluate(self, expression):
        r = self._call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise BrowserError(f"evaluating {expression[:120]!r}: "
                               f"{d.get('exception', {}).get('description') or d.get('text')}")
        return r["result"].get("value")

    def _screenshot(self, name):
        if not self.screenshot_dir:
            raise BrowserError("screenshot: the Browser has no screenshot_dir")
        size = self._call("Page.getLayoutMetrics")["cssContentSize"]
        clip = {"x": 0, "y": 0, "scale": 1,
                "width": max(self.width, int(size["width"])),
                "height": min(max(self.height, int(size["height"])), MAX_SCREENSHOT_HEIGHT)}
        data = self._call("Page.captureScreenshot",
                          {"format": "png", "captureBeyondViewport": True, "clip": clip})["data"]
        os.makedirs(self.screenshot_dir, exist_ok=True)
        path = os.path.join(self.screenshot_dir, f"{name}.png")
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def _event(self, msg):
        if msg.get("sessionId") != self._session or not self._page:
            return
        method, p, page = msg["method"], msg.get("params", {}), self._page
        if method == "Page.lifecycleEvent":
            self._lifecycle.add((p["frameId"], p["loaderId"], p["name"]))
        elif method == "Network.requestWillBeSent":
            self._requests[p["requestId"]] = (p["request"]["url"], p.get("type", ""), p.get("frameId"))
        elif method == "Network.responseReceived":
            r = p["response"]
            if p.get("type") == "Document" and p.get("frameId") == self._frame:
                page.status, page.url, page._request = r["status"], r["url"], p["requestId"]
                page.headers = {k.lower(): v for k, v in r.get("headers", {}).items()}
            elif r["status"] >= 400 and not r["url"].endswith("/favicon.ico"):
                page.failed_requests.append({"url": r["url"], "type": p.get("type", ""),
                                             "status": r["status"], "request": p["requestId"]})
        elif method == "Network.loadingFailed":
            url, rtype, frame = self._requests.get(p["requestId"], ("?", p.get("type", ""), None))
            if not (rtype == "Document" and frame == self._frame) and not url.endswith("/favicon.ico"):
                why = p.get("blockedReason") or p.get("errorText", "")
                page.failed_requests.append({"url": url, "type": rtype, "error": why, "request": p["requestId"]})
        elif method == "Runtime.consoleAPICalled":
            text = " ".join(str(a["value"]) if "value" in a else a.get("description", a.get("type", ""))
                            for a in p.get("args", []))
            frames = p.get("stackTrace", {}).get("callFrames") or [{}]
            level = "error" if p["type"] in ("error", "assert") else p["type"]
            page.console.append({"level": level, "source": "console-api", "text": text,
                                 "url": frames[0].get("url", "")})
        elif method == "Log.entryAdded":
            e = p["entry"]
            if e.get("url", "").endswith("/favicon.ico"):
                return
            page.console.append({"level": e["level"], "source": e["source"], "text": e["text"],
                                 "url": e.get("url", ""), "request": e.get("networkRequestId")})
        elif method == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            page.exceptions.append(d.get("exception", {}).get("description") or d.get("text", ""))
        elif method == "Page.javascriptDialogOpening":
            page.dialogs.append({"type": p["type"], "message": p["message"]})
            # A dialog blocks the page until answered; the reply is not awaited
            # because this runs while another reply is being read.
            self._c.post("Page.handleJavaScriptDialog", {"accept": False}, self._session)
