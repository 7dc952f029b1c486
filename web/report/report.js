// SPDX-License-Identifier: MIT
// gpumon run report: draws each GPU's charts with uPlot from the page's JSON blob
// (#report-data, written by src/report/report_json.cc). Everything else on the page is
// static HTML. Exposes window.gpumonReport for the Chromium test.
(() => {
  'use strict';
  const data = JSON.parse(document.getElementById('report-data').textContent);
  const charts = [];
  const state = { charts: 0, error: null, done: false };
  window.gpumonReport = { state: () => state, charts: () => charts.length };
  if (typeof uPlot === 'undefined' || !data.n) {
    state.done = true;
    return;
  }
  document.body.classList.add('js');

  // x values: the middle of each bucket, in seconds (uPlot's time unit).
  const t = new Array(data.n);
  for (let i = 0; i < data.n; i++) t[i] = (data.start + i * data.width + data.width / 2) / 1000;
  const nulls = new Array(data.n).fill(null);

  const COLOURS = { util: '#1f77b4', sm: '#9467bd', mem: '#2ca02c', power: '#d62728',
                    temp: '#ff7f0e', smclk: '#17becf', memclk: '#8c564b', total: '#888',
                    steptime: '#1f77b4', wait: '#e377c2' };
  const CHARTS = [
    { key: 'util', title: 'Utilization and SM activity (%)', series: ['util', 'sm'], range: [0, 100] },
    { key: 'mem', title: 'Memory used (GiB)', series: ['mem'], total: true },
    { key: 'power', title: 'Power (W)', series: ['power'] },
    { key: 'temp', title: 'Temperature (C)', series: ['temp'] },
    { key: 'clocks', title: 'Clocks (MHz)', series: ['smclk', 'memclk'] },
  ];
  const STEP_CHARTS = [
    { key: 'steptime', title: 'Step time (s)', series: ['steptime'] },
    { key: 'wait', title: 'Data wait per step (s)', series: ['wait'] },
  ];
  const LABELS = { util: 'GPU util', sm: 'SM active', mem: 'used', power: 'power', temp: 'GPU temp',
                   smclk: 'SM clock', memclk: 'memory clock', steptime: 'step time', wait: 'data wait' };

  const fade = (hex, a) => hex + Math.round(a * 255).toString(16).padStart(2, '0');
  const utc = (ts) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC');

  // Throttled (orange) and lost (red) stretches and event lines, under the data.
  function markers(gpu) {
    return (u) => {
      const { ctx } = u;
      const { top, height } = u.bbox;
      const x = (s) => u.valToPos(s, 'x', true);
      ctx.save();
      for (const [list, colour] of [[gpu.throttled, 'rgba(232,137,12,0.18)'], [gpu.lost, 'rgba(214,39,40,0.22)']]) {
        ctx.fillStyle = colour;
        for (const [a, b] of list) {
          const x0 = x(a);
          ctx.fillRect(x0, top, Math.max(2, x(b) - x0), height);
        }
      }
      ctx.strokeStyle = 'rgba(214,39,40,0.9)';
      ctx.lineWidth = 1.5;
      ctx.fillStyle = 'rgba(214,39,40,0.9)';
      ctx.font = '11px system-ui, sans-serif';
      for (const [at, label] of gpu.events) {
        const x0 = x(at);
        ctx.beginPath();
        ctx.moveTo(x0, top);
        ctx.lineTo(x0, top + height);
        ctx.stroke();
        ctx.fillText(label, x0 + 3, top + 11);
      }
      ctx.restore();
    };
  }

  // Keeps only the empty stretches longer than `gapMs` (a metric read every few ticks leaves
  // short empty stretches that are not missing data); gaps are [from, to] in canvas pixels.
  function realGaps(gapMs) {
    return (u, sidx, idx0, idx1, nullGaps) => {
      const { min, max } = u.scales.x;
      const pxPerS = u.bbox.width / Math.max(max - min, 1e-9);
      const limit = (gapMs / 1000) * pxPerS;
      return nullGaps.filter(([a, b]) => b - a > limit);
    };
  }

  function zoomAll(min, max) {
    for (const c of charts) c.setScale('x', { min, max });
  }

  function makeChart(gpu, def, el, width) {
    const series = [{}];
    const columns = [t];
    const bands = [];
    for (const key of def.series) {
      const s = gpu.series[key];
      const colour = COLOURS[key];
      const at = columns.length;
      columns.push(s ? s.mean : nulls, s ? s.min : nulls, s ? s.max : nulls);
      const gaps = realGaps(s ? s.gapMs : 0);
      series.push({ label: LABELS[key], stroke: colour, width: 1.5, gaps },
                  { label: LABELS[key] + ' min', stroke: fade(colour, 0.25), width: 0.5, gaps },
                  { label: LABELS[key] + ' max', stroke: fade(colour, 0.25), width: 0.5, gaps });
      bands.push({ series: [at + 2, at + 1], fill: fade(colour, 0.15) });
    }
    if (def.total && gpu.memTotalGiB !== null) {
      columns.push(new Array(data.n).fill(gpu.memTotalGiB));
      series.push({ label: 'total', stroke: COLOURS.total, dash: [4, 4], width: 1 });
    }
    const yRange = (u, lo, hi) => {
      if (def.range) return def.range;
      if (lo === null || hi === null) return [0, 1];
      const pad = Math.max((hi - lo) * 0.08, Math.abs(hi) * 0.02, 0.5);
      return [Math.max(0, lo - pad), hi + pad];
    };
    const opts = {
      width, height: 190, tzDate: utc, series, bands,
      scales: { x: { time: true }, y: { range: yRange } },
      axes: [{}, { size: 56 }],
      legend: { live: true },
      cursor: { sync: { key: 'gpumon-report' }, drag: { x: true, y: false, setScale: false } },
      hooks: {
        drawClear: [markers(gpu)],
        setSelect: [(u) => {
          if (u.select.width < 2) return;
          const min = u.posToVal(u.select.left, 'x');
          const max = u.posToVal(u.select.left + u.select.width, 'x');
          u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          zoomAll(min, max);
        }],
      },
    };
    return new uPlot(opts, columns, el);
  }

  function addChart(box, gpu, def, width) {
    const wrap = document.createElement('div');
    wrap.className = 'chart chart-' + def.key;
    const title = document.createElement('div');
    title.className = 'chart-title';
    title.textContent = def.title;
    wrap.append(title);
    box.append(wrap);
    charts.push(makeChart(gpu, def, wrap, Math.floor(width)));
  }

  const chartWidth = (box) => Math.max(360, Math.min(1240, box.clientWidth >= 1230 ? (box.clientWidth - 16) / 2 : box.clientWidth));

  try {
    const stepBox = document.querySelector('#steps .charts');
    if (data.steps && stepBox) {
      const steps = { series: { steptime: data.steps.time, wait: data.steps.wait }, memTotalGiB: null,
                      throttled: [], lost: [], events: [] };
      for (const def of STEP_CHARTS) addChart(stepBox, steps, def, chartWidth(stepBox));
    }
    for (const gpu of data.gpus) {
      if (!gpu.samples) continue;
      const box = document.querySelector('.gpu[data-gpu="' + gpu.gpu + '"] .charts');
      if (!box) continue;
      for (const def of CHARTS) addChart(box, gpu, def, chartWidth(box));
    }
    const reset = document.getElementById('reset-zoom');
    if (reset) reset.addEventListener('click', () => zoomAll(t[0] - data.width / 2000, t[t.length - 1] + data.width / 2000));
  } catch (e) {
    state.error = String(e);
    throw e;
  }
  state.charts = charts.length;
  state.done = true;
})();
