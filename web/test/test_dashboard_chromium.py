#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The web dashboard in real headless Chromium (ctest: web_dashboard_chromium).

Without --base-url it starts web/test/stub_api.py's server (127.0.0.1, ephemeral port) with the
page built by web/embed_dashboard.cmake (--html) and 8 GPUs x 1 h of 1 Hz history, including
nulls, a lost GPU and hostile strings. With --base-url it drives a running `gpumon serve`
instead (fixture-specific checks are then skipped).

Chromium is driven over the DevTools protocol through --remote-debugging-pipe (fds 3 and 4,
NUL-separated JSON): no websocket module and no TCP debugging port are needed.

Checks: one uPlot canvas per chart per GPU for every GPU; time to first render with 1 h of
history and the time of one live update (printed: figures of a benchmark, not checked, since a
loaded machine makes them anything); data and pixels change over time; nulls stay
gaps (never 0); no console error, exception, CSP violation or dialog; the hostile names show
as text and inject no element; requests go only to the same origin's / and /api/v1/*; the
window selector trims; "connection lost, retrying" appears when the API fails and goes away
when it is back (stub only). Writes screenshots and results.json to --out.
Exit status 0 pass, 1 fail, 77 skipped (no chromium, or the page was built without uPlot).
"""
import argparse
import base64
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "src", "util", "testing"))
import stub_api  # noqa: E402
from wait_for import TIMEOUT_S, wait_for  # noqa: E402

SKIP = 77
CHARTS_PER_GPU = 5


class Failure(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failure(what)
    print("ok  ", what, flush=True)


class Chromium:
    """A headless Chromium and one page target, over --remote-debugging-pipe."""

    def __init__(self, binary, out_dir, width=1600, height=1100):
        self.profile = tempfile.mkdtemp(prefix="gpumon-chromium-")
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()

        # Keep our ends away from fds 3 and 4 so the child's dup2 always really copies.
        def high(fd):
            new = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
            os.close(fd)
            return new

        to_chrome_r, to_chrome_w = high(to_chrome_r), high(to_chrome_w)
        from_chrome_r, from_chrome_w = high(from_chrome_r), high(from_chrome_w)

        def child_fds():
            os.dup2(to_chrome_r, 3)
            os.dup2(from_chrome_w, 4)

        args = [binary, "--headless=new", "--remote-debugging-pipe", "--no-sandbox",
                "--disable-gpu", "--user-data-dir=" + self.profile, "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                "--disable-background-networking", "--disable-component-update",
                "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
                "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
                "--disable-backgrounding-occluded-windows", "--password-store=basic",
                "--use-mock-keychain", "--disable-features=Translate,MediaRouter,OptimizationHints",
                "--window-size=%d,%d" % (width, height), "about:blank"]
        self.stderr = open(os.path.join(out_dir, "chromium.log"), "wb")
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self.stderr,
                                     stderr=self.stderr, preexec_fn=child_fds, close_fds=False)
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self.wfd = to_chrome_w
        self.rfd = from_chrome_r
        self.next_id = 0
        self.replies = {}
        self.events = []
        self.cond = threading.Condition()
        self.closed = False
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.session = None
        self.width, self.height = width, height

    def _read(self):
        buf = b""
        while True:
            try:
                chunk = os.read(self.rfd, 1 << 20)
            except OSError:
                chunk = b""
            if not chunk:
                with self.cond:
                    self.closed = True
                    self.cond.notify_all()
                return
            buf += chunk
            while b"\0" in buf:
                raw, buf = buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self.cond:
                    if "id" in msg:
                        self.replies[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self.cond.notify_all()
                if msg.get("method") == "Page.javascriptDialogOpening":
                    # A dialog would block the page: dismiss it (the test fails on it anyway).
                    threading.Thread(target=self.call, args=("Page.handleJavaScriptDialog",
                                                             {"accept": True}), daemon=True).start()

    def call(self, method, params=None, timeout=TIMEOUT_S, session=True):
        with self.cond:
            self.next_id += 1
            mid = self.next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        data = json.dumps(msg).encode() + b"\0"
        while data:
            data = data[os.write(self.wfd, data):]
        deadline = time.monotonic() + timeout
        with self.cond:
            while mid not in self.replies:
                left = deadline - time.monotonic()
                if left <= 0 or self.closed:
                    raise Failure("DevTools call %s: %s" % (method, "no reply" if left <= 0 else "chromium exited"))
                self.cond.wait(left)
            reply = self.replies.pop(mid)
        if "error" in reply:
            raise Failure("DevTools call %s failed: %s" % (method, reply["error"]))
        return reply.get("result", {})

    def open_page(self):
        target = self.call("Target.createTarget", {"url": "about:blank"}, session=False)
        att = self.call("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True},
                        session=False)
        self.session = att["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable")
        self.call("Emulation.setDeviceMetricsOverride",
                  {"width": self.width, "height": self.height, "deviceScaleFactor": 1, "mobile": False})

    def eval(self, expr, timeout=TIMEOUT_S):
        r = self.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True}, timeout=timeout)
        if "exceptionDetails" in r:
            raise Failure("evaluating %r threw: %s" % (expr[:80], json.dumps(r["exceptionDetails"])[:500]))
        return r["result"].get("value")

    def wait_for(self, expr, what):
        """Until the page's `expr` is true (TIMEOUT_S at most: only a hung test ends there)."""
        v = wait_for(lambda: self.eval(expr), interval=0.05)
        if not v:
            raise Failure("timed out after %.0f s waiting for %s" % (TIMEOUT_S, what))
        return v

    def screenshot(self, path, whole_page=True):
        r = self.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": whole_page},
                      timeout=TIMEOUT_S)
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))
        return path

    def events_since(self, n):
        with self.cond:
            return list(self.events[n:])

    def event_count(self):
        with self.cond:
            return len(self.events)

    def close(self):
        try:
            self.call("Browser.close", session=False, timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        for fd in (self.wfd, self.rfd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.stderr.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def problems(events, allow_api_errors=False):
    """Console errors, exceptions, CSP violations, failed loads and dialogs among `events`."""
    out = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append("exception: %s %s" % (d.get("text"), d.get("exception", {}).get("description", "")))
        elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
            out.append("console.%s: %s" % (p["type"], " ".join(
                str(a.get("value", a.get("description", ""))) for a in p.get("args", []))))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
            entry = p["entry"]
            if allow_api_errors and entry.get("source") == "network" and "/api/v1/" in entry.get("url", ""):
                continue
            out.append("log %s (%s): %s %s" % (entry["level"], entry.get("source"), entry.get("text"),
                                                 entry.get("url", "")))
        elif m == "Page.javascriptDialogOpening":
            out.append("dialog opened: %s" % p.get("message"))
    return out


def requested_urls(events):
    return [e["params"]["request"]["url"] for e in events
            if e.get("method") == "Network.requestWillBeSent"]


def find_chromium(explicit):
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


DOM_REPORT = r"""(() => {
  const shown = (e) => !!e && getComputedStyle(e).display !== 'none' && e.getClientRects().length > 0;
  const panels = [...document.querySelectorAll('.gpu-panel')];
  const D = window.gpumonDashboard;
  return {
    panels: panels.map((p) => ({
      gpu: Number(p.dataset.gpu),
      charts: p.querySelectorAll('.chart').length,
      uplots: p.querySelectorAll('.chart .uplot').length,
      canvases: p.querySelectorAll('.chart canvas').length,
      canvasSizes: [...p.querySelectorAll('.chart canvas')].map((c) => c.width * c.height),
      name: p.querySelector('.gpu-name').textContent,
      lostShown: shown(p.querySelector('.badge.lost')),
      reasons: [...p.querySelectorAll('.reasons-list .badge')].map((b) => b.textContent),
      rows: [...p.querySelectorAll('.procs-table tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent)),
    })),
    injected: document.querySelectorAll('img, [onerror], main b, main script').length,
    scripts: document.scripts.length,
    simulated: shown(document.getElementById('simulated')) ? document.getElementById('simulated').textContent : null,
    connHidden: !shown(document.getElementById('conn')),
    connText: document.getElementById('conn').textContent,
    diagnosesHidden: !shown(document.getElementById('diagnoses')),
    snapshot: D.snapshot(),
    ticks: D.ticks(),
    windowS: D.windowS(),
    firstRenderMs: D.firstRenderMs(),
  };
})()"""

# A digest of the pixels of GPU 0's utilization chart (changes when the chart is redrawn with new data).
CANVAS_DIGEST = r"""(() => {
  const c = document.querySelector('.gpu-panel .chart-util canvas');
  return c ? c.toDataURL('image/png') : '';
})()"""


def run(args):
    chromium = find_chromium(args.chromium)
    if not chromium:
        print("SKIP: chromium not found (apt-get install chromium; scripts/setup.sh does)")
        return SKIP
    os.makedirs(args.out, exist_ok=True)
    results = {"chromium": chromium}

    stub = None
    if args.base_url:
        base = args.base_url.rstrip("/")
        with urllib.request.urlopen(base + "/api/v1/devices", timeout=TIMEOUT_S) as r:
            devices = json.load(r)
        expect_gpus = args.expect_gpus or len(devices.get("gpus", []))
    else:
        with open(args.html, "rb") as f:
            html = f.read()
        if b'data-state="no-chart-library"' in html:
            print("SKIP: the page was built without uPlot (run `npm ci --prefix web` and rebuild)")
            return SKIP
        t = time.monotonic()
        stub = stub_api.StubServer(html, gpus=args.gpus).start()
        print("stub server %s, fixtures in %.2f s" % (stub.base_url, time.monotonic() - t))
        base = stub.base_url
        expect_gpus = args.gpus
    origin = urllib.parse.urlsplit(base + "/")
    results["base_url"] = base

    browser = Chromium(chromium, args.out, width=args.width)
    try:
        browser.open_page()
        # 1. First render with 8 GPUs x 1 h of history (#window=1h selects the 1 h window).
        browser.call("Page.navigate", {"url": base + "/#window=1h"})
        browser.wait_for("window.gpumonDashboard && window.gpumonDashboard.firstRenderMs() !== null", "the first render")
        rep = browser.eval(DOM_REPORT)
        results["first_render_ms"] = rep["firstRenderMs"]
        print("time to first render (navigation start to painted charts, %d GPUs x %d points): %.0f ms"
              % (len(rep["panels"]), max([s["points"] for s in rep["snapshot"]] or [0]), rep["firstRenderMs"]))
        phases = browser.eval("window.gpumonDashboard.phases()")
        results["first_render_phases_ms"] = phases
        print("  of which (ms since navigation start): %s"
              % ", ".join("%s %.0f" % (k, v) for k, v in phases.items()))
        check(len(rep["panels"]) == expect_gpus, "%d GPU panels (got %d)" % (expect_gpus, len(rep["panels"])))
        drawn = {s["gpu"] for s in rep["snapshot"] if s["drawn"]}
        check(0 in drawn, "the panels in view are drawn (%d of %d)" % (len(drawn), expect_gpus))
        for p in rep["panels"]:
            # A panel's charts are made when it first comes near the view.
            made = p["canvases"] == CHARTS_PER_GPU
            check(p["charts"] == CHARTS_PER_GPU and p["uplots"] == p["canvases"]
                  and (made or (p["canvases"] == 0 and p["gpu"] not in drawn))
                  and all(s > 0 for s in p["canvasSizes"]),
                  "GPU %d: %d charts, %s (charts %d, canvases %d)"
                  % (p["gpu"], CHARTS_PER_GPU,
                     "one non-empty uPlot canvas each" if made else "made once in view",
                     p["charts"], p["canvases"]))
        check(rep["windowS"] == 3600, "the #window=1h address selects the 1 h window")
        if not stub:
            # A run seconds old fills its charts: they span the run (at least a minute), not the
            # hour, and widen with it. A server with an hour of history fills the hour.
            span = browser.eval("window.gpumonDashboard.shownSpanS()")
            x_span = rep["snapshot"][0]["xSpan"]
            with urllib.request.urlopen(base + "/api/v1/history?seconds=3600&metrics=power_draw_w",
                                        timeout=TIMEOUT_S) as r:
                times = [g["time"][0] for g in json.load(r)["gpus"] if g["time"]]
            age = time.time() - min(times) if times else 0
            if age < 50:
                check(span == 60 and x_span == 60,
                      "a fresh run's charts span 60 s of the 1 h window (span %s, GPU 0's x "
                      "axis %s)" % (span, x_span))
            else:
                # Each run of rows arrives as two samples (its lowest and highest, at its first
                # and last time); trimming the window may take the first's: up to a pixel.
                width = browser.eval("document.querySelector('.gpu-panel .uplot')"
                                     ".getBoundingClientRect().width")
                want = min(3600, age) - max(10, 2 * 3600 / max(50, width))
                check(want <= span <= 3600 and want <= x_span <= 3600,
                      "a run %.0f s old spans at least %.0f s of the 1 h window (span %s, GPU 0's x axis "
                      "%s)" % (age, want, span, x_span))
        for s in rep["snapshot"]:
            for c in s["charts_drawn"] if s["drawn"] else []:
                ticks = c["ticks"]
                decimals = {len(t.split(".")[1]) if "." in t else 0 for t in ticks}
                top = c["dataMax"] if c["dataMax"] is not None else float("-inf")
                check(top <= c["yMax"] and len(decimals) <= 1,
                      "GPU %d %s: every value inside the y axis (max %.1f, axis to %.1f), ticks %s "
                      "at one precision" % (s["gpu"], c["key"], top, c["yMax"], ticks))
        check(rep["scripts"] == 2, "the page runs exactly its two inline scripts")
        # The overview: one chart per metric, every GPU a line on the same time axis.
        # In one evaluation: a live tick between two would move the overview past GPU 0's time.
        both = browser.eval("(() => { const D = window.gpumonDashboard; return {ov: D.overview(),"
                            " last0: D.snapshot()[0].lastTime, span: D.shownSpanS()}; })()")
        ov = both["ov"]
        results["overview"] = ov
        want = ["GPU %d" % g for g in sorted(s["gpu"] for s in rep["snapshot"])]
        check(ov["shown"] == (expect_gpus >= 2) and len(ov["charts"]) == (5 if expect_gpus >= 2 else 0),
              "the overview shows 5 charts above the GPU panels")
        last0 = both["last0"]
        for c in ov["charts"]:
            # An hour of 1 Hz samples is drawn as about two points per pixel (lowest, highest).
            # It is redrawn once new data moves it by a pixel: it may be that much behind.
            pixel_s = both["span"] / max(50, c["width"])
            check(c["gpus"] == want and 0 <= last0 - c["lastTime"] <= pixel_s + 1
                  and c["points"] <= 2 * c["width"] + 2
                  and all(v > 0 for v in c["values"]) and c["legend"] == (expect_gpus <= 16),
                  "overview %s: a line per GPU (%d), up to %s, %d points for %d px, values for "
                  "every GPU, legend %s" % (c["key"], len(c["gpus"]), c["lastTime"], c["points"],
                                            c["width"], "shown" if c["legend"] else "hidden"))
        # The history is asked for before any chart is laid out, for two samples per pixel of
        # the widest chart the page expects (chartWidthPx): it must not expect too narrow.
        asked = browser.eval("JSON.stringify([performance.getEntriesByType('resource')"
                             ".map((e) => e.name).filter((n) => n.includes('/history?')),"
                             " Math.max(...[...document.querySelectorAll('.uplot')]"
                             ".map((e) => e.getBoundingClientRect().width))])")
        urls, widest = json.loads(asked)
        points = [int(urllib.parse.parse_qs(urllib.parse.urlsplit(u).query)["points"][0]) for u in urls]
        check(points and min(points) >= 2 * widest - 2,
              "the history is asked for two samples per pixel of the widest chart (points %s, "
              "widest chart %.0f px)" % (points, widest))
        if expect_gpus > 16:
            # No legend: the line under the pointer is named above the chart.
            box = browser.eval("(() => { const r = document.querySelector('#overview .chart-util .u-over')"
                               ".getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; })()")
            for dy in (0.2, 0.5, 0.8):
                browser.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": box[0] + box[2] * 0.6,
                                                          "y": box[1] + box[3] * dy})
            browser.wait_for("document.querySelector('#overview .chart-util .overview-focus')"
                             ".textContent.startsWith(' · GPU ')", "the hovered line to be named")
            named = browser.eval("document.querySelector('#overview .chart-util .overview-focus').textContent")
            check(True, "hovering the overview names the line: '%s'" % named)

        if stub:
            snap = {s["gpu"]: s for s in rep["snapshot"]}
            check(snap[0]["points"] >= 3590, "1 h of history loaded (%d points on GPU 0)" % snap[0]["points"])
            check(all(s["nullUtil"] > 0 and s["zeroUtil"] == 0 for s in rep["snapshot"]),
                  "missing values stay null (gaps), never 0")
            charts0 = {c["key"]: c for c in snap[0]["charts_drawn"]}
            util_line = charts0["util"]["series"][0]
            check(util_line["gaps"] > 0, "a missed read is a gap in its line (%d gaps)" % util_line["gaps"])
            if not snap[1]["drawn"]:  # below the training section: drawn once in view
                browser.eval("document.querySelectorAll('.gpu-panel')[1].scrollIntoView()")
                browser.wait_for("window.gpumonDashboard.snapshot()[1].drawn", "GPU 1's charts in view")
                snap[1] = browser.eval("window.gpumonDashboard.snapshot()[1]")
                browser.eval("window.scrollTo(0, 0)")
            stretches1 = [c["throttledStretches"] for c in snap[1]["charts_drawn"]]
            check(snap[1]["throttledSamples"] > 0 and snap[1]["drawn"] and all(n > 0 for n in stretches1),
                  "GPU 1's throttled stretches are shaded on each of its charts (%s)" % stretches1)
            check(snap[0]["throttledSamples"] == 0
                  and all(c["throttledStretches"] == 0 for c in snap[0]["charts_drawn"]),
                  "GPU 0 at the power cap near full clocks is not shaded (not throttling)")
            peak = charts0["power"]["series"][2]
            check(peak["shown"] and peak["values"] > 1000 and peak["gaps"] == 0,
                  "the 'max (20 ms)' series, read every other tick, is drawn as one line (%s)" % peak)
            panels = {p["gpu"]: p for p in rep["panels"]}
            check(panels[stub_api.LOST_GPU]["lostShown"]
                  and not any(p["lostShown"] for g, p in panels.items() if g != stub_api.LOST_GPU),
                  "only the lost GPU shows LOST")
            check(rep["simulated"] is not None and "stub-8gpu" in rep["simulated"],
                  "SIMULATED banner names the scenario")
            check(rep["diagnosesHidden"], "no findings in /api/v1/current: the diagnoses area is hidden")
            check("hw_thermal_slowdown" in panels[1]["reasons"], "clock-event reasons shown as badges")
            rows = panels[2]["rows"]
            check(any(r[1] == stub_api.HOSTILE_PROCESS and r[2] == stub_api.HOSTILE_USER for r in rows),
                  "the hostile process name and user show as text")
            check(panels[6]["name"] == stub_api.HOSTILE_GPU_NAME, "the hostile GPU name shows as text")
            check(rep["injected"] == 0, "no element injected by hostile strings")
            check(panels[4]["rows"] == [], "a GPU without processes has an empty table")

        # 2. Live updates: data, text and pixels change (waited for: a poll a second).
        before = browser.eval(DOM_REPORT)
        pixels_before = hashlib.sha256(browser.eval(CANVAS_DIGEST).encode()).hexdigest()
        b = {s["gpu"]: s for s in before["snapshot"]}
        now = {}

        def updated():
            now["report"] = browser.eval(DOM_REPORT)
            now["pixels"] = hashlib.sha256(browser.eval(CANVAS_DIGEST).encode()).hexdigest()
            snap = {s["gpu"]: s for s in now["report"]["snapshot"]}
            return (now["report"]["ticks"] > before["ticks"]
                    and all(snap[g]["lastTime"] > b[g]["lastTime"] for g in snap)
                    and (not stub or any(snap[g]["stats"] != b[g]["stats"] for g in snap))
                    and now["pixels"] != pixels_before)

        wait_for(updated, interval=0.2)
        after, pixels_after = now["report"], now["pixels"]
        a = {s["gpu"]: s for s in after["snapshot"]}
        check(after["ticks"] > before["ticks"], "polled /api/v1/current again (%d -> %d)" % (before["ticks"], after["ticks"]))
        check(all(a[g]["lastTime"] > b[g]["lastTime"] for g in a), "every GPU got newer samples")
        if stub:  # a real scenario may hold its values constant
            check(any(a[g]["stats"] != b[g]["stats"] for g in a), "the current values changed on screen")
        check(pixels_after != pixels_before, "GPU 0's utilization chart was redrawn with new data")
        if stub:
            check(all(3590 <= a[g]["points"] <= 3602 for g in a), "the 1 h window stays trimmed while appending")
        tick_ms = browser.eval("window.gpumonDashboard.lastTickMs()")
        results["tick_ms"] = tick_ms
        print("one live update (ingest /api/v1/current for %d GPUs, redraw the charts in view): %.1f ms"
              % (expect_gpus, tick_ms))
        results["screenshot"] = browser.screenshot(os.path.join(args.out, "dashboard.png"))
        results["screenshot_view"] = browser.screenshot(os.path.join(args.out, "dashboard-view.png"),
                                                        whole_page=False)
        # Readable at this width: nothing wider than the page, no clipped title or value, every
        # chart in view a usable size.
        layout = browser.eval("""(() => {
          const clipped = [...document.querySelectorAll('.stat-label, .stat-value, .u-title, th')]
            .filter((e) => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)
            .map((e) => e.className + ': ' + e.textContent.slice(0, 40));
          const small = [...document.querySelectorAll('.chart canvas')]
            .filter((c) => c.offsetParent !== null && c.getBoundingClientRect().top < innerHeight &&
                           (c.clientWidth < 250 || c.clientHeight < 100))
            .map((c) => c.clientWidth + 'x' + c.clientHeight);
          return {page: document.documentElement.scrollWidth, view: innerWidth, clipped, small};
        })()""")
        results["layout"] = layout
        check(layout["page"] <= layout["view"] and not layout["clipped"] and not layout["small"],
              "readable at %d px: page %d px wide, clipped %s, small charts %s"
              % (layout["view"], layout["page"], layout["clipped"][:3], layout["small"][:3]))

        if stub:
            # The training section: the stub's two ranks and one that left, drawn over the
            # window from the server's history at once, not from the polls since the page opened.
            browser.wait_for("(() => { const t = window.gpumonDashboard.training();"
                             " return t.shown && t.charts.length === 3 && t.charts[0].points >= 2; })()",
                             "the training section with two polls")
            tr_points = browser.eval("window.gpumonDashboard.training().charts[0].points")
            check(tr_points >= 500, "the training charts start with the window's history (%d points)" % tr_points)
            tr = browser.eval("window.gpumonDashboard.training()")
            check([r[:3] for r in tr["rows"]] == [["0", "0", "running"], ["1", "1", "running"], ["–", "–", "gone"]],
                  "training table: rank 0 and 1 running on GPUs 0 and 1, the departed one 'gone' (%s)" % tr["rows"])
            check(tr["rows"][1][6] == "35 %", "rank 1's data wait shows as 35 %% (%s)" % tr["rows"][1][6])
            check(all(c["lines"] == ["rank 0", "rank 1"] for c in tr["charts"]),
                  "step time, data wait and allocated charts: a line per running rank")
        # 3. The window selector.
        browser.eval("(() => { const s = document.getElementById('window'); s.value = '300';"
                     " s.dispatchEvent(new Event('change')); })()")
        browser.wait_for("window.gpumonDashboard.windowS() === 300"
                         " && window.gpumonDashboard.snapshot().every((s) => s.points <= 302)"
                         " && window.gpumonDashboard.training().charts.every((c) => c.points <= 320)"
                         " && location.hash === '#window=5m'", "the 5 min window")
        check(True, "the window selector switches to 5 min and trims the data")
        # The stub's hour of history fills the 5 min; a fresh serve's run spans less.
        span5 = "Math.min(300, window.gpumonDashboard.shownSpanS())"
        browser.wait_for("window.gpumonDashboard.snapshot()[0].xSpan === " + span5,
                         "GPU 0's chart to span 5 min (or the run, when younger)")
        check(True, "the charts in view are redrawn over 5 min")
        # In 5 min a pixel of the overview is about a second: it follows every tick or two.
        ov5 = browser.eval("window.gpumonDashboard.overview()")
        browser.wait_for("window.gpumonDashboard.overview().charts.every((c) => c.lastTime > %s)"
                         % ov5["charts"][0]["lastTime"], "the overview to follow the live updates")
        check(True, "the overview follows the live updates")
        last = expect_gpus - 1
        browser.eval("document.querySelectorAll('.gpu-panel')[%d].scrollIntoView()" % last)
        browser.wait_for("window.gpumonDashboard.snapshot()[%d].xSpan === %s" % (last, span5),
                         "the last GPU's chart to be redrawn once scrolled into view")
        check(True, "a panel scrolled into view is redrawn with the current data")
        canvases = browser.eval("document.querySelectorAll('.gpu-panel')[%d].querySelectorAll('.chart canvas').length" % last)
        check(canvases == CHARTS_PER_GPU, "the last GPU's charts were made when it came into view (%d canvases)" % canvases)
        browser.eval("window.scrollTo(0, 0)")

        evs = browser.events_since(0)
        bad = problems(evs)
        for line in bad:
            print("     ", line)
        check(not bad, "no console error, exception, CSP violation or dialog")
        urls = requested_urls(evs)
        foreign = []
        for u in urls:
            s = urllib.parse.urlsplit(u)
            if s.scheme == "data":
                continue
            if (s.scheme, s.netloc) != (origin.scheme, origin.netloc) or not (s.path == "/" or s.path.startswith("/api/v1/")):
                foreign.append(u)
        results["requests"] = len(urls)
        check(not foreign, "requests only to the same origin's / and /api/v1/* (%d requests; others: %s)"
              % (len(urls), foreign[:5]))

        # 4. A hidden tab stops polling; shown again, it resumes (document.hidden is overridden:
        # a headless page is never hidden by itself).
        browser.eval("(() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => true});"
                     " document.dispatchEvent(new Event('visibilitychange')); })()")
        browser.wait_for("!window.gpumonDashboard.running()", "the poll in progress to end")
        ticks_hidden = browser.eval("window.gpumonDashboard.ticks()")
        time.sleep(args.update_wait_s)  # a slow machine can only make this pass falsely
        check(browser.eval("window.gpumonDashboard.ticks()") == ticks_hidden, "no polling while the tab is hidden")
        browser.eval("(() => { Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});"
                     " document.dispatchEvent(new Event('visibilitychange')); })()")
        browser.wait_for("window.gpumonDashboard.ticks() > %d" % ticks_hidden, "polling to resume")
        check(True, "polling resumes when the tab is shown again")

        if stub:
            # 5. Findings in /api/v1/current show in the diagnoses area, as text.
            stub.findings = [{"severity": "warning", "gpu": 2, "title": stub_api.HOSTILE_PROCESS,
                              "detail": "power capped for 5 min"}, "plain finding"]
            browser.wait_for("getComputedStyle(document.getElementById('diagnoses')).display !== 'none'", "the diagnoses area")
            items = browser.eval("[...document.querySelectorAll('#diagnoses-list li')].map((li) => li.textContent)")
            check(len(items) == 2 and stub_api.HOSTILE_PROCESS in items[0] and items[1] == "plain finding"
                  and browser.eval("document.querySelectorAll('img, [onerror]').length") == 0,
                  "findings show in the diagnoses area, as text")
            stub.findings = None
            browser.wait_for("getComputedStyle(document.getElementById('diagnoses')).display === 'none'", "the diagnoses area to hide")
            check(True, "the diagnoses area hides when findings go away")

        # 6. Connection lost and back (stub only).
        if stub:
            mark = browser.event_count()
            stub.fail_api = True
            browser.wait_for("getComputedStyle(document.getElementById('conn')).display !== 'none'", "the connection-lost banner")
            text = browser.eval("document.getElementById('conn').textContent")
            check("retrying" in text.lower(), "API down: the page says %r" % text)
            browser.screenshot(os.path.join(args.out, "dashboard-offline.png"))
            stub.fail_api = False
            browser.wait_for("getComputedStyle(document.getElementById('conn')).display === 'none'", "recovery after the API is back")
            check(True, "API back: the banner goes away")
            bad = problems(browser.events_since(mark), allow_api_errors=True)
            for line in bad:
                print("     ", line)
            check(not bad, "no console error beyond the failed API requests during the outage")

        # 7. The Content-Security-Policy is in force, and its violations are seen by this test:
        # an injected inline script must not run and must be reported.
        mark = browser.event_count()
        browser.eval("(() => { const s = document.createElement('script');"
                     " s.textContent = 'window.cspBroken = true'; document.body.append(s); })()")
        check(wait_for(lambda: any("Content Security Policy" in line
                                   for line in problems(browser.events_since(mark)))),
              "the CSP violation is reported (so the console checks above would see one)")
        check(browser.eval("window.cspBroken === undefined"), "an injected inline script is blocked by the CSP")

        results["passed"] = True
        return 0
    except Failure as e:
        print("FAIL:", e, flush=True)
        results["passed"] = False
        results["failure"] = str(e)
        try:
            browser.screenshot(os.path.join(args.out, "dashboard-failure.png"))
        except Exception:
            pass
        return 1
    finally:
        browser.close()
        if stub:
            stub.stop()
        with open(os.path.join(args.out, "results.json"), "w") as f:
            json.dump(results, f, indent=2)


