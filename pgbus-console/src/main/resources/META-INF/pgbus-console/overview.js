// Overview: depth per queue and state, and jobs finished (completed or dead) per minute and queue
// over the last hour, as stacked bars drawn by ECharts; then every queue as a row.
import { get, h, ago, stateBadge, queueCount } from './core.js';
import { historyCharts } from './history.js';

const DEPTH_STATES = ['available', 'running', 'scheduled', 'retryable', 'dead'];

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
    const queues = q.queues.map((x) => x.queue);
    depth.setOption({
      animation: false,
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      legend: { top: 0 },
      grid: { left: 8, right: 16, top: 32, bottom: 8, containLabel: true },
      xAxis: { type: 'value', minInterval: 1 },
      yAxis: { type: 'category', data: queues },
      series: DEPTH_STATES.map((s) => ({
        name: s, type: 'bar', stack: 'depth', data: q.queues.map((x) => x.counts[s]) })),
    }, true);
    const byQueue = new Map();
    for (const p of t.points) {
      if (!byQueue.has(p.queue)) byQueue.set(p.queue, []);
      byQueue.get(p.queue).push([p.minute, p.completed + p.dead]);
    }
    const now = Date.now();
    throughput.setOption({
      animation: false,
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } },
      legend: { top: 0 },
      grid: { left: 8, right: 16, top: 32, bottom: 8, containLabel: true },
      xAxis: { type: 'time', min: now - t.windowMinutes * 60000, max: now + 60000 },
      yAxis: { type: 'value', minInterval: 1 },
      series: [...byQueue].map(([name, data]) => ({ name, type: 'bar', stack: 'finished', barMaxWidth: 12, data })),
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
