# SPDX-License-Identifier: MIT
"""Headless Chromium for the report tests, driven through the DevTools protocol with the standard library only.

Chromium is started with ``--remote-debugging-pipe``: it reads protocol requests from its fd 3 and writes replies
and events to its fd 4, each message one JSON object ended by a NUL byte, so no websocket client and no port are
needed. ``Browser`` owns the process and a fresh profile directory; ``Browser.page()`` opens a tab (a flat
session) that records what the checks need while it runs:

  errors     console errors, uncaught exceptions and error-level log entries (text of each)
  requests   every URL the page asked for that is not file:, data: or about: (should stay empty)

Usage:
    with Browser(tmp_path) as b:
        p = b.page(width=1280, height=900)
        timing = p.load("file:///…/report.html")     # {"load_s": wall seconds, "render_ms": in-page time}
        p.evaluate("document.title")
        png = p.screenshot(full=True); pdf = p.pdf()
"""
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-default-apps", "--mute-audio", "--hide-scrollbars"]


def available():
    """Whether the Chromium binary is there."""
    return os.access(CHROMIUM, os.X_OK)


class CdpError(RuntimeError):
    pass


class Browser:
    def __init__(self, tmpdir, timeout=60):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="chromium-profile-", dir=tmpdir)
        self.log_path = Path(tmpdir) / "chromium.log"
        req_r, self._w = os.pipe()  # requests: we write, Chromium reads on its fd 3
        self._r, ev_w = os.pipe()   # replies and events: Chromium writes on its fd 4
        # Copies above 10, so that the dup2 onto 3 and 4 in the child cannot overwrite one with the other.
        child_r = fcntl.fcntl(req_r, fcntl.F_DUPFD_CLOEXEC, 10)
        child_w = fcntl.fcntl(ev_w, fcntl.F_DUPFD_CLOEXEC, 10)

        def in_child():
            os.dup2(child_r, 3)  # dup2 clears close-on-exec on the copies
            os.dup2(child_w, 4)

        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(
                [CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}", "--remote-debugging-pipe", "about:blank"],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=in_child, close_fds=False)
        for fd in (req_r, ev_w, child_r, child_w):
            os.close(fd)
        self._buf = b""
        self._id = 0
        self._events = []

    # ---- the protocol ----
    def _read_message(self, deadline):
        while b"\0" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message from Chromium")
            ready, _, _ = select.select([self._r], [], [], left)
            if ready:
                chunk = os.read(self._r, 1 << 20)
                if not chunk:
                    raise CdpError(f"Chromium closed the pipe; log:\n{self.log()}")
                self._buf += chunk
        msg, self._buf = self._buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=None, timeout=None):
        """Send one request and return its result; events read meanwhile are kept for wait_event()."""
        self._id += 1
        msg = {"id": self._id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self._w, data):]
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self._id:
                if "error" in m:
                    raise CdpError(f"{method}: {m['error']}")
                return m.get("result", {})
            self._events.append(m)

    def wait_event(self, method, session=None, timeout=None):
        """The next event `method` (of `session`), reading more messages until it comes."""
        deadline = time.monotonic() + (timeout or self.timeout)
        while True:
            for i, m in enumerate(self._events):
                if m.get("method") == method and (session is None or m.get("sessionId") == session):
                    return self._events.pop(i)
            self._events.append(self._read_message(deadline))

    def drain(self, timeout=0.05):
        """Read the messages already waiting (events), without blocking longer than `timeout`."""
        deadline = time.monotonic() + timeout
        try:
            while True:
                self._events.append(self._read_message(deadline))
        except TimeoutError:
            pass

    def take_events(self, session):
        """Remove and return the stored events of `session`."""
        mine = [m for m in self._events if m.get("sessionId") == session]
        self._events = [m for m in self._events if m.get("sessionId") != session]
        return mine

    def page(self, width=1280, height=900):
        return Page(self, width, height)

    def log(self):
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def close(self):
        try:
            self.send("Browser.close", timeout=10)
        except (CdpError, TimeoutError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self._r, self._w):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Page:
    def __init__(self, browser, width, height):
        self.b = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        self.errors = []
        self.requests = []
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})
        self.collect()
        self.errors.clear()
        self.requests.clear()

    def send(self, method, params=None, timeout=None):
        return self.b.send(method, params, session=self.session, timeout=timeout)

    def collect(self):
        """Move this tab's stored events into errors and requests."""
        self.b.drain()
        for m in self.b.take_events(self.session):
            method, p = m.get("method"), m.get("params", {})
            if method == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                self.errors.append(f"exception: {d.get('text')} {d.get('exception', {}).get('description', '')}")
            elif method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                self.errors.append("console: " + " ".join(str(a.get("value", a.get("description")))
                                                           for a in p.get("args", [])))
            elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                e = p["entry"]
                self.errors.append(f"log: {e.get('source')}: {e.get('text')} {e.get('url', '')}")
            elif method == "Network.requestWillBeSent":
                url = p.get("request", {}).get("url", "")
                if not url.startswith(("file:", "data:", "about:")):
                    self.requests.append(url)

    def load(self, url, timeout=60, paint=True):
        """Navigate and wait for the load event and, with `paint`, two animation frames (the page painted;
        needs scripts enabled). Returns {"load_s": wall seconds from the request to that point, and with
        `paint`: "render_ms": navigation start to the painted frame by the page's own clock, "load_event_ms":
        navigation start to the end of the load event}."""
        t0 = time.monotonic()
        self.send("Page.navigate", {"url": url})
        self.b.wait_event("Page.loadEventFired", self.session, timeout)
        out = {}
        if paint:
            times = self.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => "
                                  "r({render: performance.now(), load: performance.getEntriesByType('navigation')"
                                  "[0].loadEventEnd}))))", await_promise=True, timeout=timeout)
            out = {"render_ms": times["render"], "load_event_ms": times["load"]}
        out["load_s"] = time.monotonic() - t0
        self.collect()
        return out

    def evaluate(self, expr, await_promise=False, timeout=None):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": await_promise}, timeout=timeout)
        if "exceptionDetails" in r:
            raise CdpError(f"evaluate {expr!r}: {r['exceptionDetails']}")
        return r.get("result", {}).get("value")

    def mouse(self, kind, x, y, button="none", clicks=0):
        """Input.dispatchMouseEvent: kind mouseMoved, mousePressed or mouseReleased, at viewport CSS pixels."""
        self.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, "button": button,
                                               "clickCount": clicks, "buttons": 1 if button == "left" and
                                               kind != "mouseReleased" else 0})

    def screenshot(self, full=False):
        """PNG bytes of the viewport, or of the whole page when `full`."""
        params = {"format": "png"}
        if full:
            size = self.send("Page.getLayoutMetrics")["cssContentSize"]
            params.update(captureBeyondViewport=True,
                          clip={"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1})
        return base64.b64decode(self.send("Page.captureScreenshot", params, timeout=120)["data"])

    def pdf(self):
        """PDF bytes of the page printed as the browser would, with the page's own @page size."""
        r = self.send("Page.printToPDF", {"printBackground": True, "preferCSSPageSize": True}, timeout=120)
        return base64.b64decode(r["data"])