def main():
    ap = argparse.ArgumentParser(description="The gpumon web dashboard in headless Chromium.")
    ap.add_argument("--html", help="the built page (build/web/dashboard.html); needed without --base-url")
    ap.add_argument("--base-url", help="a running gpumon serve, e.g. http://127.0.0.1:9477 (no stub)")
    ap.add_argument("--expect-gpus", type=int, default=0, help="with --base-url: GPUs expected (default: /api/v1/devices)")
    ap.add_argument("--gpus", type=int, default=8, help="stub GPUs")
    ap.add_argument("--out", default="web-test-output", help="folder for screenshots and results.json")
    ap.add_argument("--width", type=int, default=1600, help="the window's width in px")
    ap.add_argument("--chromium", help="browser binary (default: chromium on PATH)")
    ap.add_argument("--update-wait-s", type=float, default=2.2,
                    help="how long a hidden tab is watched for polls")
    args = ap.parse_args()
    if not args.base_url and not args.html:
        ap.error("--html or --base-url is required")
    t = time.monotonic()
    rc = run(args)
    print("%s in %.1f s" % ({0: "PASS", 1: "FAIL", SKIP: "SKIPPED"}[rc], time.monotonic() - t))
    return rc


if __name__ == "__main__":
    sys.exit(main())
