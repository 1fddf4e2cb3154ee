// One job: its facts, the payload pretty-printed, its attempts and errors as a timeline, and the
// actions its state allows (admins only).
import { get, post, h, when, stateBadge, actionButton, flash } from './core.js';
import { renderReasons } from './explain.js';

const ACTIONS = [
  ['Replay', 'replay', ['dead'], false],
  ['Retry now', 'retry', ['scheduled', 'retryable'], false],
  ['Cancel', 'cancel', ['scheduled', 'available', 'retryable'], true],
  ['Delete', 'delete', ['completed', 'dead', 'cancelled'], true],
];

export async function render(view, id) {
  const facts = h('div', { class: 'card' });
  const actions = h('div', { class: 'toolbar', id: 'job-actions' });
  const payload = h('pre', { id: 'payload' });
  const timeline = h('ol', { class: 'timeline', id: 'timeline' });
  const reasons = h('section', { id: 'job-reasons' });
  view.replaceChildren(h('h1', {}, 'Job ', h('code', {}, id)), reasons, actions, facts,
    h('h2', {}, 'Payload'), payload, h('h2', {}, 'Attempts and errors'), timeline);

  async function refresh() {
    let j;
    try {
      j = await get('jobs/' + encodeURIComponent(id));
    } catch (e) {
      if (e.status === 404) {
        view.replaceChildren(h('h1', {}, 'Job ', h('code', {}, id)), h('p', { id: 'job-gone' }, 'No such job (it may have been deleted).'));
        return;
      }
      throw e;
    }
    await renderReasons(reasons, id);
    facts.replaceChildren(h('dl', { class: 'facts' },
      fact('state', h('span', { id: 'job-state', 'data-state': j.state }, stateBadge(j.state))),
      fact('queue', h('a', { href: '#/queue/' + encodeURIComponent(j.queue) }, j.queue)),
      fact('attempt', `${j.attempt} of ${j.maxAttempts}`),
      fact('priority', j.priority),
      fact('run at', when(j.runAt)),
      fact('created', when(j.createdAt)),
      fact('last attempted', when(j.attemptedAt)),
      fact('finished', when(j.finalizedAt)),
      fact('progress', h('span', { id: 'job-progress' }, progress(j.progress))),
      fact('held by', j.attemptedBy && j.state === 'running' ? `${j.attemptedBy} until ${when(j.leaseExpiresAt)}` : '—'),
      fact('unique key', j.uniqueKey || '—'),
      fact('enqueued by', j.enqueuedBy || '—'),
      fact('correlation id', j.correlationId || '—')));
    payload.textContent = j.payloadMasked ? '(masked: only pgbus-admin may read payloads and error texts)' : pretty(j.payload);
    timeline.replaceChildren(...events(j).map((e) => h('li', { class: e.kind },
      h('div', { class: 'when' }, when(e.at)), h('div', {}, e.title),
      e.detail ? h('div', { class: 'error-text' }, e.detail) : null)));
    actions.replaceChildren(...ACTIONS.filter(([, , states]) => states.includes(j.state))
      .map(([label, action, , danger]) => actionButton(label, action, async () => {
        const r = await post(`jobs/${encodeURIComponent(id)}/${action}`);
        flash(r.changed ? `${label}: done.` : `${label}: the job was not in a state for it any more.`, r.changed > 0);
        if (action === 'delete' && r.changed) location.hash = '#/queue/' + encodeURIComponent(j.queue);
        else await refresh();
      }, danger)).filter(Boolean));
  }
  await refresh();
  return { refresh };
}

// The latest JobContext.progress report ({percent, message, at, attempt} as JSON text), or a dash.
function progress(json) {
  let p = null;
  try { p = JSON.parse(json || 'null'); } catch (e) { p = null; }
  if (!p || typeof p.percent !== 'number') return '—';
  return `${p.percent}%` + (p.message ? ` ${p.message}` : '') + ` (attempt ${p.attempt}, ${when(p.at)})`;
}

function fact(label, value) {
  return [h('dt', {}, label), h('dd', {}, value)];
}

function pretty(text) {
  if (text === null || text === undefined) return '';
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return String(text); }
}

/** Creation, each recorded error (the latest 10), the last attempt, and the end, oldest first. */
function events(j) {
  let errors = [];
  try { errors = JSON.parse(j.errors || '[]') || []; } catch (e) { errors = []; }
  const out = [{ at: j.createdAt, kind: '', title: 'Enqueued' }];
  for (const e of errors) out.push({ at: e.at, kind: 'error', title: `Attempt ${e.attempt} failed`, detail: e.error });
  const failedLast = errors.some((e) => e.attempt === j.attempt);
  if (j.attemptedAt && !failedLast) out.push({ at: j.attemptedAt, kind: '', title: `Attempt ${j.attempt} started` });
  if (j.finalizedAt) out.push({ at: j.finalizedAt, kind: j.state === 'completed' ? 'done' : 'error', title: `Finished: ${j.state}` });
  else out.push({ at: j.runAt, kind: '', title: j.state === 'running' ? 'Running' : `Next run (${j.state})` });
  return out.sort((a, b) => new Date(a.at || 0) - new Date(b.at || 0));
}
