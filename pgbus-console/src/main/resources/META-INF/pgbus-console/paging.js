// A job list with keyset paging ("More" asks for the page after the last id shown), and for admins
// the incident tools: select jobs (one by one, or the whole page) or take every job matching the
// list's filter, then replay, retry, cancel or delete them after a confirmation that says how many
// jobs will change. A running job's row has its own Cancel.
import { get, post, h, fill, flash, jobTable, actionButton, session, JOB_ACTIONS, jobs } from './core.js';

const PAGE = 50;
/** What one click on "all matching" changes at most (the API's default bulk limit). */
const BULK = 1000;

export function pagedJobs(filter) {
  const box = h('div', { class: 'paged' });
  const tools = h('div', { class: 'toolbar', id: 'selection-tools' });
  const table = h('div', {});
  const more = h('div', { class: 'toolbar' });
  box.append(tools, table, more);
  const selected = new Set();
  let shown = [];

  async function load(before) {
    const page = await get('jobs', { ...filter, before, limit: PAGE });
    shown = before ? shown.concat(page.jobs) : page.jobs;
    if (!before) selected.clear();
    fill(more, page.next ? h('button', { id: 'more', type: 'button', onclick: () => load(page.next) }, 'More') : null);
    draw();
    return page;
  }

  function draw() {
    fill(table, shown.length
      ? jobTable(shown, { selected, onSelect: drawTools, state: filter.state, rowAction: cancelRunning })
      : h('p', { class: 'muted', id: 'no-jobs' }, 'No jobs match.'));
    drawTools();
  }

  function drawTools() {
    if (!session.admin || shown.length === 0) { fill(tools); return; }
    const picked = shown.filter((j) => selected.has(j.id));
    fill(tools,
      h('span', { id: 'selection-count', 'data-count': String(picked.length) }, `${picked.length} selected`),
      JOB_ACTIONS.map((a) => actionButton(`${a.label} selected`, 'selected-' + a.action, async () => {
        const ids = picked.filter((j) => a.states.includes(j.state)).map((j) => j.id);
        const r = await post('jobs/' + a.action, { ids: ids.join(','), limit: ids.length });
        flash(`${a.label}: ${jobs(r.changed)} changed.`, true);
        await load(null);
      }, a.danger, () => {
        const n = picked.filter((j) => a.states.includes(j.state)).length;
        if (n === 0) throw new Error(`none of the ${jobs(picked.length)} selected is ${a.states.join(', ')}`);
        return `${a.label} ${jobs(n)} (the selected ones that are ${a.states.join(', ')})?`;
      })),
      h('span', { class: 'muted' }, '· every job matching this list:'),
      JOB_ACTIONS.filter((a) => !filter.state || a.states.includes(filter.state)).map((a) =>
        actionButton(`${a.label} all matching`, 'matching-' + a.action, async () => {
          const r = await post('jobs/' + a.action, { ...filter, limit: BULK });
          flash(`${a.label}: ${jobs(r.changed)} changed.`, true);
          await load(null);
        }, a.danger, () => matchingText(a))));
  }

  /** The confirmation of an action on every matching job: their count, read before it runs. */
  async function matchingText(a) {
    const states = filter.state ? [filter.state] : a.states;
    const page = await get('jobs', { ...filter, state: states.join(','), limit: 200 });
    const n = page.jobs.length;
    if (n === 0) throw new Error(`no ${states.join(' or ')} job matches this list`);
    const what = `${states.join(' or ')} jobs matching this list`;
    return page.next
      ? `${a.label} up to ${BULK.toLocaleString()} of the more than 200 ${what}? (Repeat for the rest.)`
      : `${a.label} ${jobs(n)}: the ${n} ${what}?`;
  }

  function cancelRunning(j) {
    if (j.state !== 'running') return null;
    return actionButton('Cancel', 'cancel-running', async () => {
      const r = await post(`jobs/${encodeURIComponent(j.id)}/cancel`);
      flash(r.changed ? `Job ${j.id}: its JVM was asked to stop it.` : `Job ${j.id} had already ended.`, r.changed > 0);
      await load(null);
    }, true, `Cancel running job ${j.id}? Its JVM interrupts the handler and the job ends as cancelled.`);
  }

  return { box, first: () => load(null), paged: () => shown.length > PAGE || selected.size > 0 };
}
