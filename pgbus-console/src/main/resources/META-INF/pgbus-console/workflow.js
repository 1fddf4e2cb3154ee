// One workflow (#/workflows/<id>): its name, state and counts, its graph (wfgraph.js: a box per
// job, linked to its page, an arrow per edge) and, for admins, Cancel workflow and Retry workflow,
// each after a confirmation. GET workflows/{id} answers at most 1,000 nodes; past them the page
// says so and draws those.
import { get, post, h, fill, when, stateBadge, actionButton, flash, jobs } from './core.js';
import { layout, draw } from './wfgraph.js';

const COUNTS = ['waiting', 'running', 'completed', 'dead', 'cancelled'];

export async function render(view, id) {
  const title = h('h1', {}, 'Workflow ', h('code', {}, id));
  const facts = h('div', { class: 'card', id: 'wf-facts' });
  const actions = h('div', { class: 'toolbar', id: 'wf-actions' });
  const more = h('p', { class: 'muted', id: 'wf-more', hidden: true });
  const graph = h('div', { class: 'card wf-graph', id: 'wf-graph' });
  view.replaceChildren(title, actions, facts, h('h2', {}, 'Graph'), legend(), more, graph);
  // The answer last drawn: a refresh that reads the same redraws nothing (and keeps the focus).
  let drawn = null;

  async function refresh() {
    let w;
    try {
      w = await get('workflows/' + encodeURIComponent(id));
    } catch (e) {
      if (e.status === 404) {
        view.replaceChildren(h('h1', {}, 'Workflow ', h('code', {}, id)), h('p', { id: 'wf-gone' }, 'No such workflow.'));
        return;
      }
      throw e;
    }
    const text = JSON.stringify(w);
    if (text === drawn) return;
    drawn = text;
    fill(title, 'Workflow ', h('code', {}, w.id), w.name ? [' · ', h('span', { id: 'wf-name' }, w.name)] : null);
    const c = w.counts || {};
    fill(facts, h('dl', { class: 'facts' },
      fact('state', h('span', { id: 'wf-state', 'data-state': w.state }, stateBadge(w.state))),
      fact('jobs', h('span', { id: 'wf-counts', ...Object.fromEntries(COUNTS.map((k) => ['data-' + k, c[k] ?? 0])) },
        COUNTS.map((k) => `${c[k] ?? 0} ${k}`).join(', '))),
      fact('created', when(w.createdAt)),
      fact('created by', w.createdBy || '—')));
    more.hidden = !w.more;
    more.textContent = w.more ? 'Showing the first 1,000 nodes of this workflow; edges to the others are left out.' : '';
    const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest('#wf-graph a.node');
    const again = focused ? focused.getAttribute('data-job-id') : null;
    fill(graph, w.nodes.length === 0 ? h('p', { class: 'muted' }, 'No jobs left (all pruned).')
      : draw(layout(w.nodes, w.edges), (job) => '#/job/' + encodeURIComponent(job)));
    if (again) {
      const node = graph.querySelector(`a.node[data-job-id="${CSS.escape(again)}"]`);
      if (node) node.focus();
    }
    fill(actions, buttons(w, c, refresh));
  }
  await refresh();
  return { refresh };
}

/** Cancel while it runs; Retry while a member is dead. Admins only (actionButton). */
function buttons(w, c, refresh) {
  const act = async (action, label) => {
    const r = await post(`workflows/${encodeURIComponent(w.id)}/${action}`);
    const changed = r && typeof r.changed === 'number' ? r.changed : null;
    flash(changed === 0 ? `${label}: nothing was in a state for it any more.`
      : changed === null ? `${label}: done.` : `${label}: ${jobs(changed)} changed.`, changed !== 0);
    await refresh();
  };
  const unfinished = (c.waiting || 0) + (c.running || 0);
  return [
    w.state === 'running' ? actionButton('Cancel workflow', 'workflow-cancel', () => act('cancel', 'Cancel workflow'), true,
      `Cancel workflow ${w.id}${w.name ? ` (${w.name})` : ''}? Its ${jobs(unfinished)} not yet finished end cancelled;`
      + ' a running one is asked to stop by its JVM.') : null,
    (c.dead || 0) > 0 ? actionButton('Retry workflow', 'workflow-retry', () => act('retry', 'Retry workflow'), false,
      `Retry workflow ${w.id}${w.name ? ` (${w.name})` : ''}? Its ${jobs(c.dead)} dead run again with a fresh budget,`
      + ' and the jobs cancelled because of them wait again. Branches not taken and jobs an operator cancelled stay.') : null,
  ];
}

/** What the lines mean, in words: the graph never says it by colour alone. */
function legend() {
  return h('ul', { class: 'wf-legend', id: 'wf-legend' },
    h('li', {}, h('span', { class: 'line success' }), 'runs after success'),
    h('li', {}, h('span', { class: 'line failure' }), 'on failure (dead or cancelled)'),
    h('li', {}, h('span', { class: 'line result' }), 'on a result (its predicate on the arrow)'),
    h('li', {}, h('span', { class: 'line not-taken' }), 'branch not taken'));
}

function fact(label, value) {
  return [h('dt', {}, label), h('dd', {}, value)];
}
