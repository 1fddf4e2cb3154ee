// One job: why it is where it is (its reasons, at the top), its facts, its batch (a link to its
// page), the jobs it waits on and those that wait on it, the payload pretty-printed, its attempts
// and errors as a timeline (stack traces folded), and the actions its state allows (admins only, each after a confirmation; Cancel
// reaches a running job too).
import { get, post, h, when, stateBadge, actionButton, flash, JOB_ACTIONS } from './core.js';
import { renderReasons } from './explain.js';

/** The job page's actions: the list's, and Cancel of a running job (its JVM stops the handler). */
const ACTIONS = JOB_ACTIONS.map((a) => (a.action === 'cancel' ? { ...a, states: [...a.states, 'running'] } : a));

/** What each action will do to this one job, said before it runs. */
const CONFIRM = {
  replay: (j) => `Replay job ${j.id}? It runs again with a fresh budget of ${j.maxAttempts - (j.attemptsBeforeReplay || 0)} attempts.`,
  retry: (j) => `Run job ${j.id} now instead of at ${when(j.runAt)}?`,
  cancel: (j) => (j.state === 'running'
    ? `Cancel running job ${j.id}? Its JVM interrupts the handler, and the job ends as cancelled.`
    : `Cancel job ${j.id}? It will not run.`),
  delete: (j) => `Delete job ${j.id} for good?`,
};

/** Lines of a stack trace shown before "more lines". */
const TRACE_LINES = 3;

export async function render(view, id) {
  const facts = h('div', { class: 'card' });
  const actions = h('div', { class: 'toolbar', id: 'job-actions' });
  const links = h('div', { id: 'job-links' });
  const payload = h('pre', { id: 'payload' });
  const timeline = h('ol', { class: 'timeline', id: 'timeline' });
  const reasons = h('section', { id: 'job-reasons' });
  view.replaceChildren(h('h1', {}, 'Job ', h('code', {}, id)), reasons, actions, facts, links,
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
      fact('attempt', h('span', { id: 'job-attempt' }, attemptText(j))),
      fact('priority', j.priority),
      fact(j.state === 'dead' ? 'died at' : 'run at', when(j.state === 'dead' ? j.finalizedAt : j.runAt)),
      fact('created', when(j.createdAt)),
      // A start-by deadline (V43): not claimed by then, the job never runs (explain: expired).
      j.startBy ? fact('start by', h('span', { id: 'job-start-by' }, when(j.startBy))) : null,
      // Cancelled for it: the reason, pgbus's own text, shown where error texts are masked too.
      j.expired ? fact('expired', h('span', { id: 'job-expired' }, j.expired)) : null,
      fact('last attempted', when(j.attemptedAt)),
      fact('finished', when(j.finalizedAt)),
      fact('progress', h('span', { id: 'job-progress' }, progress(j.progress))),
      fact('held by', j.attemptedBy && j.state === 'running' ? `${j.attemptedBy} until ${when(j.leaseExpiresAt)}` : '—'),
      // A member of a workflow (GET jobs/{id}: workflowId) links to its graph.
      j.workflowId ? fact('workflow', h('a', { id: 'job-workflow', href: '#/workflows/' + encodeURIComponent(j.workflowId) }, 'workflow ' + j.workflowId)) : null,
      fact('unique key', j.uniqueKey || '—'),
      fact('enqueued by', j.enqueuedBy || '—'),
      fact('correlation id', j.correlationId || '—')));
    links.replaceChildren(...(await edges(j)));
    payload.textContent = j.payloadMasked ? '(masked: only pgbus-admin may read payloads and error texts)' : pretty(j.payload);
    timeline.replaceChildren(...events(j).map((e) => h('li', { class: e.kind },
      h('div', { class: 'when' }, when(e.at)), h('div', {}, e.title),
      e.detail ? trace(e.detail, e.at) : null)));
    actions.replaceChildren(...ACTIONS.filter((a) => a.states.includes(j.state))
      .map((a) => actionButton(a.label, a.action, async () => {
        const r = await post(`jobs/${encodeURIComponent(id)}/${a.action}`);
        const running = a.action === 'cancel' && j.state === 'running';
        flash(!r.changed ? `${a.label}: the job was not in a state for it any more.`
          : running ? `${a.label}: its JVM was asked to stop it.` : `${a.label}: done.`, r.changed > 0);
        if (a.action === 'delete' && r.changed) location.hash = '#/queue/' + encodeURIComponent(j.queue);
        else await refresh();
      }, a.danger, CONFIRM[a.action](j))).filter(Boolean));
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

