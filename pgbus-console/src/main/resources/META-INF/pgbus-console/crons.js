// The crons of this application: schedule, zone, queue, last and next run.
import { get, h, when } from './core.js';

export async function render(view) {
  const box = h('div', {});
  view.replaceChildren(h('h1', {}, 'Crons'), box);
  async function refresh() {
    const { crons } = await get('crons');
    box.replaceChildren(crons.length === 0
      ? h('p', { class: 'muted' }, 'This application configures no crons (pgbus.crons).')
      : h('table', { id: 'crons' },
        h('thead', {}, h('tr', {}, ['name', 'schedule', 'zone', 'queue', 'last run', 'next run'].map((t) => h('th', {}, t)))),
        h('tbody', {}, crons.map((c) => h('tr', {},
          h('td', {}, c.name), h('td', {}, h('code', {}, c.schedule)), h('td', {}, c.zone),
          h('td', {}, h('a', { href: '#/queue/' + encodeURIComponent(c.queue) }, c.queue)),
          h('td', {}, when(c.lastRun)), h('td', {}, when(c.nextRun)))))));
  }
  await refresh();
  return { refresh };
}
