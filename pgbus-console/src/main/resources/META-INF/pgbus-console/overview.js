// Overview: depth per queue and state, and jobs finished (completed or dead) per minute and queue
// over the last hour, as stacked bars drawn by ECharts; then every queue as a row.
import { get, h, ago, stateBadge, queueCount } from './core.js';
import { historyCharts } from './history.js';

const DEPTH_STATES = ['available', 'running', 'scheduled', 'retryable', 'dead'];
// Queues drawn by name in the charts; the rest share one bar (or one series), so fifty queues
// stay readable. The table below lists every queue.
const DEPTH_TOP = 12;
const FINISHED_TOP = 8;

const depthOf = (x) => DEPTH_STATES.reduce((n, s) => n + x.counts[s], 0);
const others = (n) => `${n} other queue${n === 1 ? '' : 's'}`;

// The deepest queues, deepest first, then the rest summed; queues with nothing waiting or
// running are left out.
export function depthRows(queues) {
  const deep = queues.filter((x) => depthOf(x) > 0)
    .sort((a, b) => depthOf(b) - depthOf(a) || a.queue.localeCompare(b.queue));
  const rows = deep.slice(0, DEPTH_TOP).map((x) => ({ name: x.queue, counts: x.counts }));
  const rest = deep.slice(DEPTH_TOP);
  if (rest.length) {
    rows.push({ name: others(rest.length),
      counts: Object.fromEntries(DEPTH_STATES.map((s) => [s, rest.reduce((n, x) => n + x.counts[s], 0)])) });
  }
  return rows;
}

// Finished jobs per minute as [name, points]: the busiest queues of the window, then the rest
// summed per minute.
export function finishedSeries(points) {
  const byQueue = new Map();
  for (const p of points) {
    if (!byQueue.has(p.queue)) byQueue.set(p.queue, []);
    byQueue.get(p.queue).push([p.minute, p.completed + p.dead]);
  }
  const total = (data) => data.reduce((n, p) => n + p[1], 0);
  const ranked = [...byQueue].sort((a, b) => total(b[1]) - total(a[1]) || a[0].localeCompare(b[0]));
  const series = ranked.slice(0, FINISHED_TOP);
  const rest = ranked.slice(FINISHED_TOP);
  if (rest.length) {
    const perMinute = new Map();
    for (const [, data] of rest) {
      for (const [minute, n] of data) perMinute.set(minute, (perMinute.get(minute) || 0) + n);
    }
    series.push([others(rest.length), [...perMinute].sort((a, b) => (a[0] < b[0] ? -1 : 1))]);
  }
  return series;
}

const EMPTY = (text) => ({ type: 'text', left: 'center', top: 'middle', style: { text, fill: '#888', fontSize: 13 } });

export async function render(view) {
  const depthEl = h('div', { id: 'depth-chart', class: 'chart' });
  const throughputEl = h('div', { id: 'throughput-chart', class: 'chart' });
  const table = h('div', { id: 'queues' });
  const history = historyCharts(null);
  view.replaceChildren(
    h('h1', {}, 'Overview'),
    h('div', { class: 'charts' },
      h('div', { class: 'card' }, h('h2', {}, 'Depth per queue'), depthEl),
      h('div', { class: 'card' }, h('h2', {}, 'Finished per minute, last hour'), throughputEl)),
    history.box,
    h('h2', {}, 'Queues'), table);
  const depth = echarts.init(depthEl);
  const throughput = echarts.init(throughputEl);
  const resize = () => { depth.resize(); throughput.resize(); };
  window.addEventListener('resize', resize);

  async function refresh() {
    if (!depthEl.isConnected) { window.removeEventListener('resize', resize); return; }
    const [q, t] = await Promise.all([get('queues'), get('throughput')]);
    const rows = depthRows(q.queues);
    depth.setOption({
      animation: false,
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      legend: { top: 0 },
      grid: { left: 8, right: 16, top: 32, bottom: 8, containLabel: true },
      xAxis: { type: 'value', minInterval: 1 },
      yAxis: { type: 'category', inverse: true, data: rows.map((r) => r.name) },
      series: DEPTH_STATES.map((s) => ({
        name: s, type: 'bar', stack: 'depth', barMaxWidth: 18, data: rows.map((r) => r.counts[s]) })),
      graphic: rows.length ? [] : [EMPTY('No job waits or runs')],
    }, true);
    const finished = finishedSeries(t.points);
    const now = Date.now();
    throughput.setOption({
      animation: false,
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      legend: { top: 0, type: 'scroll' },
      grid: { left: 8, right: 16, top: 32, bottom: 8, containLabel: true },
      xAxis: { type: 'time', min: now - t.windowMinutes * 60000, max: now + 60000 },
      yAxis: { type: 'value', minInterval: 1 },
      series: finished.map(([name, data]) => ({ name, type: 'bar', stack: 'finished', barMaxWidth: 12, data })),
      graphic: finished.length ? [] : [EMPTY('No job finished in the last hour')],
    }, true);
    depthEl.dataset.points = String(q.queues.reduce((n, x) => n + DEPTH_STATES.reduce((m, s) => m + x.counts[s], 0), 0));
    throughputEl.dataset.points = String(t.points.length);
    table.replaceChildren(queueTable(q));
    await history.refresh();
  }
  await refresh();
  return { refresh };
}

function queueTable(q) {
  return h('table', {},
    h('thead', {}, h('tr', {}, h('th', {}, 'queue'), h('th', {}, ''),
      ['scheduled', 'available', 'running', 'retryable', 'completed', 'dead', 'cancelled'].map((s) => h('th', { class: 'num' }, s)),
      h('th', {}, 'oldest waiting'), h('th', {}, 'read by'))),
    h('tbody', {}, q.queues.map((x) => h('tr', { 'data-queue': x.queue },
      h('td', {}, h('a', { href: '#/queue/' + encodeURIComponent(x.queue) }, x.queue)),
      h('td', {}, x.paused ? stateBadge('paused') : ''),
      ['scheduled', 'available', 'running', 'retryable', 'completed', 'dead', 'cancelled'].map((s) => h('td', { class: 'num', title: (x.countsEstimated || []).includes(s) ? 'estimated from the table statistics' : null }, queueCount(x, s))),
      h('td', {}, ago(x.oldestWaitingMs)),
      h('td', { class: 'muted' }, x.readers.map((r) => `${r.capsule}@${r.worker}`).join(', ') || '—')))));
}
