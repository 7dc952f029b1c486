// SPDX-License-Identifier: MIT
// gpumon live web dashboard (served at / by `gpumon serve`). Plain modern JS, no bundler; uPlot
// (the global `uPlot`) is inlined after this script by web/embed_dashboard.cmake: the first
// requests go out before it is evaluated, and nothing is drawn before DOMContentLoaded.
//
// Data flow: /api/v1/devices once, /api/v1/history once (columnar, the selected window), then
// /api/v1/current every interval_s (at least 1 s), appended to per-GPU columns trimmed to the
// window and handed to uPlot.setData (no DOM rebuild per tick). Polling stops while the tab is
// hidden; on return the history is fetched again to fill the gap.
//
// Every string from the API reaches the page through textContent only (never innerHTML).
'use strict';
(function () {
  const API = 'api/v1/'; // relative to the page: the same origin (and any reverse-proxy prefix)
  const WINDOWS = [[300, '5 min'], [600, '10 min'], [900, '15 min'], [3600, '1 hour']];
  const DEFAULT_WINDOW_S = 600;
  const FETCH_TIMEOUT_MS = 8000;
  const MAX_BACKOFF_S = 30;
  const MAX_PROCESS_ROWS = 64;
  const CHART_HEIGHT = 150;
  const GiB = 1024 * 1024 * 1024;

  // One chart per entry, per GPU. `scale` converts the API unit to the chart unit. `sparse`:
  // read by a sampler task slower than the tick (GPM, the driver's power buffer), so the ticks
  // between its reads are null; its line bridges those, and breaks only at a real gap.
  const CHARTS = [
    {key: 'util', title: 'Utilization', unit: '%', fixed: [0, 100], series: [
      {label: 'GPU util', metric: 'utilization_gpu_pct', scale: 1, color: '#1f77b4'},
      {label: 'SM active (GPM)', metric: 'sm_active_ratio', scale: 100, color: '#d62728', sparse: true}]},
    {key: 'mem', title: 'Memory', unit: 'GiB', series: [
      {label: 'used', metric: 'memory_used_bytes', scale: 1 / GiB, color: '#9467bd'},
      {label: 'total', metric: 'memory_total_bytes', scale: 1 / GiB, color: '#7f7f7f', dash: [5, 4]}]},
    {key: 'power', title: 'Power', unit: 'W', series: [
      {label: 'draw', metric: 'power_draw_w', scale: 1, color: '#ff7f0e'},
      {label: 'limit', metric: 'power_limit_w', scale: 1, color: '#7f7f7f', dash: [5, 4]},
      {label: 'max (20 ms)', metric: 'power_max_w', scale: 1, color: '#bcbd22', optional: true,
       sparse: true}]},
    {key: 'temp', title: 'Temperature', unit: '°C', series: [
      {label: 'GPU', metric: 'temperature_gpu_c', scale: 1, color: '#e377c2'},
      {label: 'memory', metric: 'temperature_memory_c', scale: 1, color: '#8c564b'}]},
    {key: 'clock', title: 'Clocks', unit: 'MHz', series: [
      {label: 'SM', metric: 'sm_clock_mhz', scale: 1, color: '#2ca02c'},
      {label: 'memory', metric: 'mem_clock_mhz', scale: 1, color: '#17becf'}]},
  ];
  // The overview: one chart per metric with every GPU as a line, so the GPU that differs from
  // the others is seen at once, whatever the count (as Grafana's DCGM dashboard shows them).
  const OVERVIEW = [
    {key: 'util', title: 'GPU utilization', unit: '%', fixed: [0, 100], metric: 'utilization_gpu_pct'},
    {key: 'mem', title: 'Memory used', unit: 'GiB', metric: 'memory_used_bytes'},
    {key: 'power', title: 'Power', unit: 'W', metric: 'power_draw_w'},
    {key: 'temp', title: 'GPU temperature', unit: '°C', metric: 'temperature_gpu_c'},
    {key: 'clock', title: 'SM clock', unit: 'MHz', metric: 'sm_clock_mhz'},
  ];
  const OVERVIEW_LEGEND_MAX = 16; // more GPUs: no legend row, the hovered line is highlighted
  const METRICS = [];
  const SCALE = {};
  for (const c of CHARTS) {
    for (const s of c.series) {
      if (!(s.metric in SCALE)) METRICS.push(s.metric);
      SCALE[s.metric] = s.scale;
    }
  }
  // 1 when the sample was throttled, 0 not, null unknown: the server applies the one rule
  // (src/gpu/throttle.h, as the report and the diagnosis do); the charts shade those stretches.
  const THROTTLED = 'throttled';
  METRICS.push(THROTTLED);
  SCALE[THROTTLED] = 1;
  const THROTTLED_FILL = 'rgba(255, 127, 14, 0.2)';

  const state = {
    windowS: DEFAULT_WINDOW_S,
    intervalS: 1,
    gpus: new Map(), // gpu index -> panel
    latestTime: null, // newest sample time over all GPUs (s since the epoch)
    devicesLoaded: false,
    needHistory: true,
    needTrainingHistory: false,  // a training history fetched was dropped: ask again
    redrawAll: false, // a history was applied: the next ingestCurrent draws every chart
    running: false,
    timer: null,
    failures: 0,
    hiddenSince: null,
    ticks: 0,
    firstRenderMs: null,
    phases: {}, // ms since navigation start at which the first render's steps ended
    lastTickMs: null, // time to ingest and draw the last /api/v1/current
    lastError: null,
    liveDiagnoses: false, // serve's /api/v1/diagnoses answered: its findings replace current's
    diagnosesNextMs: 0,
  };

  // ---------- small helpers ----------
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function setText(node, text) {
    const s = String(text);
    if (node.textContent !== s) node.textContent = s;
  }
  function isNum(v) { return typeof v === 'number' && Number.isFinite(v); }
  function fmt(v, digits) {
    if (!isNum(v)) return '–';
    const a = Math.abs(v);
    const d = digits !== undefined ? digits : (a >= 100 ? 0 : a >= 10 ? 1 : 2);
    return v.toFixed(d);
  }
  function fmtBytes(b) {
    if (!isNum(b)) return '–';
    if (b >= GiB) return (b / GiB).toFixed(1) + ' GiB';
    if (b >= 1024 * 1024) return (b / (1024 * 1024)).toFixed(0) + ' MiB';
    return (b / 1024).toFixed(0) + ' KiB';
  }
  function str(v, fallback) {
    if (v === undefined || v === null) return fallback;
    return String(v);
  }

  // The width of a chart in a `.charts` grid (dashboard.css: auto-fill, minmax(280px, 1fr),
  // 14 px gaps) in a panel as wide as the page less 58 px of margins, padding and borders:
  // known before the first panel is laid out, so the history is asked for at once. The
  // Chromium test holds it at least as wide as the charts drawn.
  function chartWidthPx() {
    const minPx = 280, gapPx = 14;
    const inner = Math.max(minPx, (window.innerWidth || 0) - 58);
    const columns = Math.max(1, Math.floor((inner + gapPx) / (minPx + gapPx)));
    return Math.ceil((inner - (columns - 1) * gapPx) / columns);
  }

  async function getJSON(path) {
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), FETCH_TIMEOUT_MS);
    try {
      const res = await fetch(API + path, {cache: 'no-store', signal: ctl.signal,
                                           credentials: 'same-origin', headers: {Accept: 'application/json'}});
      if (!res.ok) throw new Error('HTTP ' + res.status + ' for /' + API + path.split('?')[0]);
      return await res.json();
    } finally {
      clearTimeout(timer);
    }
  }

  // ---------- page chrome ----------
  const ui = {
    main: document.getElementById('gpus'),
    conn: document.getElementById('conn'),
    connText: document.getElementById('conn-text'),
    sim: document.getElementById('simulated'),
    simText: document.getElementById('simulated-text'),
    diag: document.getElementById('diagnoses'),
    diagList: document.getElementById('diagnoses-list'),
    status: document.getElementById('status'),
    host: document.getElementById('host'),
    windowSel: document.getElementById('window'),
    empty: document.getElementById('empty'),
    overview: document.getElementById('overview'),
    training: document.getElementById('training'),
    trainingCharts: document.getElementById('training-charts'),
    trainingRows: document.getElementById('training-rows'),
    overviewCharts: document.getElementById('overview-charts'),
  };

  // The window can be chosen in the address: /#window=1h (or 5m, 15m, or seconds).
  function windowFromHash() {
    const m = /(?:^#|&)window=([0-9]+)([smh]?)(?:&|$)/.exec(location.hash);
    if (!m) return null;
    const s = Number(m[1]) * ({'': 1, s: 1, m: 60, h: 3600})[m[2]];
    return WINDOWS.some((w) => w[0] === s) ? s : null;
  }
  state.windowS = windowFromHash() || DEFAULT_WINDOW_S;

  for (const [s, label] of WINDOWS) {
    const o = el('option', null, label);
    o.value = String(s);
    if (s === state.windowS) o.selected = true;
    ui.windowSel.appendChild(o);
  }
  ui.windowSel.addEventListener('change', () => {
    const s = Number(ui.windowSel.value);
    if (!WINDOWS.some((w) => w[0] === s) || s === state.windowS) return;
    state.windowS = s;
    state.needHistory = true;
    history.replaceState(null, '', '#window=' + (s % 3600 === 0 ? s / 3600 + 'h' : s / 60 + 'm'));
    kick();
  });

  window.addEventListener('hashchange', () => {
    const s = windowFromHash();
    if (s === null || s === state.windowS) return;
    ui.windowSel.value = String(s);
    ui.windowSel.dispatchEvent(new Event('change'));
  });

  function showConnectionLost(err, delayS) {
    state.lastError = String(err && err.message ? err.message : err);
    setText(ui.connText, 'Connection lost, retrying in ' + delayS + ' s (attempt ' + state.failures +
            '): ' + state.lastError);
    ui.conn.hidden = false;
    document.body.classList.add('offline');
  }
  function showConnected() {
    ui.conn.hidden = true;
    document.body.classList.remove('offline');
  }

  // ---------- panels ----------
  // Charts of panels scrolled out of view are not redrawn each tick (their data still is
  // kept current): they are redrawn when they come back into view.
  const panelOfRoot = new WeakMap();
  const visibility = typeof IntersectionObserver === 'function' ? new IntersectionObserver((entries) => {
    for (const e of entries) {
      const p = panelOfRoot.get(e.target);
      if (!p) continue;
      p.visible = e.isIntersecting;
      if (p.visible && (p.dirty || !p.charts.length)) redraw(p);
    }
  }, {rootMargin: '300px 0px'}) : null;

  // A sparse series' null gaps (canvas pixels, from uPlot) that are real: longer than 2.5 times
  // the usual spacing of its own readings. The others lie between two of its reads.
  function sparseGaps(u, sidx, i0, i1, nullGaps) {
    const xs = u.data[0], ys = u.data[sidx];
    const spacings = [];
    let prev = null;
    for (let i = i0; i <= i1; i++) {
      if (!isNum(ys[i])) continue;
      if (prev !== null) spacings.push(xs[i] - xs[prev]);
      prev = i;
    }
    if (spacings.length === 0) return nullGaps;
    spacings.sort((a, b) => a - b);
    const limitS = 2.5 * spacings[spacings.length >> 1];
    const limitPx = u.valToPos(xs[i0] + limitS, 'x', true) - u.valToPos(xs[i0], 'x', true);
    // (+1: uPlot rounds gap ends to whole pixels.)
    return nullGaps.filter((g) => g[1] - g[0] > limitPx + 1);
  }

  // A y axis from 0 (or below, for negatives) to a multiple of a 1-2-5 tick step above the
  // highest value, so every line stays inside the axis and its top gridline is labelled; ticks
  // share one precision, set by the step.
  function niceStep(x) {
    const p = Math.pow(10, Math.floor(Math.log10(x)));
    const m = x / p;
    return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * p;
  }
  function yAxis(def) {
    const axis = {step: def.fixed ? (def.fixed[1] - def.fixed[0]) / 4 : 1};
    axis.range = (u, min, max) => {
      if (def.fixed) return def.fixed;
      if (!isNum(max) || max <= 0) {
        axis.step = 0.25;
        return [0, 1];
      }
      const hi = max;
      axis.step = niceStep(hi * 1.02 / 4);
      const lo = isNum(min) && min < 0 ? -Math.ceil(-min / axis.step) * axis.step : 0;
      return [lo, Math.ceil(hi * 1.02 / axis.step) * axis.step];
    };
    axis.splits = (u) => {
      const out = [];
      for (let v = u.scales.y.min; v <= u.scales.y.max + axis.step / 1e6; v += axis.step) out.push(v);
      return out;
    };
    axis.values = (u, vals) => {
      const digits = Math.max(0, Math.min(3, -Math.floor(Math.log10(axis.step) + 1e-9)));
      return vals.map((v) => fmt(v, digits));
    };
    return axis;
  }

  // The time the charts span: the selected window, or, for a run younger than that, the run
  // itself (at least MIN_SPAN_S), so a fresh run fills its charts instead of sitting in their
  // last few pixels; the span then widens with the run until it is the window.
  const MIN_SPAN_S = 60;
  function shownSpanS() {
    let oldest = null;
    for (const p of state.gpus.values()) {
      if (p.t.length && (oldest === null || p.t[0] < oldest)) oldest = p.t[0];
    }
    if (oldest === null || !isNum(state.latestTime)) return state.windowS;
    return Math.min(state.windowS, Math.max(MIN_SPAN_S, state.latestTime - oldest));
  }

  // The x range of every GPU chart: the span above, ending at the newest sample.
  function windowRange(u, min, max) {
    const hi = isNum(state.latestTime) ? state.latestTime : (isNum(max) ? max : Date.now() / 1000);
    return [hi - shownSpanS(), hi];
  }

  // Each chart as wide as its container (at least 200 px).
  function fitWidths(charts) {
    for (const c of charts) {
      const w = Math.max(200, Math.floor(c.container.clientWidth));
      if (w !== c.u.width) c.u.setSize({width: w, height: CHART_HEIGHT});
    }
  }

  // The throttled stretches behind the lines, in orange: a throttled sample colours the time up
  // to the next sample (or one interval, for the newest). `stat.stretches`: how many were drawn.
  function shadeThrottled(u, panel, stat) {
    const col = panel.cols[THROTTLED], t = panel.t;
    let n = 0;
    const {left, top, width, height} = u.bbox;
    u.ctx.save();
    u.ctx.fillStyle = THROTTLED_FILL;
    for (let i = 0; i < t.length && col && col.length === t.length;) {
      if (col[i] !== 1) { i++; continue; }
      let j = i;
      while (j + 1 < t.length && col[j + 1] === 1) j++;
      const end = j + 1 < t.length ? t[j + 1] : t[j] + state.intervalS;
      const x0 = Math.max(left, u.valToPos(t[i], 'x', true));
      const x1 = Math.min(left + width, u.valToPos(end, 'x', true));
      if (x1 > x0) {
        u.ctx.fillRect(x0, top, Math.max(1, x1 - x0), height);
        n++;
      }
      i = j + 1;
    }
    u.ctx.restore();
    stat.stretches = n;
  }

  function makeChart(panel, def, container) {
    const series = [{}];
    for (const s of def.series) {
      const opts = {
        label: s.label,
        stroke: s.color,
        width: 1.5,
        dash: s.dash,
        spanGaps: false, // null = missing: a gap, never 0
        show: !s.optional,
        points: {show: false},
        value: (u, v) => (v === null || v === undefined ? '–' : fmt(v) + ' ' + def.unit),
      };
      if (s.sparse) opts.gaps = sparseGaps;
      series.push(opts);
    }
    const y = yAxis(def);
    const stat = {stretches: 0};
    const opts = {
      width: Math.max(200, container.clientWidth || 360),
      height: CHART_HEIGHT,
      hooks: {drawClear: [(u) => shadeThrottled(u, panel, stat)]},
      cursor: {drag: {x: false, y: false, setScale: false}},
      legend: {show: true, live: true},
      scales: {
        x: {time: true, range: windowRange},
        y: {range: y.range},
      },
      axes: [
        {space: 60, size: 30},
        {size: 48, splits: y.splits, values: y.values},
      ],
      series,
    };
    const data = [panel.t].concat(def.series.map((s) => panel.cols[s.metric]));
    const u = new uPlot(opts, data, container);
    return {def, u, container, stat};
  }

  function createPanel(gpu, info) {
    const p = {
      gpu,
      t: [],
      cols: {},
      charts: [],
      lost: false,
      procSig: '',
      reasonSig: null,
      procRows: [],
      // Until the IntersectionObserver's first word (it reports every observed panel at once):
      // charts are made when their panel first comes near the view, so 64 GPUs cost the few
      // panels on screen, not 320 charts.
      visible: !visibility,
      dirty: false, // data changed while out of view
    };
    for (const m of METRICS) p.cols[m] = [];

    const root = el('section', 'gpu-panel');
    root.dataset.gpu = String(gpu);
    const head = el('header', 'gpu-head');
    const title = el('h2', 'gpu-title');
    p.titleIndex = el('span', 'gpu-index', 'GPU ' + gpu);
    p.titleName = el('span', 'gpu-name', '');
    title.append(p.titleIndex, p.titleName);
    p.lostBadge = el('span', 'badge lost', 'LOST');
    p.lostBadge.hidden = true;
    title.append(p.lostBadge);
    p.meta = el('div', 'gpu-meta', '');
    head.append(title, p.meta);

    p.stats = {};
    const stats = el('div', 'gpu-stats');
    for (const [k, label] of [['util', 'util'], ['sm', 'SM active'], ['mem', 'memory'],
                              ['power', 'power'], ['temp', 'temp'], ['clock', 'SM clock'],
                              ['pstate', 'P-state']]) {
      const cell = el('span', 'stat');
      cell.append(el('span', 'stat-label', label));
      p.stats[k] = el('span', 'stat-value', '–');
      cell.append(p.stats[k]);
      stats.append(cell);
    }

    const reasonsBox = el('div', 'reasons');
    reasonsBox.append(el('span', 'reasons-label', 'clock events'));
    p.reasons = el('span', 'reasons-list');
    reasonsBox.append(p.reasons);
    p.throttledNote = el('span', 'reasons-note', 'orange on the charts: throttled');
    p.throttledNote.hidden = true; // until a stretch is in the window
    reasonsBox.append(p.throttledNote);

    const grid = el('div', 'charts');
    root.append(head, stats, reasonsBox, grid);

    const procBox = el('div', 'procs');
    const table = el('table', 'procs-table');
    const thead = el('thead');
    const hr = el('tr');
    for (const h of ['pid', 'process', 'user', 'GPU memory']) hr.append(el('th', null, h));
    thead.append(hr);
    p.procBody = el('tbody');
    table.append(thead, p.procBody);
    p.procNote = el('div', 'procs-note', 'no compute processes');
    procBox.append(el('h3', null, 'Processes'), table, p.procNote);
    root.append(procBox);

    // Panels stay ordered by GPU index.
    let before = null;
    for (const other of state.gpus.values()) {
      if (other.gpu > gpu && (!before || other.gpu < before.gpu)) before = other;
    }
    ui.main.insertBefore(root, before ? before.root : null);
    p.root = root;
    panelOfRoot.set(root, p);
    if (visibility) visibility.observe(root);
    ui.empty.hidden = true;

    p.plots = CHARTS.map((def) => {
      const box = el('div', 'chart chart-' + def.key);
      box.append(el('h3', null, def.title + ' (' + def.unit + ')'));
      const plot = el('div', 'plot');
      box.append(plot);
      grid.append(box);
      return plot;
    });
    if (typeof ResizeObserver === 'function') {
      const ro = new ResizeObserver(() => {
        if (p.resizeQueued) return;
        p.resizeQueued = true;
        requestAnimationFrame(() => {
          p.resizeQueued = false;
          if (p.dirty && p.charts.length) redraw(p, true); // never resize a chart over data it has not seen
          fitWidths(p.charts);
        });
      });
      ro.observe(grid);
    }
    state.gpus.set(gpu, p);
    applyInfo(p, info);
    return p;
  }

  function applyInfo(p, info) {
    if (!info) return;
    if (info.name !== undefined) setText(p.titleName, str(info.name, ''));
    const meta = [];
    const bus = info.pci_bus_id;
    if (bus) meta.push('PCI ' + str(bus, ''));
    if (info.uuid) meta.push(str(info.uuid, ''));
    if (isNum(info.memory_total_bytes)) meta.push(fmtBytes(info.memory_total_bytes));
    if (isNum(info.max_sm_clock_mhz)) meta.push('max SM ' + info.max_sm_clock_mhz + ' MHz');
    if (meta.length) setText(p.meta, meta.join(' · '));
  }

  function gpuIndex(g) {
    if (isNum(g.gpu)) return g.gpu;
    if (isNum(g.index)) return g.index;
    return null;
  }

  function panelFor(g) {
    const idx = gpuIndex(g);
    if (idx === null) return null;
    return state.gpus.get(idx) || createPanel(idx, g);
  }

  function applyDevices(dev) {
    const list = Array.isArray(dev) ? dev : (dev && Array.isArray(dev.gpus) ? dev.gpus : []);
    for (const g of list) {
      const p = panelFor(g);
      if (p) applyInfo(p, g);
    }
    const sys = dev && !Array.isArray(dev) ? (dev.system || dev) : {};
    const bits = [];
    for (const k of ['hostname', 'host']) if (sys[k]) { bits.push(str(sys[k], '')); break; }
    if (sys.driver_version) bits.push('driver ' + str(sys.driver_version, ''));
    const cuda = sys.cuda_version || sys.cuda_driver_version;
    if (cuda) bits.push('CUDA ' + str(cuda, ''));
    if (bits.length) setText(ui.host, bits.join(' · '));
  }

  // ---------- data ----------
  function scaled(metric, v) {
    return isNum(v) ? v * SCALE[metric] : null;
  }

  function trim(p) {
    if (!isNum(state.latestTime)) return;
    const cutoff = state.latestTime - state.windowS;
    const t = p.t;
    let k = 0;
    while (k < t.length && t[k] < cutoff) k++;
    if (k === 0) return;
    t.splice(0, k);
    for (const m of METRICS) p.cols[m].splice(0, k);
  }

  function redraw(p, force) {
    if (!p.visible && !force) {
      p.dirty = true;
      return;
    }
    p.dirty = false;
    p.throttledNote.hidden = !p.cols[THROTTLED].includes(1);
    if (!p.charts.length) {  // first time in view: the charts are made with the data as it is
      CHARTS.forEach((def, i) => p.charts.push(makeChart(p, def, p.plots[i])));
    }
    for (const c of p.charts) {
      c.u.setData([p.t].concat(c.def.series.map((s) => p.cols[s.metric])));
      c.def.series.forEach((s, i) => {
        if (s.optional && !c.u.series[i + 1].show && p.cols[s.metric].some(isNum)) {
          c.u.setSeries(i + 1, {show: true});
        }
      });
    }
  }

  // ---------- overview ----------
  const overview = {charts: [], gpus: [], visible: true, dirty: false, drawnAt: null};
  const GPU_COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
                      '#7f7f7f', '#bcbd22', '#17becf'];
  function gpuColor(i) {
    // Ten distinct hues, then the same hues darker and lighter: 64 lines stay tellable apart.
    const base = GPU_COLORS[i % GPU_COLORS.length];
    const shade = Math.floor(i / GPU_COLORS.length) % 3;
    return shade === 0 ? base : base + (shade === 1 ? 'aa' : '66');
  }

  // Every GPU's column of `metric` on one time axis. GPUs sampled by the same sampler share
  // their ticks: then the columns are used as they are; otherwise uPlot.join aligns them (a
  // GPU without a tick at some time is bridged there; its own nulls stay gaps).
  function overviewData(panels, metric, widthPx) {
    const first = panels[0].t;
    const aligned = panels.every((p) => p.t.length === first.length &&
      (first.length === 0 || (p.t[0] === first[0] && p.t[first.length - 1] === first[first.length - 1])));
    // Copies: the overview is redrawn less often than the panels' columns change (a hover
    // between redraws must not see them shifted by a trim).
    const data = aligned ? [first.slice()].concat(panels.map((p) => p.cols[metric].slice()))
                         : uPlot.join(panels.map((p) => [p.t, p.cols[metric]]));
    return envelope(data, widthPx);
  }

  // 64 lines of an hour at 1 Hz are 230 000 points a chart, far more than its pixels: each run
  // of k points becomes its lowest and highest value (a dip and a peak both stay visible), at
  // the run's first and last time, for about one pair per pixel. A run without a value is a gap.
  function envelope(data, widthPx) {
    const xs = data[0];
    const n = xs.length;
    const k = Math.ceil(n / Math.max(50, widthPx));
    if (k <= 2) return data;
    const buckets = Math.ceil(n / k);
    const out = [new Array(2 * buckets)];
    for (let b = 0; b < buckets; b++) {
      out[0][2 * b] = xs[b * k];
      out[0][2 * b + 1] = xs[Math.min(n, (b + 1) * k) - 1];
    }
    for (let si = 1; si < data.length; si++) {
      const ys = data[si];
      const col = new Array(2 * buckets);
      for (let b = 0; b < buckets; b++) {
        let lo = null, hi = null, loAt = 0, hiAt = 0;
        const end = Math.min(n, (b + 1) * k);
        for (let i = b * k; i < end; i++) {
          const v = ys[i];
          if (typeof v !== 'number' || !Number.isFinite(v)) continue;
          if (lo === null || v < lo) { lo = v; loAt = i; }
          if (hi === null || v > hi) { hi = v; hiAt = i; }
        }
        // In the order they happened, so a rise reads as a rise.
        col[2 * b] = loAt <= hiAt ? lo : hi;
        col[2 * b + 1] = loAt <= hiAt ? hi : lo;
      }
      out.push(col);
    }
    return out;
  }

  // A chart with a line per GPU or rank (the overview's and the training section's), in
  // `parent`: a legend up to OVERVIEW_LEGEND_MAX lines; with more, no legend (64 entries would
  // push the page below it out of view) and the line under the pointer is named in the title.
  // `data(width)` gives its columns for its plot's width; `x` its x scale.
  function lineChart(parent, cls, def, labels, data, x) {
    const legend = labels.length <= OVERVIEW_LEGEND_MAX;
    const box = el('div', 'chart ' + cls);
    const head = el('h3', null, def.title + ' (' + def.unit + ')');
    const focusText = el('span', 'overview-focus', '');
    head.append(focusText);
    box.append(head);
    const plot = el('div', 'plot');
    box.append(plot);
    parent.append(box);
    let focused = null;
    const showFocus = (u) => {
      const i = u.cursor.idx;
      if (legend || focused === null || i === null || i === undefined) {
        setText(focusText, '');
        return;
      }
      const v = u.data[focused][i];
      setText(focusText, ' · ' + u.series[focused].label + ': ' +
              (isNum(v) ? fmt(v) + ' ' + def.unit : '–'));
    };
    const series = [{}].concat(labels.map((label, i) => ({
      label,
      stroke: gpuColor(i),
      width: 1.25,
      spanGaps: false,
      points: {show: false},
      value: (u, v) => (v === null || v === undefined ? '–' : fmt(v) + ' ' + def.unit),
    })));
    const y = yAxis(def);
    const u = new uPlot({
      width: Math.max(200, plot.clientWidth || 360),
      height: CHART_HEIGHT,
      cursor: {drag: {x: false, y: false, setScale: false}, focus: {prox: 16}},
      focus: {alpha: 0.25},
      legend: {show: legend, live: legend},
      scales: {x, y: {range: y.range}},
      axes: [{space: 60, size: 30}, {size: 48, splits: y.splits, values: y.values}],
      series,
      hooks: {
        setSeries: [(u, sidx, opts) => {
          if (opts && opts.focus !== undefined) focused = opts.focus && sidx ? sidx : null;
          showFocus(u);
        }],
        setCursor: [showFocus],
      },
    }, data(plot.clientWidth || 360), plot);
    return {def, u, container: plot};
  }

  function buildOverview() {
    for (const c of overview.charts) c.u.destroy();
    overview.charts = [];
    ui.overviewCharts.textContent = '';
    const panels = Array.from(state.gpus.values()).sort((a, b) => a.gpu - b.gpu);
    overview.gpus = panels.map((p) => p.gpu);
    const labels = panels.map((p) => 'GPU ' + p.gpu);
    for (const def of OVERVIEW) {
      overview.charts.push(lineChart(ui.overviewCharts, 'chart-' + def.key, def, labels,
                                     (width) => overviewData(panels, def.metric, width),
                                     {time: true, range: windowRange}));
    }
  }

  // Redraws the overview (rebuilt when the GPUs changed); shown from two GPUs on. A live tick
  // redraws it only once the newest data moves its lines by a pixel (window / chart width: every
  // 12 s in the 1 h window on a 300 px chart): 64 lines on five charts cost about 100 ms a
  // draw. `force`: new data (history).
  function redrawOverview(force) {
    const panels = Array.from(state.gpus.values()).sort((a, b) => a.gpu - b.gpu);
    ui.overview.hidden = panels.length < 2;
    if (ui.overview.hidden) return;
    if (!overview.visible && !force) {
      overview.dirty = true;
      return;
    }
    overview.dirty = false;
    const gpus = panels.map((p) => p.gpu);
    if (gpus.length !== overview.gpus.length || gpus.some((g, i) => g !== overview.gpus[i])) {
      buildOverview();
      overview.drawnAt = state.latestTime;
      return;
    }
    const width = overview.charts.length ? overview.charts[0].u.width : 300;
    const pixelS = shownSpanS() / Math.max(50, width);
    if (!force && isNum(overview.drawnAt) && isNum(state.latestTime) &&
        state.latestTime - overview.drawnAt < pixelS) return;
    overview.drawnAt = state.latestTime;
    for (const c of overview.charts) c.u.setData(overviewData(panels, c.def.metric, c.u.width));
  }
  if (typeof IntersectionObserver === 'function') {
    new IntersectionObserver((entries) => {
      for (const e of entries) overview.visible = e.isIntersecting;
      if (overview.visible && overview.dirty) redrawOverview(true);
    }, {rootMargin: '300px 0px'}).observe(ui.overview);
  }

  // ---------- training ----------
  // The ranks attached to serve's agent socket (/api/v1/training): a row each, and their step
  // time, data-wait share and allocator memory over the window: its history from
  // /api/v1/training/history (the server's hour, a row per second of steps), then a point per
  // poll. `field` is the live API's, `history` the history's column.
  const TRAINING_CHARTS = [
    {key: 'step', title: 'Step time', unit: 's', field: 'last_step_seconds', history: 'step_seconds', scale: 1},
    {key: 'wait', title: 'Data wait', unit: '%', fixed: [0, 100], field: 'data_wait_share',
     history: 'data_wait_share', scale: 100},
    {key: 'alloc', title: 'PyTorch allocated', unit: 'GiB', field: 'allocated_bytes', history: 'allocated_bytes',
     scale: 1 / GiB},
  ];
  // drawnAt: the newest time drawn (the charts are redrawn once the data moves them by a pixel,
  // as the overview is); visible/dirty: off-screen charts wait to be drawn.
  const training = {t: [], cols: new Map(), keys: [], charts: [], drawnAt: null, visible: true, dirty: false};
  // A running rank's line: "rank N"; two running processes with one rank (two jobs on the
  // node) are told apart by pid.
  function rankKeys(live) {
    const base = live.map((r) => (isNum(r.rank) ? 'rank ' + r.rank : 'pid ' + r.pid));
    return base.map((k, i) => (base.indexOf(k) !== base.lastIndexOf(k) ? k + ' pid ' + live[i].pid : k));
  }

  function buildTrainingCharts() {
    for (const c of training.charts) c.u.destroy();
    training.charts = [];
    ui.trainingCharts.textContent = '';
    for (const def of TRAINING_CHARTS) {
      training.charts.push(lineChart(ui.trainingCharts, 'chart-training-' + def.key, def, training.keys,
                                     () => trainingData(def), {time: true}));
    }
    training.drawnAt = training.t.length ? training.t[training.t.length - 1] : null;
  }

  function trainingData(def) {
    return [training.t].concat(training.keys.map((k) => training.cols.get(k)[def.key]));
  }

  function applyTraining(tr) {
    const ranks = tr && tr.enabled !== false && Array.isArray(tr.ranks) ? tr.ranks : [];
    ui.training.hidden = ranks.length === 0;
    if (!ranks.length) return;
    const sorted = ranks.slice().sort((a, b) => (isNum(a.rank) ? a.rank : 1e9) - (isNum(b.rank) ? b.rank : 1e9) ||
                                      (a.pid || 0) - (b.pid || 0));
    // The table: every rank, the departed ones too (for 5 min, as the API keeps them).
    ui.trainingRows.textContent = '';
    for (const r of sorted) {
      const tr = el('tr');
      const cells = [
        isNum(r.rank) ? String(r.rank) : '–',
        isNum(r.gpu) ? String(r.gpu) : '–',
        r.connected === false ? 'gone' : 'running',
        isNum(r.steps) ? String(r.steps) : '–',
        isNum(r.steps_per_second) ? fmt(r.steps_per_second, 2) : '–',
        isNum(r.last_step_seconds) ? fmt(r.last_step_seconds * 1000, 0) + ' ms' : '–',
        isNum(r.data_wait_share) ? fmt(r.data_wait_share * 100, 0) + ' %' : '–',
        isNum(r.allocated_bytes) ? fmtBytes(r.allocated_bytes) : '–',
        isNum(r.reserved_bytes) ? fmtBytes(r.reserved_bytes) : '–',
      ];
      cells.forEach((c, i) => tr.append(el('td', i >= 3 ? 'num' : null, c)));
      ui.trainingRows.append(tr);
    }
    // The charts: the connected ranks, one point per poll.
    const live = sorted.filter((r) => r.connected !== false);
    const keys = rankKeys(live);
    // The server's clock (its newest reading's time), as the history's: the browser's may be
    // off. Never before the last point: uPlot needs x to grow.
    const last = training.t.length ? training.t[training.t.length - 1] : -Infinity;
    const t = Math.max(isNum(state.latestTime) ? state.latestTime : Date.now() / 1000, last + 1e-3);
    let rebuild = false;
    for (const k of keys) {
      if (!training.cols.has(k)) {
        const cols = {};
        for (const def of TRAINING_CHARTS) cols[def.key] = training.t.map(() => null);
        training.cols.set(k, cols);
        training.keys.push(k);
        rebuild = true;
      }
    }
    training.t.push(t);
    const byKey = new Map(live.map((r, i) => [keys[i], r]));
    for (const k of training.keys) {
      const r = byKey.get(k);
      for (const def of TRAINING_CHARTS) {
        const v = r ? r[def.field] : null;
        training.cols.get(k)[def.key].push(isNum(v) ? v * def.scale : null);
      }
    }
    if (trimTraining(t) || rebuild || !training.charts.length) {
      buildTrainingCharts();
      return;
    }
    redrawTraining(false);
  }

  function redrawTraining(force) {
    if (!training.charts.length || !training.t.length) return;
    if (!training.visible && !force) {
      training.dirty = true;
      return;
    }
    training.dirty = false;
    const last = training.t[training.t.length - 1];
    const width = Math.max(50, training.charts[0].u.width);
    const pixelS = Math.min(state.windowS, Math.max(MIN_SPAN_S, last - training.t[0])) / width;
    if (!force && isNum(training.drawnAt) && last - training.drawnAt < pixelS) return;
    training.drawnAt = last;
    for (const c of training.charts) c.u.setData(trainingData(c.def));
  }
  if (typeof IntersectionObserver === 'function') {
    new IntersectionObserver((entries) => {
      for (const e of entries) training.visible = e.isIntersecting;
      if (training.visible && training.dirty) redrawTraining(true);
    }, {rootMargin: '300px 0px'}).observe(ui.trainingCharts);
  }

  // Drops the points older than the window before `t`, and the lines of ranks gone for the
  // whole window (restarts would otherwise pile them up); true when a line went.
  function trimTraining(t) {
    let cut = 0;
    while (cut < training.t.length && training.t[cut] < t - state.windowS) cut++;
    if (cut) {
      training.t.splice(0, cut);
      for (const cols of training.cols.values()) for (const def of TRAINING_CHARTS) cols[def.key].splice(0, cut);
    }
    let dropped = false;
    for (const k of training.keys.slice()) {
      const cols = training.cols.get(k);
      if (TRAINING_CHARTS.every((def) => !cols[def.key].some(isNum))) {
        training.cols.delete(k);
        training.keys.splice(training.keys.indexOf(k), 1);
        dropped = true;
      }
    }
    return dropped;
  }

  // The window's history replaces the charts' points: every process of it as a line, on the
  // union of their times (a rank without a row at a time is undefined there, which uPlot draws
  // across, so a slower rank is a line, not dots). The live points of the next polls follow.
  function applyTrainingHistory(h) {
    const ranks = h && Array.isArray(h.ranks) ? h.ranks.filter((r) => r && Array.isArray(r.time)) : [];
    // A rank restarted within the window has an older process too: the newest one is "rank N",
    // as the live polls name the running one, and the older ones add their pid.
    const lastTime = (r) => (r.time.length ? r.time[r.time.length - 1] : -Infinity);
    const keys = ranks.map((r) => {
      const base = isNum(r.rank) ? 'rank ' + r.rank : 'pid ' + r.pid;
      const newer = ranks.some((o) => o !== r && o.rank === r.rank && isNum(r.rank) && lastTime(o) > lastTime(r));
      return newer ? base + ' pid ' + r.pid : base;
    });
    const tables = ranks.map((r) => {
      const values = r.values || {};
      return [r.time].concat(TRAINING_CHARTS.map((def) => {
        const col = Array.isArray(values[def.history]) ? values[def.history] : [];
        return r.time.map((_, i) => (isNum(col[i]) ? col[i] * def.scale : null));
      }));
    });
    const joined = tables.length ? uPlot.join(tables) : [[]];
    training.t = Array.from(joined[0]);
    training.cols = new Map();
    training.keys = [];
    keys.forEach((k, i) => {
      const cols = {};
      TRAINING_CHARTS.forEach((def, j) => { cols[def.key] = Array.from(joined[1 + i * TRAINING_CHARTS.length + j]); });
      training.cols.set(k, cols);
      training.keys.push(k);
    });
    if (training.t.length) trimTraining(training.t[training.t.length - 1]);
    if (training.keys.length) ui.training.hidden = false;
    buildTrainingCharts();
  }

  // The overview's and the training section's charts follow their grid's width.
  if (typeof ResizeObserver === 'function') {
    let queued = false;
    const ro = new ResizeObserver(() => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        fitWidths(overview.charts.concat(training.charts));
      });
    });
    ro.observe(ui.overviewCharts);
    ro.observe(ui.trainingCharts);
  }

  // One history column in the dashboard's unit: `col` itself when it has a row per time (`keep`
  // null), else the rows `keep` names; anything but a finite number is a gap (null).
  function historyColumn(col, keep, rows, scale) {
    const src = Array.isArray(col) ? col : [];
    const out = keep ? new Array(keep.length) : (src.length === rows ? src : new Array(rows));
    for (let j = 0; j < out.length; j++) {
      const v = src[keep ? keep[j] : j];
      out[j] = typeof v === 'number' && Number.isFinite(v) ? (scale === 1 ? v : v * scale) : null;
    }
    return out;
  }

  function applyHistory(h) {
    if (h && isNum(h.interval_s)) state.intervalS = Math.max(1, h.interval_s);
    const gpus = h && Array.isArray(h.gpus) ? h.gpus : [];
    for (const g of gpus) {
      const p = panelFor(g);
      if (!p) continue;
      const time = Array.isArray(g.time) ? g.time : [];
      const values = g.values || {};
      // 64 GPUs x 1 h is half a million values: the parsed arrays are ours, so they are kept
      // and scaled in place; only rows without a time (none from gpumon serve) cost a copy.
      let keep = null;
      if (!time.every(isNum)) {
        keep = [];
        for (let i = 0; i < time.length; i++) if (isNum(time[i])) keep.push(i);
      }
      p.t = keep ? keep.map((i) => time[i]) : time;
      for (const m of METRICS) p.cols[m] = historyColumn(values[m], keep, time.length, SCALE[m]);
      if (p.t.length) {
        const last = p.t[p.t.length - 1];
        if (!isNum(state.latestTime) || last > state.latestTime) state.latestTime = last;
      }
    }
    for (const p of state.gpus.values()) trim(p);
    // Drawn by the next ingestCurrent, which the same tick runs: one draw, not two.
    state.redrawAll = true;
  }

  function updateProcesses(p, procs) {
    const list = Array.isArray(procs) ? procs.slice() : [];
    list.sort((a, b) => (isNum(b.used_memory_bytes) ? b.used_memory_bytes : -1) -
                        (isNum(a.used_memory_bytes) ? a.used_memory_bytes : -1));
    const shown = list.slice(0, MAX_PROCESS_ROWS);
    const rows = shown.map((q) => [str(q.pid, '–'), str(q.name, '–'), str(q.user, '–'),
                                   fmtBytes(q.used_memory_bytes)]);
    const sig = JSON.stringify(rows) + list.length;
    if (sig === p.procSig) return;
    p.procSig = sig;
    while (p.procRows.length < rows.length) {
      const tr = el('tr');
      for (let i = 0; i < 4; i++) tr.append(el('td', i === 3 || i === 0 ? 'num' : null));
      p.procRows.push(tr);
      p.procBody.append(tr);
    }
    while (p.procRows.length > rows.length) p.procRows.pop().remove();
    rows.forEach((cells, r) => {
      const tds = p.procRows[r].children;
      cells.forEach((c, i) => setText(tds[i], c));
    });
    p.procNote.hidden = list.length > 0 && list.length <= MAX_PROCESS_ROWS;
    if (list.length > MAX_PROCESS_ROWS) {
      setText(p.procNote, '+' + (list.length - MAX_PROCESS_ROWS) + ' more processes');
    } else {
      setText(p.procNote, 'no compute processes');
    }
  }

  function updateReasons(p, reasons) {
    const list = Array.isArray(reasons) ? reasons.map((r) => str(r, '?')) : null;
    const sig = list === null ? 'null' : list.join('\n');
    if (sig === p.reasonSig) return;
    p.reasonSig = sig;
    const nodes = [];
    if (list === null) {
      nodes.push(el('span', 'muted', 'unknown'));
    } else if (list.length === 0) {
      nodes.push(el('span', 'muted', 'none'));
    } else {
      for (const r of list) {
        const bad = /thermal|power_brake|hw_slowdown/.test(r);
        const warn = /power_cap|sync_boost|applications|display/.test(r);
        nodes.push(el('span', 'badge reason' + (bad ? ' bad' : warn ? ' warn' : ''), r));
      }
    }
    p.reasons.replaceChildren(...nodes);
  }

  function updateStats(p, m) {
    const g = (k) => (m && isNum(m[k]) ? m[k] : null);
    setText(p.stats.util, g('utilization_gpu_pct') === null ? '–' : fmt(g('utilization_gpu_pct'), 0) + ' %');
    setText(p.stats.sm, g('sm_active_ratio') === null ? '–' : fmt(g('sm_active_ratio') * 100, 0) + ' %');
    setText(p.stats.mem, fmtBytes(g('memory_used_bytes')) + ' / ' + fmtBytes(g('memory_total_bytes')));
    const pw = g('power_draw_w'), pl = g('power_limit_w');
    setText(p.stats.power, (pw === null ? '–' : fmt(pw, 0)) + ' / ' + (pl === null ? '–' : fmt(pl, 0)) + ' W');
    const tg = g('temperature_gpu_c'), tm = g('temperature_memory_c');
    setText(p.stats.temp, (tg === null ? '–' : fmt(tg, 0) + ' °C') + (tm === null ? '' : ' (mem ' + fmt(tm, 0) + ' °C)'));
    setText(p.stats.clock, g('sm_clock_mhz') === null ? '–' : fmt(g('sm_clock_mhz'), 0) + ' MHz');
    setText(p.stats.pstate, g('pstate') === null ? '–' : 'P' + g('pstate'));
  }

  function updateFindings(cur) {
    if (!cur || !Array.isArray(cur.findings)) {
      ui.diag.hidden = true;
      return;
    }
    const items = [];
    for (const f of cur.findings) {
      const li = el('li', 'finding');
      if (f === null || typeof f !== 'object') {
        li.append(el('span', 'finding-text', str(f, '')));
      } else {
        const sev = str(f.severity || f.level, '');
        if (sev) li.append(el('span', 'badge sev sev-' + sev.replace(/[^a-z]/gi, '').toLowerCase(), sev));
        const gpus = Array.isArray(f.gpus) ? f.gpus.filter(isNum) : [];
        const gpu = isNum(f.gpu) ? 'GPU ' + f.gpu + ': '
          : gpus.length ? 'GPU ' + gpus.join(',') + ': ' : '';
        const text = str(f.title || f.summary || f.message || f.id || f.name, JSON.stringify(f));
        li.append(el('span', 'finding-text', gpu + text));
        const detail = f.detail || f.details || f.evidence || f.suggestion;
        if (detail && typeof detail === 'string') li.append(el('div', 'finding-detail', detail));
      }
      items.push(li);
    }
    if (items.length === 0) items.push(el('li', 'muted', 'No active diagnoses.'));
    ui.diagList.replaceChildren(...items);
    ui.diag.hidden = false;
  }

  // serve's live diagnoses (docs/DIAGNOSES.md, "Live"): the doctor JSON, every 5 s. An older
  // server without the route (or with --no-diagnose) leaves the area to /api/v1/current.
  function applyDiagnoses(d) {
    if (!d || typeof d !== 'object' || !Array.isArray(d.findings)) return;
    state.liveDiagnoses = true;
    updateFindings(d);
  }

  function ingestCurrent(cur) {
    if (!cur || typeof cur !== 'object') throw new Error('bad /api/v1/current reply');
    if (isNum(cur.interval_s)) state.intervalS = Math.max(1, cur.interval_s);
    const sim = cur.simulated;
    if (sim) {
      setText(ui.simText, typeof sim === 'string'
        ? 'SIMULATED GPUs: fake NVML scenario "' + sim + '". These values do not come from real hardware.'
        : 'SIMULATED GPUs: these values do not come from real hardware.');
      ui.sim.hidden = false;
    } else {
      ui.sim.hidden = true;
    }
    if (!state.liveDiagnoses) updateFindings(cur);

    const t = cur.time;
    const touched = [];
    for (const g of Array.isArray(cur.gpus) ? cur.gpus : []) {
      const p = panelFor(g);
      if (!p) continue;
      const lost = g.lost === true;
      if (lost !== p.lost) {
        p.lost = lost;
        p.lostBadge.hidden = !lost;
        p.root.classList.toggle('is-lost', lost);
      }
      if (g.name !== undefined && !p.titleName.textContent) setText(p.titleName, str(g.name, ''));
      const m = g.metrics || {};
      updateStats(p, m);
      updateReasons(p, g.clock_event_reasons);
      updateProcesses(p, g.processes);
      if (isNum(t) && (p.t.length === 0 || t > p.t[p.t.length - 1])) {
        p.t.push(t);
        for (const k of METRICS) p.cols[k].push(scaled(k, m[k]));
        touched.push(p);
        if (!isNum(state.latestTime) || t > state.latestTime) state.latestTime = t;
      }
    }
    for (const p of touched) trim(p);
    if (state.redrawAll) {
      state.redrawAll = false;
      for (const p of state.gpus.values()) redraw(p);
      redrawOverview(true);
    } else {
      for (const p of touched) redraw(p);
      if (touched.length) redrawOverview();
    }

    const s = cur.sampler || {};
    const age = isNum(s.last_tick_age_s) ? s.last_tick_age_s : null;
    const stale = age !== null && age > 3 * state.intervalS + 5;
    setText(ui.status, (stale ? 'sampler stalled: last sample ' + fmt(age, 0) + ' s ago' : 'live') +
            ' · every ' + fmt(state.intervalS, state.intervalS % 1 ? 1 : 0) + ' s' +
            (isNum(t) ? ' · ' + new Date(t * 1000).toLocaleTimeString() : ''));
    ui.status.classList.toggle('stale', stale);
    state.ticks++;
  }

  // ---------- loop ----------
  function schedule(ms) {
    clearTimeout(state.timer);
    state.timer = setTimeout(step, ms);
  }
  // Every script of the page has run (uPlot is the one after this).
  const scriptsLoaded = new Promise((resolve) => {
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', resolve, {once: true});
    else resolve();
  });

  function kick() {
    if (state.running) return; // the running step sees needHistory
    schedule(0);
  }

  // Resolves once the next frame was painted (a task after its requestAnimationFrame).
  function afterPaint() {
    return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
  }

  async function step() {
    state.timer = null;
    if (document.hidden) return; // resumed by visibilitychange
    state.running = true;
    let delayMs;
    let wantTrainingHistory = false;
    try {
      const phase = (name) => { if (state.firstRenderMs === null) state.phases[name] = performance.now(); };
      // The requests go out at once (the server renders the history while the page lays out
      // the devices) and are applied in order: devices, history, current. Each promise is
      // marked handled now, so one that fails while an earlier one is awaited is not an
      // "uncaught" error; its await below still throws.
      const request = (path) => { const p = getJSON(path); p.catch(() => {}); return p; };
      const devicesReq = state.devicesLoaded ? null : request('devices');
      // Two samples per pixel of the widest chart: the server gives each run of rows its
      // lowest and highest reading, so more would draw nothing more.
      const historyReq = state.needHistory
        ? request('history?seconds=' + state.windowS + '&metrics=' + METRICS.join(',') +
                  '&points=' + 2 * chartWidthPx()) : null;
      // The training charts' history goes with the GPUs' (and once more after a tick whose
      // current readings failed), asked for once their frame is painted (below).
      wantTrainingHistory = state.needHistory || state.needTrainingHistory;
      state.needHistory = state.needTrainingHistory = false;
      const currentReq = request('current');
      await scriptsLoaded; // uPlot, the next script
      if (devicesReq) {
        try {
          applyDevices(await devicesReq);
        } catch (e) {
          if (historyReq) state.needHistory = true;
          throw e;
        }
        state.devicesLoaded = true;
        // The overview's charts are made now, empty, while the history is on its way.
        redrawOverview(true);
        phase('devices');
      }
      if (historyReq) {
        try {
          const h = await historyReq;
          phase('history_fetched');
          applyHistory(h);
          phase('history_applied');
        } catch (e) {
          state.needHistory = true;
          throw e;
        }
      }
      const cur = await currentReq;
      phase('current_fetched');
      const t0 = performance.now();
      ingestCurrent(cur);
      phase('current_applied');
      if (t0 >= state.diagnosesNextMs) {
        state.diagnosesNextMs = t0 + 5000;
        getJSON('diagnoses').then(applyDiagnoses, () => {}); // not awaited: never holds a tick
      }
      // An exporter without an agent socket answers {"enabled":false}; an older one 404: hidden.
      // The window's history first, when asked for: the live point then follows it.
      // The training history once the GPU charts' frame is painted: the section is below them,
      // and fetching, parsing and drawing the hour of 64 ranks would hold up their first paint.
      // A failed one is asked for with the next GPU history (a reconnection, a window change).
      const trainingHistoryPath = wantTrainingHistory
        ? 'training/history?seconds=' + state.windowS + '&points=' + 2 * chartWidthPx() : null;
      afterPaint()
        .then(() => (trainingHistoryPath ? getJSON(trainingHistoryPath).then(applyTrainingHistory, () => {}) : null))
        .then(() => getJSON('training')).then(applyTraining, () => { ui.training.hidden = true; });
      // uPlot draws in a microtask after setData: a task later, the whole tick is done.
      setTimeout(() => { state.lastTickMs = performance.now() - t0; }, 0);
      if (state.failures) state.failures = 0;
      showConnected();
      if (state.firstRenderMs === null) {
        requestAnimationFrame(() => {
          state.firstRenderMs = performance.now();
          document.body.dataset.state = 'live';
        });
      }
      delayMs = state.intervalS * 1000;
    } catch (e) {
      // A history applied before the current readings failed is drawn now, not left blank
      // until the next good tick.
      if (state.redrawAll) {
        state.redrawAll = false;
        for (const p of state.gpus.values()) redraw(p);
        redrawOverview(true);
      }
      if (wantTrainingHistory) state.needTrainingHistory = true;
      state.failures++;
      const delayS = Math.min(MAX_BACKOFF_S, Math.max(1, state.intervalS) * Math.pow(2, state.failures - 1));
      showConnectionLost(e, delayS);
      delayMs = delayS * 1000;
      if (state.failures > 1) state.needHistory = true; // refill what was missed while offline
    } finally {
      state.running = false;
    }
    if (document.hidden) return; // resumed by visibilitychange
    // A window change during this step asks for its history at once.
    schedule(state.needHistory && state.failures === 0 ? 0 : delayMs);
  }

  document.addEventListener('visibilitychange', () => {
    if (document.hidden) {
      clearTimeout(state.timer);
      state.timer = null;
      state.hiddenSince = performance.now();
    } else {
      const away = state.hiddenSince === null ? 0 : (performance.now() - state.hiddenSince) / 1000;
      state.hiddenSince = null;
      if (away > 2 * state.intervalS) state.needHistory = true;
      if (!state.running) schedule(0);
    }
  });

  // Read-only hooks for tests (web/test/) and debugging from the console.
  window.gpumonDashboard = Object.freeze({
    firstRenderMs: () => state.firstRenderMs,
    phases: () => Object.assign({}, state.phases),
    ticks: () => state.ticks,
    running: () => state.running, // a poll is in progress (it may still count a tick)
    lastTickMs: () => state.lastTickMs,
    failures: () => state.failures,
    windowS: () => state.windowS,
    shownSpanS: () => shownSpanS(),
    training: () => ({
      shown: !ui.training.hidden,
      rows: Array.from(ui.trainingRows.children).map((tr) => Array.from(tr.children).map((td) => td.textContent)),
      charts: training.charts.map((c) => ({key: c.def.key, lines: c.u.series.slice(1).map((x) => x.label),
                                           points: c.u.data[0].length})),
    }),
    // The overview as last drawn: per chart its metric, the GPUs of its lines and their points.
    overview: () => ({
      shown: !ui.overview.hidden,
      charts: overview.charts.map((c) => ({
        key: c.def.key,
        metric: c.def.metric,
        gpus: c.u.series.slice(1).map((s) => s.label),
        points: c.u.data[0].length,
        width: c.u.width,
        lastTime: c.u.data[0].length ? c.u.data[0][c.u.data[0].length - 1] : null,
        values: c.u.data.slice(1).map((col) => col.filter(isNum).length),
        legend: c.u.legend ? c.u.root.querySelector('.u-legend') !== null : false,
      })),
    }),
    snapshot: () => Array.from(state.gpus.values()).map((p) => ({
      gpu: p.gpu,
      points: p.t.length,
      firstTime: p.t.length ? p.t[0] : null,
      lastTime: p.t.length ? p.t[p.t.length - 1] : null,
      lost: p.lost,
      charts: p.charts.length,
      xSpan: p.charts.length ? p.charts[0].u.scales.x.max - p.charts[0].u.scales.x.min : null, // as last drawn
      stats: Object.values(p.stats).map((n) => n.textContent).join(' | '),
      nullUtil: p.cols.utilization_gpu_pct.filter((v) => v === null).length,
      throttledSamples: p.cols[THROTTLED].filter((v) => v === 1).length,
      zeroUtil: p.cols.utilization_gpu_pct.filter((v) => v === 0).length,
      // As last drawn, per chart: the y axis' top, tick labels and highest value shown, and per
      // series whether it is shown and how many gaps its line has.
      drawn: p.visible && !p.dirty && p.charts.length > 0, // off-screen panels wait to be drawn
      charts_drawn: p.charts.map((c) => ({
        key: c.def.key,
        throttledStretches: c.stat.stretches,
        yMax: c.u.scales.y.max,
        ticks: c.u.axes[1]._values ? c.u.axes[1]._values.slice() : [],
        dataMax: c.def.series.reduce((m, s) => p.cols[s.metric].reduce(
          (a, v) => (isNum(v) && (a === null || v > a) ? v : a), m), null),
        series: c.def.series.map((s, i) => ({
          metric: s.metric,
          shown: c.u.series[i + 1].show,
          values: p.cols[s.metric].filter(isNum).length,
          gaps: c.u.series[i + 1]._paths && c.u.series[i + 1]._paths.gaps ? c.u.series[i + 1]._paths.gaps.length : 0,
        })),
      })),
    })),
  });

  step();
})();
