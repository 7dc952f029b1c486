#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`gpumon report` pages in real headless Chromium (ctest: report_chromium).

Makes recordings with `gpumon record` on the fake NVML (demo: 8 GPUs; gpu-lost: a GPU lost
after XID 79), an empty one and a hostile one (process, GPU and command names with
`</script>`, markup and invalid UTF-8) derived from them with sqlite3, writes reports of those,
of the real H200 recording and a --baseline comparison, and opens each file:// page in
Chromium (driven over --remote-debugging-pipe by web/test/test_dashboard_chromium.py's driver).

Checks per page: 5 uPlot canvases with drawn pixels per GPU that has samples (none when the
run is empty); no console error, exception or CSP violation; no request other than the page
itself and data: URLs; the hostile names show as text and inject nothing; a screenshot that is
not blank. A run with training steps (inserted with sqlite3: ranks mapped to a GPU by their
hello's PCI bus id, by CUDA_DEVICE_ORDER=PCI_BUS_ID, and one unmapped with a hostile device
name) has a chart per rank, an allocator chart for the unmapped one, allocator memory on the
mapped GPUs' memory charts, and switches to the step axis and back with every chart redrawn.
The --baseline page draws both runs overlaid per GPU. The marker labels of the lost-GPU run
(XID 79 and the loss) and of an XID storm derived from it never overlap on any chart; time axes
and legends write times as the tables do (ISO 8601, UTC, Z); temperatures are in °C; findings
give their evidence in words. Also: a corrupt recording gives exit status 1 and a message
naming the file.
Exit status 0 pass, 1 fail, 77 skipped (no chromium, or gpumon built without uPlot).
"""
import argparse
import base64
import json
import os
import re
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "web", "test"))
sys.path.insert(0, os.path.join(HERE, "..", "util", "testing"))
from test_dashboard_chromium import (Chromium, Failure, SKIP, check, find_chromium,  # noqa: E402
                                     problems, requested_urls)
from wait_for import wait_for  # noqa: E402

CHARTS_PER_GPU = 5
HOSTILE = "</script><img src=x onerror=alert(1)><b>bold</b>"

PAGE_REPORT = r"""(() => {
  const gpus = [...document.querySelectorAll('section.gpu')].map((s) => {
    const canvases = [...s.querySelectorAll('.charts canvas')];
    const inked = canvases.map((c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
      return n;
    });
    return { gpu: Number(s.dataset.gpu), canvases: canvases.length, inked,
             spark: !!s.querySelector('svg.spark path'), lost: !!s.querySelector('.badge.lost') };
  });
  const data = JSON.parse(document.getElementById('report-data').textContent);
  return {
    state: window.gpumonReport ? window.gpumonReport.state() : null,
    gpus, samples: data.gpus.map((g) => g.samples), lostIntervals: data.gpus.map((g) => g.lost.length),
    injected: document.querySelectorAll('img, [onerror], main b, header b').length,
    scripts: document.scripts.length,
    text: document.body.innerText,
    verdicts: [...document.querySelectorAll('#baseline td.verdict')].map((td) => td.textContent),
  };
})()"""


STEP_PAGE = r"""(() => {
  const titles = (sel) => [...document.querySelectorAll(sel + ' .chart-title')].map((e) => e.textContent);
  const legend = (gpu) => { const el = document.querySelector('.gpu[data-gpu="' + gpu + '"] .chart-mem .u-legend');
                            return el ? el.textContent : ''; };
  const inked = [...document.querySelectorAll('.charts canvas')].map((c) => {
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++;
    return n;
  });
  return { state: window.gpumonReport.state(), steps: titles('#steps'), gpu0: titles('.gpu[data-gpu="0"]'),
           gpu2: titles('.gpu[data-gpu="2"]'), mem2: legend(2), mem5: legend(5), mem0: legend(0),
           inked, injected: document.querySelectorAll('img, [onerror], main b').length,
           ranks: [...document.querySelectorAll('table.ranks tbody tr')].map((tr) => tr.textContent),
           labels: window.gpumonReport.labels().flat().map((l) => l.text),
           actionRows: document.querySelectorAll('table.actions tbody tr').length };
})()"""

def hover_script(gpu, chart):
    """A script that moves the mouse over the middle of GPU `gpu`'s `chart` chart."""
    return r"""(() => {
  const over = document.querySelector('.gpu[data-gpu="%d"] .chart-%s .u-over');
  over.scrollIntoView();
  const r = over.getBoundingClientRect();
  const at = { clientX: r.left + r.width / 2, clientY: r.top + r.height / 2, bubbles: true };
  over.dispatchEvent(new MouseEvent('mouseenter', at));
  over.dispatchEvent(new MouseEvent('mousemove', at));
  return true;
})()""" % (gpu, chart)


LEGENDS = r"""(() => {
  const val = (sel) => [...document.querySelectorAll(sel + ' .u-legend .u-value')].map((e) => e.textContent);
  return { power2: val('.gpu[data-gpu="2"] .chart-power'), util5: val('.gpu[data-gpu="5"] .chart-util') };
})()"""

FINDINGS = r"""(() => {
  const row = [...document.querySelectorAll('#summary tr')].find((tr) => tr.textContent.startsWith('Health score'));
  return { health: row ? row.querySelector('td').textContent : '',
           ids: [...document.querySelectorAll('#findings article.finding')].map((a) => a.dataset.id),
           evidence: document.querySelectorAll('#findings ul.evidence li').length,
           evidenceText: [...document.querySelectorAll('#findings ul.evidence li')].map((li) => li.textContent),
           evidenceKeys: [...document.querySelectorAll('#findings ul.evidence li')].map((li) => li.dataset.key),
           advice: document.querySelectorAll('#findings p.advice').length,
           markers: JSON.parse(document.getElementById('report-data').textContent).findings };
})()"""

# Every chart's marker labels, its tick labels on the time axis; the events table's times.
LABELS = r"""(() => ({ labels: window.gpumonReport.labels(), ticks: window.gpumonReport.ticks(),
  events: [...document.querySelectorAll('table.events tbody tr td:first-child')].map((td) => td.textContent),
  titles: [...document.querySelectorAll('.chart-title')].map((e) => e.textContent) }))()"""

TIME_LEGEND = r"""(() => { const el = document.querySelector('.gpu[data-gpu="0"] .chart-power .u-legend .u-series:first-child .u-value');
  return el ? el.textContent : ''; })()"""

ISO_MS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
TICK = re.compile(r"^\d\d:\d\d:\d\d(\.\d{3})?Z(\n\d{4}-\d\d-\d\d)?$")


def overlapping(boxes):
    """The pairs of label boxes (x, y, w, h) that overlap."""
    out = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            if (a["x"] < b["x"] + b["w"] and b["x"] < a["x"] + a["w"]
                    and a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"]):
                out.append((a["text"], b["text"]))
    return out


def check_markers_and_times(browser, name, want_texts):
    """No two marker labels overlap on any chart; each of `want_texts` is on some label; the
    time axes and the legend write times as the events table does."""
    got = browser.eval(LABELS)
    bad = [pair for boxes in got["labels"] for pair in overlapping(boxes)]
    check(not bad, "%s: no marker labels overlap (%s)" % (name, bad[:3]))
    texts = " | ".join(b["text"] for boxes in got["labels"] for b in boxes)
    for want in want_texts:
        check(want in texts, "%s: a label says %r (%s)" % (name, want, texts[:200]))
    ticks = [t["text"] for chart in got["ticks"] for t in chart]
    check(ticks and all(TICK.match(t) for t in ticks) and all("\n" in chart[0]["text"] for chart in got["ticks"] if chart),
          "%s: time ticks as HH:MM:SSZ, the date under the first (%s)" % (name, ticks[:3]))
    crowded = [(a["text"], b["text"]) for chart in got["ticks"] for a, b in zip(chart, chart[1:])
               if a["x"] + a["w"] / 2 + 2 > b["x"] - b["w"] / 2]
    check(not crowded, "%s: time tick labels do not overlap (%s)" % (name, crowded[:2]))
    check(got["events"] and all(ISO_MS.match(t) for t in got["events"]),
          "%s: the events table in ISO 8601 UTC (%s)" % (name, got["events"][:2]))
    check(any(t.startswith("Temperature (\u00b0C)") for t in got["titles"]), "%s: temperature charts in \u00b0C" % name)
    browser.eval(hover_script(0, "power"))
    legend = []
    wait_for(lambda: legend.append(browser.eval(TIME_LEGEND)) or ISO_MS.match(legend[-1]), interval=0.05)
    check(ISO_MS.match(legend[-1]), "%s: the legend's time in ISO 8601 UTC, as the tables (%r)" % (name, legend[-1]))


BASELINE_CHARTS = r"""(() => {
  const canvases = [...document.querySelectorAll('#baseline .charts canvas')];
  return { state: window.gpumonReport.state().baseCharts, canvases: canvases.length,
           inked: canvases.map((c) => { const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
                                        let n = 0; for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; }) };
})()"""


def element_shot(browser, path, selector):
    """A screenshot of the element `selector` only (for a person to look at)."""
    box = browser.eval("(() => { const r = document.querySelector(%s).getBoundingClientRect();"
                       " return [r.left + scrollX, r.top + scrollY, r.width, r.height]; })()" % json.dumps(selector))
    r = browser.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                     "clip": {"x": box[0], "y": box[1], "width": box[2], "height": box[3], "scale": 1}})
    with open(path, "wb") as f:
        f.write(base64.b64decode(r["data"]))
    return path


