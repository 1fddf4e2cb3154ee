// A queue's flow control, live: its limits as stored (pgbus.queue_limit), for admins a form that
// replaces them after a confirmation naming each change (before → after), and the audited
// changes (who, when, before → after). Viewers see the limits and the history, no form.
import { get, post, h, fill, when, flash, actionButton, session } from './core.js';

/** The limits as the API names them, with their labels and bounds (docs/admin-api.md). */
const NUMBERS = [
  { name: 'globalConcurrency', label: 'Global concurrency', hint: 'running jobs across the fleet, 1 to 100000' },
  { name: 'keyConcurrency', label: 'Per key', hint: 'running jobs per concurrency key, 1 to 100000 (empty: 1)' },
  { name: 'rateLimit', label: 'Rate limit', hint: 'job starts per window, 1 to 1000000' },
  { name: 'rateWindowMs', label: 'Rate window (ms)', hint: '1 to 86400000' },
];
const FLAGS = [
  { name: 'keyFifo', label: 'FIFO per key' },
  { name: 'keyFifoSkipDead', label: 'a dead job frees its key' },
];

/** "global 5, per key 1, 100 per 60000 ms, FIFO per key", or "none". */
export function describe(l) {
  if (!l) return 'none';
  const parts = [`global ${l.globalConcurrency ?? '∞'}`, `per key ${l.keyConcurrency ?? 1}`];
  if (l.rateLimit) parts.push(`${l.rateLimit} per ${l.rateWindowMs} ms`);
  if (l.keyFifo) parts.push(l.keyFifoSkipDead ? 'FIFO per key (dead jobs skipped)' : 'FIFO per key');
  return parts.join(', ');
}

/**
 * A fair queue's share between tenants (fairKey, fairWeights: set by the deployment, not here):
 * "fair share by concurrency-key, weights tenantA:3, tenantB:1; other tenants 1", or null.
 */
export function describeFair(s) {
  if (!s || !s.fairKey) return null;
  const w = Object.entries(s.fairWeights ?? {}).map(([t, n]) => `${t}:${n}`);
  return `fair share by ${s.fairKey}` + (w.length ? `, weights ${w.join(', ')}; other tenants 1` : ', every tenant 1');
}

export function limitsCard(queue) {
  const box = h('section', { class: 'card', id: 'limits' });
  const current = h('p', { id: 'limits-current' });
  const fair = h('p', { id: 'limits-fair', class: 'muted' });
  const form = h('form', { class: 'search', id: 'limits-form' });
  const history = h('div', { id: 'limits-history' });
  const inputs = {};
  for (const n of NUMBERS) {
    inputs[n.name] = h('input', { id: 'l-' + n.name, name: n.name, inputmode: 'numeric', placeholder: 'none', title: n.hint });
    form.append(h('label', { title: n.hint }, n.label, inputs[n.name]));
  }
  for (const f of FLAGS) {
    inputs[f.name] = h('input', { id: 'l-' + f.name, name: f.name, type: 'checkbox' });
    form.append(h('label', { class: 'check' }, inputs[f.name], f.label));
  }
  let stored = null;
  const apply = actionButton('Apply limits', 'limit', async () => {
    const r = await post(`queues/${encodeURIComponent(queue)}/limit`, wanted());
    flash(r.changed ? `Queue ${queue}: limits now ${describe(r.after)}.` : `Queue ${queue}: the limits were already so.`, true);
    await refresh(true);
  }, true, () => `Change the limits of queue ${queue} for every JVM, now?\n${describe(stored)} → ${describe(preview())}`);
  if (session.admin) form.append(h('div', {}, apply));
  // fill, not append: a viewer's missing form must not become the text "null".
  fill(box, h('h2', {}, 'Limits'), current, fair, session.admin ? form : null, h('h3', {}, 'Changes'), history);

  /** The form's values as the API's parameters; empty fields are left out (no such limit). */
  function wanted() {
    const p = {};
    for (const n of NUMBERS) if (inputs[n.name].value.trim()) p[n.name] = inputs[n.name].value.trim();
    for (const f of FLAGS) if (inputs[f.name].checked) p[f.name] = 'true';
    return p;
  }

  function preview() {
    const p = wanted();
    if (Object.keys(p).length === 0) return null;
    const num = (k) => (p[k] ? Number(p[k]) : null);
    return { globalConcurrency: num('globalConcurrency'), keyConcurrency: num('keyConcurrency'), rateLimit: num('rateLimit'),
      rateWindowMs: num('rateWindowMs'), keyFifo: !!p.keyFifo, keyFifoSkipDead: !!p.keyFifoSkipDead };
  }

  function fillForm(l) {
    for (const n of NUMBERS) inputs[n.name].value = l && l[n.name] != null ? String(l[n.name]) : '';
    for (const f of FLAGS) inputs[f.name].checked = !!(l && l[f.name]);
  }

  /** Reads the stored limits; the form is filled the first time and after an apply, not while typed in. */
  async function refresh(reset = false) {
    const s = await get(`queues/${encodeURIComponent(queue)}/limit`);
    const first = stored === null && !box.dataset.loaded;
    stored = s.limit;
    box.dataset.loaded = 'true';
    current.dataset.limits = JSON.stringify(s.limit);
    fill(current, describe(s.limit));
    // The fair share comes from the deployment's pgbus.queue.<name>.fair-key and fair-weights.
    const f = describeFair(s);
    fill(fair, f ?? '');
    fair.hidden = !f;
    if (first || reset) fillForm(s.limit);
    fill(history, s.history.length === 0 ? h('p', { class: 'muted' }, 'No changes through the console or the API yet.')
      : h('table', { class: 'limit-history' },
        h('thead', {}, h('tr', {}, ['when', 'who', 'before', 'after'].map((t) => h('th', {}, t)))),
        h('tbody', {}, s.history.map((e) => h('tr', {},
          h('td', {}, when(e.at)), h('td', { class: 'actor' }, e.actor),
          h('td', {}, describe(e.before)), h('td', { class: 'after' }, describe(e.after)))))));
  }

  return { box, refresh };
}
