// SPDX-License-Identifier: MIT
// gpumon run report: draws the charts with uPlot from the page's JSON blob (#report-data,
// written by src/report/report_json.cc): per GPU, per rank (step time, data wait, allocator
// memory of a rank mapped to no GPU) and, with a baseline, both runs overlaid on the time since
// each run's first sample. The x axis switches between time and steps (#axis-toggle): on the
// step axis every point sits at the step in progress in the middle of its interval, taken from
// the rank that drives that GPU (else rank 0, else the process with the most steps; each
// chart's title says whose). Everything else on the page is static HTML. Exposes
// window.gpumonReport for the Chromium test. The OOM guard's and the adaptive loader's actions
// are marked on the charts of their rank and its GPU (teal, dashed), and a rank that acted has
// a chart of its micro-batch size and DataLoader workers over time, as steps.
(() => {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const charts = [];  // this run's, zoomed together
  const baseCharts = [];  // the comparison's, zoomed together
  const state = { charts: 0, baseCharts: 0, error: null, done: false, axis: 'time' };
  window.gpumonReport = {
    state: () => state, charts: () => charts.length,
    setAxis: (mode) => { build(mode); return state; },
    // Per chart, the marker labels drawn: [{x, y, w, h, text}] in canvas pixels.
    labels: () => charts.map((c) => c.gpumonLabels || []),
    // Per chart on the time axis, the x axis's tick labels: [{text, x, w}] (CSS pixels).
    ticks: () => charts.map((c) => c.gpumonTicks || []),
  };
  if (typeof uPlot === 'undefined' || !data.n) {
    state.done = true;
    return;
  }
  document.body.classList.add('js');

  const centres = (run) => {
    const t = new Array(run.n);
    for (let i = 0; i < run.n; i++) t[i] = (run.start + i * run.width + run.width / 2) / 1000;
    return t;
  };
  const t = centres(data);  // seconds (uPlot's time unit)
  const nulls = new Array(data.n).fill(null);

  const COLOURS = { util: '#1f77b4', sm: '#9467bd', mem: '#2ca02c', power: '#d62728',
                    temp: '#ff7f0e', smclk: '#17becf', memclk: '#8c564b', total: '#888',
                    time: '#1f77b4', wait: '#e377c2', alloc: '#bcbd22', reserved: '#9467bd',
                    micro: '#178c78', workers: '#e8890c' };
  const CHARTS = [
    { key: 'util', title: 'Utilization and SM activity (%)', series: ['util', 'sm'], range: [0, 100] },
    { key: 'mem', title: 'Memory used (GiB)', series: ['mem'], total: true, allocator: true },
    { key: 'power', title: 'Power (W)', series: ['power'] },
    { key: 'temp', title: 'Temperature (\u00b0C)', series: ['temp'] },
    { key: 'clocks', title: 'Clocks (MHz)', series: ['smclk', 'memclk'] },
  ];
  const LABELS = { util: 'GPU util', sm: 'SM active', mem: 'used', power: 'power', temp: 'GPU temp',
                   smclk: 'SM clock', memclk: 'memory clock', time: 'step time', wait: 'data wait',
                   alloc: 'allocated', reserved: 'reserved' };
  const EVENT_COLOUR = 'rgba(214,39,40,0.9)', ACTION_COLOUR = 'rgba(23,140,120,0.95)';
  const FINDING = { critical: 'rgba(214,39,40,0.16)', warning: 'rgba(148,103,189,0.16)',
                    info: 'rgba(31,119,180,0.10)' };

  const fade = (hex, a) => hex + Math.round(a * 255).toString(16).padStart(2, '0');
  const utc = (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC');
  // Times as the page's tables write them (record::format_iso_ms): ISO 8601 in UTC, the zone
  // named by its Z. The legend shows the full time; axis ticks the time of day (with
  // milliseconds when ticks are closer than a second), and the date under the first tick and
  // under each tick on a new day.
  const isoUtc = (s) => new Date(Math.round(s * 1000)).toISOString();
  const timeTicks = (u, splits, axisIdx, space, incr) => {
    let day = null;
    const labels = splits.map((s) => {
      const iso = isoUtc(s);
      const time = iso.slice(11, incr < 1 ? 23 : 19) + 'Z';
      const date = iso.slice(0, 10);
      const label = date === day ? time : time + '\n' + date;
      day = date;
      return label;
    });
    // Where each label sits (centred on its tick, CSS pixels), for the tests.
    u.ctx.save();
    u.ctx.font = TICK_FONT;
    u.gpumonTicks = labels.map((text, i) => ({
      text, x: u.valToPos(splits[i], 'x'),
      w: Math.max(...text.split('\n').map((line) => u.ctx.measureText(line).width)) / (devicePixelRatio || 1),
    }));
    u.ctx.restore();
    return labels;
  };
  // uPlot's axis font; ticks at least as far apart as the widest label ("04:26:39.250Z") needs.
  const TICK_FONT = Math.round(12 * (devicePixelRatio || 1)) + 'px system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif';
  const TIME_AXIS = { values: timeTicks, space: 110, label: 'time (UTC, ISO 8601)', labelSize: 18, size: 48 };
  const TIME_LEGEND = { label: 'time (UTC)', value: (u, v) => (v === null || v === undefined ? '--' : isoUtc(v)) };

  // Empty stretches shorter than `gapMs` are the metric's own sampling rate, not missing data:
  // they become undefined, which uPlot spans; longer ones stay null (a gap in the line).
  function spanShort(values, gapMs, width) {
    const limit = Math.max(1, Math.floor(gapMs / width));
    const out = values.slice();
    for (let i = 0; i < out.length; i++) {
      if (out[i] !== null) continue;
      let j = i;
      while (j < out.length && out[j] === null) j++;
      if (i > 0 && j < out.length && j - i < limit) for (let k = i; k < j; k++) out[k] = undefined;
      i = j;
    }
    return out;
  }

  // The x of a time (s) on a chart: the time itself, or on the step axis the step position of
  // the nearest interval that has one.
  function xOfTime(axis, ts) {
    if (!axis) return ts;
    let i = Math.min(data.n - 1, Math.max(0, Math.floor((ts * 1000 - data.start) / data.width)));
    for (let d = 0; d < data.n; d++) {
      if (i + d < data.n && axis[i + d] !== null) return axis[i + d];
      if (i - d >= 0 && axis[i - d] !== null) return axis[i - d];
    }
    return null;
  }

  // Labels at x positions (canvas pixels) laid out so that none overlaps another: labels at
  // the same place (within MERGE_PX: an XID and the loss it caused) become one ("XID 79 ·
  // GPU lost"), the others go to the first row where they fit, stacked from `y0` by `step` (up
  // or down) within `rows` rows; a label that fits in none is left out (its line stays, and
  // the Events table lists it). Returns the boxes drawn (canvas pixels), for the tests.
  const MERGE_PX = 4, LABEL_GAP_PX = 6;
  function placeLabels(ctx, items, y0, step, rows, right) {
    const sorted = items.filter((it) => it.x !== null).sort((a, b) => a.x - b.x);
    const merged = [];
    for (const it of sorted) {
      const last = merged[merged.length - 1];
      if (last && it.x - last.x <= MERGE_PX) {
        if (!last.texts.includes(it.text)) last.texts.push(it.text);
      } else {
        merged.push({ x: it.x, texts: [it.text], colour: it.colour });
      }
    }
    const ends = [];  // per row, the right edge of its last label
    const boxes = [];
    const h = Math.abs(step);
    for (const m of merged) {
      const text = m.texts.join(' \u00b7 ');
      const w = ctx.measureText(text).width;
      const left = Math.min(m.x + 3, right - w);
      let row = 0;
      while (row < rows && ends[row] !== undefined && left < ends[row] + LABEL_GAP_PX) row++;
      if (row === rows) continue;
      ends[row] = left + w;
      const y = y0 + row * step;
      if (m.colour) ctx.fillStyle = m.colour;
      ctx.fillText(text, left, y);
      boxes.push({ x: left, y: y - h + 2, w, h: h - 2, text });
    }
    return boxes;
  }

  // Shaded stretches (throttled orange, lost red, findings by severity, titled along the
  // bottom) and labelled lines (XID, lost, labels along the top), under the data.
  function markers(owner, axis) {
    return (u) => {
      const { ctx } = u;
      const { left, top, width, height } = u.bbox;
      const x = (s) => { const v = xOfTime(axis, s); return v === null ? null : u.valToPos(v, 'x', true); };
      const shade = (list, colour) => {
        ctx.fillStyle = colour;
        for (const [a, b] of list) {
          const x0 = x(a), x1 = x(b);
          if (x0 !== null && x1 !== null) ctx.fillRect(x0, top, Math.max(2, x1 - x0), height);
        }
      };
      const px = devicePixelRatio || 1;
      const step = Math.round(12 * px);
      const rows = Math.max(1, Math.floor(height / 2 / step));  // each kind keeps to its half
      ctx.save();
      shade(owner.throttled || [], 'rgba(232,137,12,0.18)');
      shade(owner.lost || [], 'rgba(214,39,40,0.22)');
      ctx.font = Math.round(11 * px) + 'px system-ui, sans-serif';
      const findings = (owner.findings || []);
      for (const f of findings) shade([[f.start, f.end]], FINDING[f.severity] || FINDING.info);
      ctx.fillStyle = 'rgba(80,50,120,0.95)';
      const boxes = placeLabels(ctx, findings.map((f) => ({ x: x(f.start), text: f.title })),
                                top + height - 4 * px, -step, rows, left + width);
      ctx.strokeStyle = 'rgba(214,39,40,0.9)';
      ctx.fillStyle = 'rgba(214,39,40,0.9)';
      ctx.lineWidth = 1.5 * px;
      const events = (owner.events || []).map(([at, label]) => ({ x: x(at), text: label, colour: EVENT_COLOUR }));
      for (const e of events) {
        if (e.x === null) continue;
        ctx.beginPath();
        ctx.moveTo(e.x, top);
        ctx.lineTo(e.x, top + height);
        ctx.stroke();
      }
      // The guard's and the loader's actions: dashed, in their own colour; their labels share
      // the top rows with the events' so that none overlaps another.
      const actions = (owner.actions || []).map(([at, label]) => ({ x: x(at), text: label, colour: ACTION_COLOUR }));
      ctx.strokeStyle = ACTION_COLOUR;
      ctx.setLineDash([4 * px, 3 * px]);
      for (const a of actions) {
        if (a.x === null) continue;
        ctx.beginPath();
        ctx.moveTo(a.x, top);
        ctx.lineTo(a.x, top + height);
        ctx.stroke();
      }
      ctx.setLineDash([]);
      events.push(...actions);
      u.gpumonLabels = boxes.concat(placeLabels(ctx, events, top + 11 * px, step, rows, left + width));
      ctx.restore();
    };
  }

  const selectZoom = (list) => (u) => {
    if (u.select.width < 2) return;
    const min = u.posToVal(u.select.left, 'x');
    const max = u.posToVal(u.select.left + u.select.width, 'x');
    u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
    for (const c of list) c.setScale('x', { min, max });
  };

  // One chart. `lines`: [{ label, colour, s (a series of the JSON: mean/min/max), band, dash }];
  // x: the x value per interval (null: not drawn); time: whether x is UTC time.
  function chart(box, title, lines, x, opts) {
    const keep = [];
    for (let i = 0; i < x.length; i++) if (x[i] !== null) keep.push(i);
    const pick = (col) => keep.map((i) => col[i]);
    const columns = [pick(x)];
    const series = [opts.time ? TIME_LEGEND : {}];
    const bands = [];
    for (const l of lines) {
      const at = columns.length;
      const s = l.s;
      const prep = (col) => pick(s ? spanShort(col, s.gapMs, opts.width) : nulls);
      columns.push(prep(s ? s.mean : nulls));
      series.push({ label: l.label, stroke: l.colour, width: 1.5, dash: l.dash,
                    paths: l.stepped && uPlot.paths.stepped ? uPlot.paths.stepped({ align: 1 }) : undefined });
      if (l.band !== false && s) {
        columns.push(prep(s.min), prep(s.max));
        series.push({ label: l.label + ' min', stroke: fade(l.colour, 0.25), width: 0.5 },
                    { label: l.label + ' max', stroke: fade(l.colour, 0.25), width: 0.5 });
        bands.push({ series: [at + 2, at + 1], fill: fade(l.colour, 0.15) });
      }
    }
    if (opts.constant !== undefined) {
      columns.push(columns[0].map(() => opts.constant));
      series.push({ label: 'total', stroke: COLOURS.total, dash: [4, 4], width: 1 });
    }
    const wrap = document.createElement('div');
    wrap.className = 'chart chart-' + opts.key;
    const head = document.createElement('div');
    head.className = 'chart-title';
    head.textContent = title;
    if (opts.note) {
      const note = document.createElement('span');
      note.className = 'axis-note';
      note.textContent = ' \u00b7 ' + opts.note;
      head.append(note);
    }
    wrap.append(head);
    box.append(wrap);
    const yRange = (u, lo, hi) => {
      if (opts.range) return opts.range;
      if (lo === null || hi === null) return [0, 1];
      const pad = Math.max((hi - lo) * 0.08, Math.abs(hi) * 0.02, opts.minPad === undefined ? 0.5 : opts.minPad);
      return [Math.max(0, lo - pad), hi + pad];
    };
    const list = opts.list;
    const u = new uPlot({
      width: Math.floor(chartWidth(box)), height: 190, tzDate: utc, series, bands,
      scales: { x: { time: opts.time }, y: { range: yRange } },
      axes: [opts.time ? TIME_AXIS : { label: opts.xLabel, labelSize: 18, size: 36 }, { size: 56 }],
      legend: { live: true },
      cursor: { sync: { key: opts.sync }, drag: { x: true, y: false, setScale: false } },
      hooks: { drawClear: [markers(opts.owner || {}, opts.axis)], setSelect: [selectZoom(list)] },
    }, columns, wrap);
    list.push(u);
    return u;
  }

  const chartWidth = (box) => Math.max(360, Math.min(1240, box.clientWidth >= 1230 ? (box.clientWidth - 16) / 2 : box.clientWidth));
  // Findings with a time range (the others have no place on a chart).
  const findingsFor = (pick) => (data.findings || []).filter((f) => f.start !== null && pick(f));
  // A finding names its GPUs; one that names only ranks goes on the GPUs they drive; one that
  // names neither is about the whole run.
  const onGpu = (f, gpu) => (f.gpus.length ? f.gpus.includes(gpu.gpu)
    : !f.ranks.length || gpu.ranks.some((ri) => f.ranks.includes(data.ranks[ri].rank)));
  const rankFindings = (r) => findingsFor((f) => !f.ranks.length || f.ranks.includes(r.rank));

  function rankCharts(box, mode) {
    for (const r of data.ranks) {
      const x = mode === 'step' ? r.x : t;
      const common = { list: charts, sync: 'gpumon-report', time: mode === 'time', xLabel: 'step', minPad: 0.001,
                       width: data.width, owner: { findings: rankFindings(r), actions: r.actions },
                       axis: mode === 'step' ? r.x : null };
      chart(box, 'Step time and data wait (s): ' + r.label,
            [{ label: LABELS.time, colour: COLOURS.time, s: r.time },
             { label: LABELS.wait, colour: COLOURS.wait, s: r.wait }],
            x, Object.assign({ key: 'steps' }, common));
      if (r.micro || r.workers) {
        const lines = [];
        if (r.micro) lines.push({ label: 'micro-batch size', colour: COLOURS.micro, s: { gapMs: 0, mean: r.micro }, band: false, stepped: true });
        if (r.workers) lines.push({ label: 'DataLoader workers', colour: COLOURS.workers, s: { gapMs: 0, mean: r.workers }, band: false, stepped: true });
        chart(box, 'Micro-batch size and DataLoader workers (set by the OOM guard and the adaptive loader): ' + r.label,
              lines, x, Object.assign({ key: 'actions' }, common));
      }
      if (r.host) {
        chart(box, 'Host memory (GiB, PSS with its workers): ' + r.label,
              [{ label: 'host memory', colour: COLOURS.reserved, s: r.host }],
              x, Object.assign({ key: 'host' }, common));
      }
      if (r.gpu === null && (r.alloc || r.reserved)) {
        chart(box, 'Allocator memory (GiB), on no GPU chart: ' + r.label,
              [{ label: LABELS.alloc, colour: COLOURS.alloc, s: r.alloc },
               { label: LABELS.reserved, colour: COLOURS.reserved, s: r.reserved }],
              x, Object.assign({ key: 'allocator', note: 'GPU unknown: ' + r.map }, common));
      }
    }
  }

  function gpuCharts(gpu, box, mode) {
    const axisRank = gpu.axis ? data.ranks[gpu.axis.rank] : null;
    const stepAxis = mode === 'step' && axisRank;
    const note = !stepAxis ? null : gpu.axis.drives
      ? 'step axis: ' + axisRank.label + ', which drives this GPU'
      : 'step axis: ' + axisRank.label + ' (no process is known to drive this GPU)';
    const owner = { throttled: gpu.throttled, lost: gpu.lost, events: gpu.events, actions: gpu.actions,
                    findings: findingsFor((f) => onGpu(f, gpu)) };
    for (const def of CHARTS) {
      const lines = def.series.map((key) => ({ label: LABELS[key], colour: COLOURS[key], s: gpu.series[key] }));
      if (def.allocator) {
        for (const ri of gpu.ranks) {
          const r = data.ranks[ri];
          const who = gpu.ranks.length > 1 ? ' ' + r.label : '';
          if (r.alloc) lines.push({ label: LABELS.alloc + who, colour: COLOURS.alloc, s: r.alloc, band: false });
          if (r.reserved) lines.push({ label: LABELS.reserved + who, colour: COLOURS.reserved, s: r.reserved, band: false, dash: [6, 3] });
        }
      }
      chart(box, def.title, lines, stepAxis ? axisRank.x : t, {
        key: def.key, list: charts, sync: 'gpumon-report', time: !stepAxis, xLabel: 'step',
        width: data.width, range: def.range, note, owner, axis: stepAxis ? axisRank.x : null,
        constant: def.total && gpu.memTotalGiB !== null ? gpu.memTotalGiB : undefined,
      });
    }
  }

  // Both runs on seconds since each one's first sample: this run in colour, the baseline grey.
  function baselineCharts(box) {
    const base = data.baseline;
    const rel = (run) => centres(run).map((s) => s - run.start / 1000);
    const ours = rel(data), theirs = rel(base);
    const joined = (a, b) => uPlot.join([[ours, a.gapMs ? spanShort(a.mean, a.gapMs, data.width) : a.mean],
                                         [theirs, b.gapMs ? spanShort(b.mean, b.gapMs, base.width) : b.mean]]);
    const overlay = (title, key, a, b, colour) => {
      const empty = { mean: [] };
      const d = joined(a || { mean: nulls }, b || { mean: new Array(base.n).fill(null) }) || empty;
      const wrap = document.createElement('div');
      wrap.className = 'chart chart-baseline-' + key;
      const head = document.createElement('div');
      head.className = 'chart-title';
      head.textContent = title;
      wrap.append(head);
      box.append(wrap);
      baseCharts.push(new uPlot({
        width: Math.floor(chartWidth(box)), height: 170,
        series: [{ label: 's from start' }, { label: 'this run', stroke: colour, width: 1.5 },
                 { label: 'baseline', stroke: '#555', width: 1.2, dash: [5, 3] }],
        scales: { x: { time: false } }, axes: [{ label: 'seconds since the run started', labelSize: 18, size: 36 }, { size: 56 }],
        cursor: { sync: { key: 'gpumon-baseline' }, drag: { x: true, y: false, setScale: false } },
        hooks: { setSelect: [selectZoom(baseCharts)] },
      }, d, wrap));
    };
    const ids = [...new Set([...data.gpus, ...base.gpus].map((g) => g.gpu))].sort((a, b) => a - b);
    for (const id of ids) {
      const a = data.gpus.find((g) => g.gpu === id), b = base.gpus.find((g) => g.gpu === id);
      for (const def of CHARTS) {
        for (const key of def.series.slice(0, 1)) {
          overlay('GPU ' + id + ': ' + def.title.replace(/ and SM activity/, ''), key,
                  a && a.series[key], b && b.series[key], COLOURS[key]);
        }
      }
    }
    const lead = (run) => (run.ranks.length ? run.ranks[0] : null);
    const ra = lead(data), rb = lead(base);
    if (ra || rb) {
      overlay('Step time (s), ' + (ra ? ra.label : '-') + ' vs ' + (rb ? rb.label : '-'), 'time',
              ra && ra.time, rb && rb.time, COLOURS.time);
      overlay('Data wait per step (s)', 'wait', ra && ra.wait, rb && rb.wait, COLOURS.wait);
    }
  }

  function clear(list) {
    for (const c of list) c.destroy();
    list.length = 0;
    for (const el of document.querySelectorAll('.charts .chart:not([class*="chart-baseline"])')) el.remove();
  }

  function build(mode) {
    if (mode === 'step' && !data.ranks.length) mode = 'time';
    clear(charts);
    const stepBox = document.querySelector('#steps .charts');
    if (stepBox && data.ranks.length) rankCharts(stepBox, mode);
    for (const gpu of data.gpus) {
      if (!gpu.samples) continue;
      const box = document.querySelector('.gpu[data-gpu="' + gpu.gpu + '"] .charts');
      if (box) gpuCharts(gpu, box, mode);
    }
    state.axis = mode;
    state.charts = charts.length;
    const toggle = document.getElementById('axis-toggle');
    if (toggle) {
      toggle.setAttribute('aria-pressed', String(mode === 'step'));
      toggle.textContent = mode === 'step' ? 'show time' : 'show steps';
      document.getElementById('axis-name').textContent = mode === 'step' ? 'step number' : 'time (UTC)';
    }
  }

  try {
    build('time');
    const baseBox = document.querySelector('#baseline .charts');
    if (data.baseline && data.baseline.n && baseBox) baselineCharts(baseBox);
    state.baseCharts = baseCharts.length;
    const reset = document.getElementById('reset-zoom');
    if (reset) {
      reset.addEventListener('click', () => {
        for (const c of charts.concat(baseCharts)) {
          const xs = c.data[0];
          if (xs.length) c.setScale('x', { min: xs[0], max: xs[xs.length - 1] });
        }
      });
    }
    const toggle = document.getElementById('axis-toggle');
    if (toggle) toggle.addEventListener('click', () => build(state.axis === 'step' ? 'time' : 'step'));
  } catch (e) {
    state.error = String(e);
    throw e;
  }
  state.done = true;
})();
