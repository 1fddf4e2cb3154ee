// One queue: its counts by state as tabs, the jobs of the chosen state (with the list's selection
// and bulk actions, paging.js), pause and resume after a confirmation, and its limits, changed live
// with an audit (limits.js; the form for admins only).
import { get, post, h, fill, ago, stateBadge, actionButton, flash, queueCount, STATES } from './core.js';
import { pagedJobs } from './paging.js';
import { historyCharts } from './history.js';
import { limitsCard } from './limits.js';

export async function render(view, name, params) {
  const state = STATES.includes(params.get('state')) ? params.get('state') : null;
  const head = h('div', { class: 'toolbar' });
  const tabs = h('div', { class: 'toolbar', id: 'state-tabs' });
  const list = pagedJobs(state ? { queue: name, state } : { queue: name });
  const history = historyCharts(name);
  const limits = limitsCard(name);
  view.replaceChildren(h('h1', {}, 'Queue ', h('code', {}, name)), head, history.box, limits.box, tabs, list.box);

  async function refresh() {
    const q = (await get('queues')).queues.find((x) => x.queue === name);
    const paused = q ? q.paused : false;
    fill(head,
      h('span', { id: 'queue-state' }, stateBadge(paused ? 'paused' : 'active')),
      q ? h('span', { class: 'muted' }, `oldest waiting ${ago(q.oldestWaitingMs)}`) : null,
      paused
        ? actionButton('Resume', 'resume', () => act('resume'))
        : actionButton('Pause', 'pause', () => act('pause'), true,
          `Pause queue ${name}? No JVM starts its jobs until it is resumed; running jobs finish.`));
    const count = (s) => (q ? queueCount(q, s) : '0');
    const href = (s) => `#/queue/${encodeURIComponent(name)}${s ? '?state=' + s : ''}`;
    fill(tabs,
      h('a', { href: href(null), class: state ? '' : 'active' }, 'all'),
      STATES.map((s) => h('a', { href: href(s), 'data-state': s, class: s === state ? 'active' : '' }, `${s} (${count(s)})`)));
    if (!list.paged()) await list.first();
    await history.refresh();
    await limits.refresh();
  }

  async function act(action) {
    const r = await post(`queues/${encodeURIComponent(name)}/${action}`);
    flash(`Queue ${name}: ${r.paused ? 'paused' : 'resumed'}.`, true);
    await refresh();
  }

  await refresh();
  return { refresh };
}
