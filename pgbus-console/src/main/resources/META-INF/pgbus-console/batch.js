// One batch: its counters (completed, dead, cancelled, pending of its size), its callback (the
// queue, the payload, and once enqueued the callback job and its state) and its members with
// their states, a page at a time.
import { get, h, fill, when, stateBadge } from './core.js';

export async function render(view, id) {
  const facts = h('div', { class: 'card', id: 'batch-facts' });
  const members = h('tbody', {});
  const more = h('div', { class: 'toolbar' });
  view.replaceChildren(h('h1', {}, 'Batch ', h('code', {}, id)), facts, h('h2', {}, 'Jobs'),
    h('table', { class: 'jobs', id: 'batch-jobs' },
      h('thead', {}, h('tr', {}, ['id', 'queue', 'state', 'attempt', 'created', 'finished'].map((t) => h('th', {}, t)))),
      members), more);
  let last = 0;

  async function load(after) {
    let b;
    try {
      b = await get('batches/' + encodeURIComponent(id), { after: after || undefined });
    } catch (e) {
      if (e.status === 404) {
        view.replaceChildren(h('h1', {}, 'Batch ', h('code', {}, id)), h('p', { id: 'batch-gone' }, 'No such batch.'));
        return;
      }
      throw e;
    }
    fill(facts, h('dl', { class: 'facts' },
      fact('jobs', h('span', { id: 'batch-counts' }, `${b.size}: ${b.completed} completed, ${b.dead} dead, ${b.cancelled} cancelled, ${b.pending} pending`)),
      fact('callback', h('span', { id: 'batch-callback' },
        b.callbackJobId ? [h('a', { href: '#/job/' + b.callbackJobId }, 'job ' + b.callbackJobId), ' ', stateBadge(b.callbackState || 'gone')]
          : `queue ${b.callbackQueue}, enqueued when the last job finishes`)),
      fact('callback queue', h('a', { href: '#/queue/' + encodeURIComponent(b.callbackQueue) }, b.callbackQueue)),
      fact('callback payload', b.payloadMasked ? '(masked: only pgbus-admin may read payloads)' : h('code', {}, b.callbackPayload)),
      fact('created', when(b.createdAt)),
      fact('finished', when(b.finishedAt))));
    if (!after) members.replaceChildren();
    for (const j of b.jobs) {
      members.append(h('tr', { 'data-job-id': j.id, 'data-state': j.state },
        h('td', {}, h('a', { href: '#/job/' + j.id }, j.id)),
        h('td', {}, j.queue), h('td', {}, stateBadge(j.state)), h('td', { class: 'num' }, j.attempt),
        h('td', {}, when(j.createdAt)), h('td', {}, when(j.finalizedAt))));
    }
    last = after || 0;
    fill(more, b.next ? h('button', { id: 'more', type: 'button', onclick: () => load(b.next) }, 'More') : null);
  }

  await load(0);
  // A refresh reloads the first page only when no further page was opened (it keeps your pages).
  return { refresh: () => (last === 0 ? load(0) : null) };
}

function fact(label, value) {
  return [h('dt', {}, label), h('dd', {}, value)];
}