/** "attempt 2 of 3", and after a replay the attempts of the runs before it. */
function attemptText(j) {
  const before = j.attemptsBeforeReplay || 0;
  return `${j.attempt - before} of ${j.maxAttempts - before}` + (before ? ` (replayed after ${before} attempts)` : '');
}

/**
 * Its batch (a link to the batch page), the jobs it waits on (parents) and those that wait on it
 * (children), each with its state and the edge's, from GET jobs/{id}/links.
 */
async function edges(j) {
  const l = await get('jobs/' + encodeURIComponent(j.id) + '/links');
  if (!l.batchId && l.parents.length === 0 && l.children.length === 0) return [];
  const edge = (e) => h('li', { 'data-job-id': e.job },
    h('a', { href: '#/job/' + e.job }, e.job), ' ', e.state ? stateBadge(e.state) : h('span', { class: 'muted' }, '(gone)'),
    h('span', { class: 'muted' }, ` ${e.queue || ''} · edge ${e.edge}, on failure: ${e.onFailure}`));
  return [h('div', { class: 'card', id: 'job-edges' },
    h('dl', { class: 'facts' },
      fact('batch', l.batchId ? h('a', { id: 'job-batch', href: '#/batch/' + l.batchId }, 'batch ' + l.batchId) : '—'),
      fact('waits on', l.parents.length === 0 ? '—' : h('ul', { class: 'edges', id: 'job-parents' }, l.parents.map(edge))),
      fact('waited on by', l.children.length === 0 ? '—' : h('ul', { class: 'edges', id: 'job-children' }, l.children.map(edge),
        l.moreChildren ? h('li', { class: 'muted' }, 'and more') : null))))];
}

/** The traces unfolded on this page, by the error's time: a refresh keeps them open. */
const unfolded = new Set();

/** An error: its first lines, the rest of a stack trace folded behind a click. */
function trace(text, key) {
  const lines = String(text).split('\n');
  const head = h('div', { class: 'error-text trace-head' }, lines.slice(0, TRACE_LINES).join('\n'));
  if (lines.length <= TRACE_LINES) return head;
  const rest = h('details', { class: 'trace', open: unfolded.has(key) },
    h('summary', {}, `${lines.length - TRACE_LINES} more lines`),
    h('div', { class: 'error-text' }, lines.slice(TRACE_LINES).join('\n')));
  rest.addEventListener('toggle', () => (rest.open ? unfolded.add(key) : unfolded.delete(key)));
  return h('div', {}, head, rest);
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
  for (const e of errors) {
    // The leader's expiry is no failed attempt: it cancelled a job that never started in time.
    const expiry = j.expired && String(e.error).startsWith('expired: ');
    out.push({ at: e.at, kind: 'error', title: expiry ? 'Expired' : `Attempt ${e.attempt} failed`, detail: e.error });
  }
  const failedLast = errors.some((e) => e.attempt === j.attempt);
  if (j.attemptedAt && !failedLast) out.push({ at: j.attemptedAt, kind: '', title: `Attempt ${j.attempt} started` });
  if (j.finalizedAt) out.push({ at: j.finalizedAt, kind: j.state === 'completed' ? 'done' : 'error', title: j.expired ? `Finished: cancelled, expired (${j.expired})` : `Finished: ${j.state}` });
  else out.push({ at: j.runAt, kind: '', title: j.state === 'running' ? 'Running' : `Next run (${j.state})` });
  return out.sort((a, b) => new Date(a.at || 0) - new Date(b.at || 0));
}
