// The fleet: who leads, this JVM's capsules, every node (pgbus.node) with its capsules, the live
// listeners (one per JVM with capsules), and the doctor's report (for pgbus-admin only).
import { get, h, session, when } from './core.js';

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
          h('td', { class: n.alive ? 'state completed' : 'state dead', title: `heartbeat TTL ${n.heartbeatTtl || '—'}` }, n.alive ? 'alive' : 'stale'),
          h('td', {}, n.connected ? 'yes' : 'no'), h('td', {}, n.leader ? 'yes' : ''),
          h('td', {}, n.listener), h('td', {}, n.mode),
          h('td', {}, n.capsules.map((c) => `${c.name} (${c.queues.join(', ')}; ${c.concurrency})`).join('; ')),
          h('td', {}, when(n.seenAt)))))),
      h('h2', {}, `Live listeners (${f.listeners.length} JVMs)`),
      h('table', {}, h('thead', {}, h('tr', {}, ['pid', 'client address', 'since'].map((t) => h('th', {}, t)))),
        h('tbody', {}, f.listeners.map((l) => h('tr', {},
          h('td', {}, l.pid), h('td', {}, l.clientAddress || '—'), h('td', {}, when(l.since)))))));
    doctorBox.replaceChildren(d ? h('pre', { id: 'doctor-report' }, JSON.stringify(d, null, 2))
      : h('p', { class: 'muted' }, 'The doctor\'s report (configuration and database limits) is for pgbus-admin only.'));
  }
  await refresh();
  return { refresh };
}