def check_steps_page(browser, html, out_dir):
    open_report(browser, html, out_dir, "steps")
    found = browser.eval(FINDINGS)
    check(found["health"].endswith(")") and "/ 100 (-" in found["health"],
          "findings: the health score with its deductions in the summary (%r)" % found["health"])
    check("throttled" in found["ids"] and found["evidence"] > 0 and found["advice"] > 0,
          "findings: the throttled finding with evidence and advice (%s)" % found["ids"])
    check("gpu5_throttle_share" in found["evidenceKeys"]
          and any(re.match(r"^GPU 5 throttled \d+(\.\d)? % of its busy time$", t) for t in found["evidenceText"])
          and not any("_" in t for t in found["evidenceText"]),
          "findings: evidence in words with units, the keys kept as data-key (%s)" % found["evidenceText"][:4])
    check(any(5 in m["gpus"] for m in found["markers"]),
          "findings: a marker for GPU 5's charts (%s)" % found["markers"])
    element_shot(browser, os.path.join(out_dir, "gpu5-time.png"), '.gpu[data-gpu="5"]')
    st = browser.eval(STEP_PAGE)
    ranks = st["ranks"]
    check(len(ranks) == 3 and "GPU 2 (PCI bus id" in ranks[0] and "GPU 5 (CUDA_DEVICE_ORDER=PCI_BUS_ID" in ranks[1]
          and "unmapped" in ranks[2] and HOSTILE in ranks[2],
          "steps: rank 0 on GPU 2 by PCI bus id, rank 1 on GPU 5 by PCI order, rank 2 unmapped (%s)" % ranks)
    check(st["injected"] == 0, "steps: the hostile device name injects nothing")
    check(len(st["steps"]) == 5 and sum("Allocator memory" in t for t in st["steps"]) == 1,
          "steps: a step chart per rank, an allocator chart for the unmapped one and an actions chart "
          "(%s)" % st["steps"])
    check(sum(t.startswith("Micro-batch size and DataLoader workers") and "rank 0" in t
              for t in st["steps"]) == 1,
          "actions: rank 0, which acted, has a micro-batch size and workers chart (%s)" % st["steps"])
    check(any("oom_split: micro-batch 16" in t for t in st["labels"])
          and any("loader_retuned: 4 workers" in t for t in st["labels"]),
          "actions: marked on the charts (%s)" % [t for t in st["labels"] if ":" in t][:6])
    check(st["actionRows"] == 2, "actions: both in the events table (%d)" % st["actionRows"])
    check("allocated" in st["mem2"] and "reserved" in st["mem5"] and "allocated" not in st["mem0"],
          "steps: allocator memory on GPU 2's and GPU 5's memory charts, not GPU 0's")
    check(min(st["inked"]) > 200, "steps: every chart drawn on the time axis")
    element_shot(browser, os.path.join(out_dir, "steps-time.png"), "#steps")
    mark = browser.event_count()
    browser.eval("document.getElementById('axis-toggle').click()")
    st = browser.eval(STEP_PAGE)
    check(st["state"]["axis"] == "step" and st["state"]["charts"] == 5 + 8 * CHARTS_PER_GPU,
          "step axis: every chart redrawn (%s)" % st["state"])
    check(min(st["inked"]) > 200, "step axis: every chart drawn")
    check(all("step axis: rank 0 (pid 1001, cuda:0), which drives this GPU" in t for t in st["gpu2"]),
          "step axis: GPU 2's charts say they follow rank 0, which drives it (%s)" % st["gpu2"][:1])
    check(all("no process is known to drive this GPU" in t for t in st["gpu0"]),
          "step axis: GPU 0's charts say no process is known to drive it (%s)" % st["gpu0"][:1])
    element_shot(browser, os.path.join(out_dir, "steps-step-axis.png"), "#steps")
    browser.eval(hover_script(2, "power"))

    def shown(values):
        return any(v not in ("--", "") for v in values)

    hover = {}

    def legends_filled():  # the legends fill a frame or two after the hover
        hover.update(browser.eval(LEGENDS))
        return shown(hover["power2"]) and shown(hover["util5"])

    wait_for(legends_filled, interval=0.05)
    check(shown(hover["power2"]) and shown(hover["util5"]),
          "step axis: hovering GPU 2's power chart shows its values and, synced, GPU 5's (%s)" % hover)
    check(not png_is_blank(element_shot(browser, os.path.join(out_dir, "gpu5-step-axis.png"),
                                        '.gpu[data-gpu="5"]')), "step axis: GPU 5's screenshot is not blank")
    check(not png_is_blank(element_shot(browser, os.path.join(out_dir, "gpu2-step-axis.png"),
                                        '.gpu[data-gpu="2"]')), "step axis: GPU 2's screenshot is not blank")
    browser.eval("document.getElementById('axis-toggle').click()")
    st = browser.eval(STEP_PAGE)
    check(st["state"]["axis"] == "time" and min(st["inked"]) > 200, "back on the time axis, all drawn")
    bad = problems(browser.events_since(mark))
    check(not bad, "steps: no console error while switching axes (%s)" % bad[:2])


