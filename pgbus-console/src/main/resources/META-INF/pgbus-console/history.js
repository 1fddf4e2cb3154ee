// History: a queue's (or every queue's) per-minute history as timing charts, for 1 h, 24 h or 7 d:
// jobs completed, failed attempts and dead jobs; wait time and run time p50/p95/p99. Read from the
// admin API's history (GET history), which the maintenance leader writes once a minute. A page
// mounts it with historyCharts(queue) and calls refresh() with its own.
import { get, h } from './core.js';

// A range, and the step that keeps it to at most a few hundred points (JobAdmin bounds: 1,440).
const RANGES = [['1h', 60, 1], ['24h', 1440, 5], ['7d', 10080, 60]];

/** The card with its range buttons and three charts; refresh() reads the chosen range again. */
export function historyCharts(queue) {
  let range = RANGES[0];
  const buttons = RANGES.map((r) => h('button', { type: 'button', 'data-range': r[0] }, r[0]));
  const countsEl = h('div', { id: 'history-counts', class: 'chart' });
  const waitEl = h('div', { id: 'history-wait', class: 'chart' });
  const runEl = h('div', { id: 'history-run', class: 'chart' });
  const note = h('span', { class: 'muted' });
  const box = h('div', { class: 'card', id: 'history' },
    h('div', { class: 'toolbar' }, h('h2', {}, 'History'), ...buttons, note),
    h('div', { class: 'charts history' },
      h('div', {}, h('h3', {}, 'Completed, failed attempts, dead per step'), countsEl),
      h('div', {}, h('h3', {}, 'Wait time (run_at to start), ms'), waitEl),
      h('div', {}, h('h3', {}, 'Run time (start to end), ms'), runEl)));
  let charts = null;
  const resize = () => charts && charts.forEach((c) => c.resize());

  buttons.forEach((b, i) => b.addEventListener('click', () => { range = RANGES[i]; refresh(); }));

  async function refresh() {
    if (!box.isConnected) { window.removeEventListener('resize', resize); return; }
    if (!charts) {
      charts = [countsEl, waitEl, runEl].map((el) => echarts.init(el));
      window.addEventListener('resize', resize);
    }
    const [name, minutes, step] = range;
    const to = new Date();
    const from = new Date(to.getTime() - minutes * 60000);
    const r = await get('history', { queue, from: from.toISOString(), to: to.toISOString(), step });
    buttons.forEach((b) => b.classList.toggle('active', b.dataset.range === name));
    note.textContent = step === 1 ? 'per minute' : `per ${step} minutes; percentiles: the worst minute`;
    const at = (p) => Date.parse(p.at);
    const base = { animation: false, tooltip: { trigger: 'axis' }, legend: { top: 0 },
      grid: { left: 8, right: 16, top: 32, bottom: 8, containLabel: true },
      xAxis: { type: 'time', min: from.getTime(), max: to.getTime() } };
    charts[0].setOption({ ...base, yAxis: { type: 'value', minInterval: 1 },
      series: [['completed', 'completed'], ['failed attempts', 'failed'], ['dead', 'dead']].map(([label, key]) => ({
        name: label, type: 'bar', barMaxWidth: 10, data: r.points.map((p) => [at(p), p[key]]) })) }, true);
    const timing = (key) => ({ ...base, yAxis: { type: 'value', name: 'ms' },
      series: ['p50', 'p95', 'p99'].map((pct) => ({ name: pct, type: 'line', showSymbol: false, connectNulls: false,
        data: r.points.map((p) => [at(p), p[key] ? p[key][pct] : null]) })) });
    charts[1].setOption(timing('waitMs'), true);
    charts[2].setOption(timing('runMs'), true);
    box.dataset.points = String(r.points.length);
    box.dataset.completed = String(r.points.reduce((n, p) => n + p.completed, 0));
    box.dataset.range = name;
  }

  return { box, refresh };
}
