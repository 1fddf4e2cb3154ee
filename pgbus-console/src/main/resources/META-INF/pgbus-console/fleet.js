// The fleet: who leads, this JVM's capsules, every node (pgbus.node) with its capsules, the live
// listeners (one per JVM with capsules), and the doctor's report (for pgbus-admin only).
import { get, h, session, when, stateBadge } from './core.js';

export async function render(view) {
  const fleetBox = h('div', { class: 'card', id: 'fleet' });
  const doctorBox = h('div', { class: 'card', id: 'doctor' });
  view.replaceChildren(h('h1', {}, 'Fleet'), fleetBox, h('h2', {}, 'Doctor'), doctorBox);
  async function refresh() {
    const [f, d] = await Promise.all([get('fleet'), session.admin ? get('doctor') : null]);
    const s = f.self || {};
    fleetBox.replaceChildren(
      h('dl', { class: 'facts' },
        h('dt', {}, 'leader'), h('dd', { id: 'leader' }, f.leader || '— (none yet)'),
        h('dt', {}, 'this JVM'), h('dd', {}, `${s.worker}${s.leader ? ' (leader)' : ''}, listener ${s.listener}, mode ${s.mode}`)),
      h('h2', {}, 'Capsules of this JVM'),
      h('table', {}, h('thead', {}, h('tr', {}, ['capsule', 'queues', 'concurrency', 'in flight'].map((t) => h('th', {}, t)))),
        h('tbody', {}, (s.capsules || []).map((c) => h('tr', {},
          h('td', {}, c.name), h('td', {}, c.queues.join(', ')), h('td', { class: 'num' }, c.concurrency), h('td', { class: 'num' }, c.inFlight))))),
      h('h2', {}, 'Nodes (every JVM with capsules, from pgbus.node)'),
      h('table', { id: 'nodes' }, h('thead', {}, h('tr', {}, ['worker', 'liveness', 'connected', 'leader', 'listener', 'mode', 'capsules', 'last heartbeat'].map((t) => h('th', {}, t)))),
        h('tbody', {}, (f.nodes || []).map((n) => h('tr', {},
          h('td', {}, n.worker),
          // Alive: a heartbeat younger than its TTL, or an open LISTEN connection (an idle JVM
          // beats once per poll ceiling); stale otherwise.
          // The badge is a span inside the cell: a cell styled as a badge left the table's layout.
          h('td', { class: 'badge-cell', title: `heartbeat TTL ${n.heartbeatTtl || '—'}` },
            h('span', { class: n.alive ? 'state completed' : 'state dead' }, n.alive ? 'alive' : 'stale')),
          h('td', {}, n.connected ? 'yes' : 'no'), h('td', {}, n.leader ? 'yes' : ''),
          h('td', {}, n.listener), h('td', {}, n.mode),
          h('td', {}, n.capsules.map((c) => `${c.name} (${c.queues.join(', ')}; ${c.concurrency})`).join('; ')),
          h('td', {}, when(n.seenAt)))))),
      h('h2', {}, `Live listeners (${f.listeners.length} JVMs)`),
      h('table', {}, h('thead', {}, h('tr', {}, ['pid', 'client address', 'since'].map((t) => h('th', {}, t)))),
        h('tbody', {}, f.listeners.map((l) => h('tr', {},
          h('td', {}, l.pid), h('td', {}, l.clientAddress || '—'), h('td', {}, when(l.since)))))));
    doctorBox.replaceChildren(d ? h('div', { id: 'doctor-report', class: 'doctor' }, doctor(d))
      : h('p', { class: 'muted' }, 'The doctor\'s report (configuration and database limits) is for pgbus-admin only.'));
  }
  await refresh();
  return { refresh };
}

/** The doctor's report as a page: its verdict, each check as a row, then the connection budget. */
function doctor(d) {
  const { status, checks, ...rest } = d;
  return [
    h('p', {}, 'Verdict: ', verdict(status)),
    Array.isArray(checks) ? h('table', { id: 'doctor-checks' },
      h('thead', {}, h('tr', {}, ['check', 'status', 'detail', 'fix'].map((t) => h('th', {}, t)))),
      h('tbody', {}, checks.map((c) => h('tr', { 'data-check': c.name },
        h('td', {}, c.name), h('td', { class: 'badge-cell' }, verdict(c.status)),
        h('td', {}, value(c.detail)), h('td', { class: 'muted' }, value(c.fix)))))) : null,
    Object.entries(rest).map(([k, v]) => [h('h3', {}, label(k)), value(v)]),
  ];
}

function verdict(status) {
  const s = String(status || '').toLowerCase();
  return stateBadge(s === 'ok' || s === 'up' ? 'ok' : s === 'warn' || s === 'warning' ? 'warn' : s || '—');
}

/** Any JSON value, readable: objects as facts, lists of objects as tables, the rest as text. */
function value(v) {
  if (v === null || v === undefined || v === '') return '—';
  if (Array.isArray(v)) {
    if (v.length === 0) return '—';
    if (v.every((x) => x && typeof x === 'object' && !Array.isArray(x))) {
      const keys = [...new Set(v.flatMap((x) => Object.keys(x)))];
      return h('table', {}, h('thead', {}, h('tr', {}, keys.map((k) => h('th', {}, label(k))))),
        h('tbody', {}, v.map((x) => h('tr', {}, keys.map((k) => h('td', {}, value(x[k])))))));
    }
    return v.map(String).join(', ');
  }
  if (typeof v === 'object') {
    return h('dl', { class: 'facts' }, Object.entries(v).map(([k, x]) => [h('dt', {}, label(k)), h('dd', {}, value(x))]));
  }
  return String(v);
}

/** camelCase to words: "maxConnections" as "max connections". */
function label(key) {
  return String(key).replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
}