def png_is_blank(path):
    """True when the PNG (8-bit RGB/RGBA, as Chromium writes) has fewer than 16 colours."""
    with open(path, "rb") as f:
        raw = f.read()
    pos, idat, width, height, channels = 8, b"", 0, 0, 4
    while pos < len(raw):
        length, kind = struct.unpack(">I4s", raw[pos:pos + 8])
        body = raw[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            channels = {2: 3, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    data = zlib.decompress(idat)
    stride = width * channels
    prev = bytearray(stride)
    colours = set()
    for y in range(height):
        f, row = data[y * (stride + 1)], bytearray(data[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = row[i - channels] if i >= channels else 0
            b, c = prev[i], prev[i - channels] if i >= channels else 0
            if f == 1:
                row[i] = (row[i] + a) & 255
            elif f == 2:
                row[i] = (row[i] + b) & 255
            elif f == 3:
                row[i] = (row[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                row[i] = (row[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        if y % 8 == 0:
            for x in range(0, stride, channels * 4):
                colours.add(bytes(row[x:x + 3]))
        prev = row
        if len(colours) >= 16:
            return False
    return True


def record(gpumon, fake, scenario, path, seconds, scale, interval_ms=100):
    env = dict(os.environ, GPUMON_NVML_LIBRARY=fake, GPUMON_FAKE_SCENARIO=scenario,
               GPUMON_FAKE_TIME_SCALE=str(scale))
    subprocess.run([gpumon, "record", "-o", path, "--interval", str(interval_ms), "--", "sleep", str(seconds)],
                   env=env, check=True, stderr=subprocess.DEVNULL)


def derive(src, dst, sql):
    shutil.copy(src, dst)
    db = sqlite3.connect(dst)
    db.executescript(sql)
    db.commit()
    db.close()


def add_steps(path):
    """Three training processes over the sampled time, 0.1 s steps with a data wait and
    allocator figures: rank 0's hello names GPU 2's PCI bus id; rank 1 has no bus id but
    CUDA_DEVICE_ORDER=PCI_BUS_ID and CUDA_VISIBLE_DEVICES=5 (GPU 5 by PCI order); rank 2 says no
    hello and names a hostile device, so it stays unmapped. Rank 0's OOM guard splits its batch
    at 2 s and its adaptive loader retunes at 4 s (action events)."""
    db = sqlite3.connect(path)
    first, last = db.execute("SELECT min(first_time_ms), max(last_time_ms) FROM sample_chunks").fetchone()
    buses = dict(db.execute("SELECT gpu, pci_bus_id FROM devices"))
    hellos = [(1001, 0, {"device": "cuda:0", "pci_bus_id": buses[2].lower().replace("00000000:", "0000:")}),
              (1002, 1, {"device": "cuda:0", "pci_bus_id": None, "cuda_device_order": "PCI_BUS_ID",
                         "cuda_visible_devices": "5"})]
    for pid, rank, detail in hellos:
        db.execute("INSERT INTO rank_events(time_ms, pid, rank, kind, detail) VALUES (?,?,?,?,?)",
                   (first, pid, rank, "hello", json.dumps(dict(detail, type="hello"))))
    for pid, rank, device in ((1001, 0, "cuda:0"), (1002, 1, "cuda:0"), (1003, 2, HOSTILE)):
        t, n = first / 1000.0, 0
        while t + 0.1 <= last / 1000.0:
            wait = 0.04 if n % 7 == 0 else 0.005
            db.execute("INSERT INTO steps(received_ms, pid, rank, device, step, t_start_s, t_end_s,"
                       " cpu_step_s, data_wait_s, allocated_bytes, reserved_bytes)"
                       " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                       (int(t * 1000 + 100), pid, rank, device, n, t, t + 0.1, 0.1, wait,
                        (20 + n % 5) << 30, 40 << 30))
            t, n = t + 0.1, n + 1
    actions = ((first + 2000, {"action": "oom_split", "step": 20, "reason": "oom", "batch_size": 32,
                               "micro_batch_size": 16, "previous_micro_batch_size": 32,
                               "summary": "CUDA OOM at step 20: split 32 into 2 x 16 " + HOSTILE}),
               (first + 4000, {"action": "loader_retuned", "step": 40, "num_workers": 4,
                               "previous_num_workers": 0, "prefetch_factor": 2,
                               "previous_prefetch_factor": 2}))
    for at, detail in actions:
        db.execute("INSERT INTO rank_events(time_ms, pid, rank, kind, detail) VALUES (?,?,?,?,?)",
                   (at, 1001, 0, "action", json.dumps(dict(detail, type="action"))))
    db.commit()
    db.close()


def report(gpumon, args, what):
    t = time.monotonic()
    r = subprocess.run([gpumon, "report"] + args, capture_output=True, text=True)
    if r.returncode != 0:
        raise Failure("gpumon report %s failed (%d): %s" % (what, r.returncode, r.stderr))
    print("     %s: %s" % (what, r.stdout.strip()))
    check(re.search(r"\): a run of .* on \d+ GPU\(s\), \d+ GPU-samples; generated in [0-9.]+ s$", r.stdout.strip()),
          "%s: the summary line gives the run's length and names the generation time" % what)
    return time.monotonic() - t


def open_report(browser, html, out_dir, name):
    mark = browser.event_count()
    browser.call("Page.navigate", {"url": "file://" + html})
    browser.wait_for("document.readyState === 'complete' && window.gpumonReport"
                     " && window.gpumonReport.state().done", "the report %s to draw" % name)
    rep = browser.eval(PAGE_REPORT)
    shot = browser.screenshot(os.path.join(out_dir, name + ".png"))
    evs = browser.events_since(mark)
    bad = problems(evs)
    for line in bad:
        print("     ", line)
    check(not bad, "%s: no console error, exception or CSP violation" % name)
    foreign = [u for u in requested_urls(evs) if not u.startswith("data:") and u != "file://" + html]
    check(not foreign, "%s: no request but the page itself (others: %s)" % (name, foreign[:3]))
    check(rep["state"]["error"] is None, "%s: the page script finished" % name)
    check(rep["scripts"] == 3, "%s: exactly the page's data block and two scripts" % name)
    check(not png_is_blank(shot), "%s: the screenshot is not blank (%s)" % (name, shot))
    for g, n in zip(rep["gpus"], rep["samples"]):
        want = CHARTS_PER_GPU if n else 0
        check(g["canvases"] == want and all(px > 200 for px in g["inked"]),
              "%s: GPU %d has %d drawn chart canvases (got %d, inked pixels %s)"
              % (name, g["gpu"], want, g["canvases"], g["inked"]))
    return rep


def run(args):
    chromium = find_chromium(args.chromium)
    if not chromium:
        print("SKIP: chromium not found (apt-get install chromium)")
        return SKIP
    os.makedirs(args.out, exist_ok=True)
    work = tempfile.mkdtemp(prefix="gpumon-report-test-")
    g = args.gpumon
    browser = None
    try:
        demo, lost = os.path.join(work, "demo.gpumon"), os.path.join(work, "lost.gpumon")
        # 50 s of scenario at 20 Hz: GPU 5 throttles and GPU 3 reports an ECC error, enough
        # samples for the diagnosis to find both.
        record(g, args.fake_nvml, "demo", demo, 5, 10, 50)
        record(g, args.fake_nvml, "gpu-lost", lost, 2, 4)  # 8 s: GPU 1 lost from 5 s
        empty, hostile = os.path.join(work, "empty.gpumon"), os.path.join(work, "hostile.gpumon")
        derive(demo, empty, "DELETE FROM sample_chunks; DELETE FROM events; DELETE FROM processes;")
        bad_utf8 = "CAST(X'%s' || X'fffe41' AS TEXT)" % HOSTILE.encode().hex()
        derive(demo, hostile, "UPDATE processes SET name = %s; UPDATE devices SET name = %s WHERE gpu = 0;"
               " UPDATE meta SET value = %s WHERE key IN ('command', 'hostname');" % (bad_utf8, bad_utf8, bad_utf8))

        # XIDs close to the loss at 5 s (an XID storm as a GPU falls off the bus).
        storm = os.path.join(work, "storm.gpumon")
        derive(lost, storm, "INSERT INTO events(gpu, time_ms, kind, value) SELECT gpu, time_ms + d, 'xid', x"
               " FROM events, (SELECT 0 AS d, 13 AS x UNION ALL SELECT 20, 31 UNION ALL SELECT 60, 43"
               " UNION ALL SELECT 150, 48 UNION ALL SELECT 400, 63) WHERE kind = 'lost';")

        steps = os.path.join(work, "steps.gpumon")
        shutil.copy(demo, steps)
        add_steps(steps)

        pages = {}
        for name, rec, extra in (("demo-hostile", hostile, []), ("h200", args.h200, []),
                                 ("empty", empty, []), ("gpu-lost", lost, []), ("storm", storm, []),
                                 ("baseline", demo, ["--baseline", lost]), ("steps", steps, [])):
            pages[name] = os.path.join(work, name + ".html")
            report(g, [rec, "-o", pages[name]] + extra, name)

        with open(pages["h200"], "rb") as f:
            # The notice embed_report.cmake appends to the inlined library; report.js names
            # uPlot whether or not the library was built in.
            if b"/*! uPlot " not in f.read():
                print("SKIP: gpumon was built without uPlot (npm ci --prefix web, then rebuild)")
                return SKIP

        corrupt = os.path.join(work, "corrupt.gpumon")
        with open(corrupt, "wb") as f:
            f.write(b"SQLite format 3\0" + os.urandom(8000))
        r = subprocess.run([g, "report", corrupt, "-o", os.path.join(work, "c.html")],
                           capture_output=True, text=True)
        check(r.returncode == 1 and corrupt in r.stderr and not os.path.exists(os.path.join(work, "c.html")),
              "a corrupt recording: exit 1, the message names the file (%r)" % r.stderr.strip())

        browser = Chromium(chromium, args.out)
        browser.open_page()
        rep = open_report(browser, pages["demo-hostile"], args.out, "demo-hostile")
        check(len(rep["gpus"]) == 8, "demo: 8 GPU sections")
        check(rep["injected"] == 0, "hostile names inject no element")
        check(HOSTILE in rep["text"] and "\ufffd" in rep["text"],
              "hostile names show as text, invalid UTF-8 as U+FFFD")
        check("SIMULATED" in rep["text"], "the simulated label shows")
        check("\u00b0C" in rep["text"] and not re.search(r"\d C\b", rep["text"]),
              "demo: temperatures in \u00b0C")

        rep = open_report(browser, pages["h200"], args.out, "h200")
        check(len(rep["gpus"]) == 1 and "NVIDIA H200" in rep["text"], "H200: one GPU, named")

        rep = open_report(browser, pages["empty"], args.out, "empty")
        check(all(g["canvases"] == 0 for g in rep["gpus"]) and "No samples were recorded" in rep["text"],
              "empty run: no charts, and the page says so")

        rep = open_report(browser, pages["gpu-lost"], args.out, "gpu-lost")
        check(len(rep["gpus"]) == 2 and rep["gpus"][1]["lost"] and not rep["gpus"][0]["lost"],
              "gpu-lost: GPU 1 is marked LOST, GPU 0 is not")
        check(rep["lostIntervals"][1] >= 1 and "XID 79" in open(pages["gpu-lost"]).read(),
              "gpu-lost: the lost stretch and XID 79 are marked on the charts")
        check_markers_and_times(browser, "gpu-lost", ["XID 79", "GPU lost"])
        element_shot(browser, os.path.join(args.out, "gpu-lost-gpu1.png"), '.gpu[data-gpu="1"]')
        open_report(browser, pages["storm"], args.out, "storm")
        check_markers_and_times(browser, "storm", ["XID 79", "GPU lost", "XID 13"])
        element_shot(browser, os.path.join(args.out, "storm-gpu1.png"), '.gpu[data-gpu="1"]')

        check_steps_page(browser, pages["steps"], args.out)

        rep = open_report(browser, pages["baseline"], args.out, "baseline")
        element_shot(browser, os.path.join(args.out, "baseline-charts.png"), "#baseline")
        base = browser.eval(BASELINE_CHARTS)
        check(base["state"] == 40 and base["canvases"] == 40 and min(base["inked"]) > 200,
              "baseline: 8 GPUs x 5 charts of both runs overlaid, all drawn (%s)" % base)
        pairs = browser.eval("[...document.querySelectorAll('table.pairs tbody tr')].map((tr) =>"
                             " [tr.querySelectorAll('svg.spark').length, tr.textContent])")
        check(len(pairs) == 8 and [p[0] for p in pairs[:2]] == [2, 2]
              and all("not in the baseline" in p[1] for p in pairs[2:]),
              "baseline: GPUs 0-1 side by side with the baseline's, GPUs 2-7 only in this run")
        check(len(rep["verdicts"]) == 17 and "better" in rep["verdicts"] and "worse" in rep["verdicts"],
              "baseline: 17 compared figures with verdicts (%s)" % rep["verdicts"])
        check(sum(v.startswith("not comparable: different GPUs") for v in rep["verdicts"]) == 2,
              "baseline: 8 GPUs against 2: neither energy per second nor the total compared (%s)"
              % rep["verdicts"])

        # The CSP is in force: an injected inline script does not run, and it is reported.
        mark = browser.event_count()
        browser.eval("(() => { const s = document.createElement('script');"
                     " s.textContent = 'window.cspBroken = true'; document.body.append(s); })()")
        check(wait_for(lambda: any("Content Security Policy" in line
                                   for line in problems(browser.events_since(mark)))),
              "the CSP violation is reported (so the console checks above would see one)")
        check(browser.eval("window.cspBroken === undefined"), "an injected inline script is blocked by the CSP")
        return 0
    except (Failure, subprocess.CalledProcessError) as e:
        print("FAIL:", e, flush=True)
        return 1
    finally:
        if browser:
            browser.close()
        shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description="gpumon report pages in headless Chromium.")
    ap.add_argument("--gpumon", required=True)
    ap.add_argument("--fake-nvml", required=True)
    ap.add_argument("--h200", required=True, help="testdata/recordings/h200-gemm-10hz.gpumon")
    ap.add_argument("--out", default="report-test-output", help="folder for screenshots")
    ap.add_argument("--chromium")
    args = ap.parse_args()
    t = time.monotonic()
    rc = run(args)
    print("%s in %.1f s" % ({0: "PASS", 1: "FAIL", SKIP: "SKIPPED"}[rc], time.monotonic() - t))
    return rc


if __name__ == "__main__":
    sys.exit(main())
