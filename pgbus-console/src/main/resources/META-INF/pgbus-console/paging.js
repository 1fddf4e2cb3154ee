// A job list with keyset paging ("More" asks for the page after the last id shown).
import { get, h, jobTable } from './core.js';

export function pagedJobs(filter) {
  const box = h('div', { class: 'paged' });
  let shown = [];
  async function load(before) {
    const page = await get('jobs', { ...filter, before, limit: 50 });
    shown = before ? shown.concat(page.jobs) : page.jobs;
    const more = page.next
      ? h('button', { id: 'more', type: 'button', onclick: () => load(page.next) }, 'More')
      : null;
    box.replaceChildren(
      shown.length ? jobTable(shown) : h('p', { class: 'muted', id: 'no-jobs' }, 'No jobs match.'),
      h('div', { class: 'toolbar' }, more));
    return page;
  }
  return { box, first: () => load(null), paged: () => shown.length > 50 };
}
