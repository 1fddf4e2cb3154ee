// Routes #/page/arg to a page module, and refreshes the current page every refreshSeconds,
// but only while the tab is visible (Page Visibility API): a console left open in a background
// tab issues no requests, and so costs the database nothing.
import { session, flash, h, ZONE } from './core.js';
import * as overview from './overview.js';
import * as queue from './queue.js';
import * as jobs from './jobs.js';
import * as job from './job.js';
import * as crons from './crons.js';
import * as fleet from './fleet.js';
import * as batch from './batch.js';
import * as workflows from './workflow.js';

const pages = { overview, queue, jobs, job, crons, fleet, batch, workflows };
const view = document.getElementById('view');
let current = null;
let timer = null;
let generation = 0;

document.getElementById('who').textContent =
  `${session.user} · ${session.admin ? 'pgbus-admin' : 'pgbus-viewer (read only)'}`;
// Every time on the pages is the browser's local time with its offset; the zone is named here.
document.getElementById('who').after(h('span', { id: 'zone', title: 'Times are shown in this zone, with their UTC offset' }, `times in ${ZONE}`));
document.body.dataset.role = session.admin ? 'admin' : 'viewer';
// Another application's instance in the same database (pgbus.schema) must not pass for this one.
if (session.schema && session.schema !== 'pgbus') {
  document.querySelector('header .brand').textContent = `pgbus · ${session.schema}`;
  document.title = `pgbus console · ${session.schema}`;
}

function parse() {
  const [path, q] = location.hash.replace(/^#\/?/, '').split('?');
  const [name, ...rest] = path.split('/');
  return { name: pages[name] ? name : 'overview', arg: rest.map(decodeURIComponent).join('/'), params: new URLSearchParams(q || '') };
}

async function refresh() {
  if (!current || !current.refresh || document.visibilityState !== 'visible') return;
  const mine = generation;
  try {
    await current.refresh();
    if (mine === generation) document.body.dataset.refreshedAt = String(Date.now());
  } catch (e) {
    if (mine === generation) flash(`Refresh failed: ${e.message}`);
  }
}

function schedule() {
  clearInterval(timer);
  timer = null;
  if (document.visibilityState === 'visible' && current && current.refresh) {
    timer = setInterval(refresh, session.refreshSeconds * 1000);
  }
}

async function route() {
  const { name, arg, params } = parse();
  const mine = ++generation;
  clearInterval(timer);
  flash('');
  for (const a of document.querySelectorAll('nav a')) {
    a.classList.toggle('active', a.dataset.nav === name || (['job', 'batch', 'workflows'].includes(name) && a.dataset.nav === 'jobs'));
  }
  view.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
  try {
    const page = await pages[name].render(view, arg, params);
    if (mine !== generation) return;
    current = page || null;
    document.body.dataset.page = name;
    schedule();
  } catch (e) {
    if (mine === generation) {
      view.replaceChildren(h('p', { class: 'muted' }, 'Could not load this page.'));
      flash(e.message);
    }
  }
}

document.addEventListener('visibilitychange', () => {
  if (document.visibilityState === 'visible') refresh();
  schedule();
});
window.addEventListener('hashchange', route);
route();
