// The schedules (pgbus.schedule): configured crons and those made at run time, with their
// expression, zone, queue, misfire and overlap policies, pause, last run (and what became of it:
// enqueued, skipped, queued behind the previous run, or the previous run cancelled) and next run; admins pause, resume, trigger and delete.
// Anyone who may read sees a schedule's history (its audit entries: who changed it, and when).
import { get, post, h, fill, when, stateBadge, actionButton, flash } from './core.js';

export async function render(view) {
  const box = h('div', {});
  const more = h('div', { class: 'toolbar' });
  const history = h('div', { id: 'schedule-history' });
  view.replaceChildren(h('h1', {}, 'Schedules'), box, more, history);
  async function refresh() {
    // One page of up to 500 by name; the rest follow with "Next".
    await show(null);
  }
  async function show(after) {
    const { schedules, next } = await get('schedules', { limit: 500, after });
    fill(box, schedules.length === 0
      ? h('p', { class: 'muted' }, 'No schedules: configure pgbus.crons, or create them with Schedules or the admin API.')
      : h('table', { id: 'crons' },
        h('thead', {}, h('tr', {}, ['name', 'cron', 'zone', 'queue', 'misfire', 'overlap', 'source', 'state', 'last run', 'next run', ''].map((t) => h('th', {}, t)))),
        h('tbody', {}, schedules.map((s) => h('tr', { 'data-schedule': s.name },
          h('td', {}, s.name), h('td', {}, h('code', {}, s.cron)), h('td', {}, s.zone),
          h('td', {}, h('a', { href: '#/queue/' + encodeURIComponent(s.queue) }, s.queue)),
          h('td', {}, s.misfire + (s.catchUpLimit ? ` (${s.catchUpLimit})` : '')),
          h('td', { 'data-overlap': s.overlap || 'allow' }, (s.overlap || 'allow').replace('_', ' ')),
          h('td', { class: 'muted' }, s.source),
          // A row that cannot run (an unknown zone written by SQL, say) is skipped by the leader.
          h('td', s.error ? { title: s.problem } : {}, stateBadge(s.error ? 'unreadable' : s.paused ? 'paused' : 'active')),
          h('td', {}, lastRun(s)), h('td', {}, s.paused ? '—' : when(s.nextRun)),
          h('td', {}, actions(s)))))));
    fill(more, next ? h('button', { type: 'button', onclick: () => show(next) }, 'Next') : null);
  }
  async function showHistory(name) {
    // GET schedules/{name} carries its latest audit entries, newest first.
    const s = await get('schedules/' + encodeURIComponent(name));
    const entries = s.history || [];
    fill(history, h('h2', {}, `History of ${name}`), entries.length === 0
      ? h('p', { class: 'muted' }, 'No entries (older ones are removed after pgbus.retention.audit).')
      : h('table', { class: 'history' },
        h('thead', {}, h('tr', {}, ['when', 'who', 'what', 'queue', 'job'].map((t) => h('th', {}, t)))),
        h('tbody', {}, entries.map((e) => h('tr', {},
          h('td', {}, when(e.at)), h('td', {}, e.actor), h('td', {}, e.action.replace('schedule_', '')),
          h('td', {}, e.queue),
          h('td', {}, e.jobId ? h('a', { href: '#/job/' + e.jobId }, e.jobId) : '—'))))));
  }
  // The latest run, what the leader did with it, and its job (the previous run's, for a skip).
  function lastRun(s) {
    const job = s.lastJobId ? [' ', h('a', { href: '#/job/' + s.lastJobId }, 'job ' + s.lastJobId)] : [];
    const outcome = s.lastOutcome && s.lastOutcome !== 'enqueued'
      ? [' ', h('span', { class: 'muted', 'data-outcome': s.lastOutcome }, s.lastOutcome.replace('_', ' '))] : [];
    return [when(s.lastRun), ...outcome, ...job];
  }
  function actions(s) {
    const path = `schedules/${encodeURIComponent(s.name)}/`;
    const act = async (action, done) => {
      const r = await post(path + action);
      flash(done(r), true);
      await refresh();
    };
    return [
      h('button', { type: 'button', 'data-action': 'history', onclick: () => showHistory(s.name).catch((e) => flash(`History failed: ${e.message}`)) }, 'History'),
      s.paused
        ? actionButton('Resume', 'resume', () => act('resume', () => `Schedule ${s.name}: resumed.`))
        : actionButton('Pause', 'pause', () => act('pause', () => `Schedule ${s.name}: paused.`), true,
          `Pause schedule ${s.name}? Its runs are skipped until it is resumed (misfire policy ${s.misfire}).`),
      actionButton('Trigger now', 'trigger', () => act('trigger', (r) => `Schedule ${s.name}: job ${r.jobId} enqueued.`), false,
        `Trigger schedule ${s.name} now? One job is enqueued on ${s.queue}, besides its regular runs.`),
      actionButton('Delete', 'delete', () => act('delete', () => `Schedule ${s.name}: deleted.`), true,
        `Delete schedule ${s.name}?` + (s.source === 'config' ? ' A configured cron comes back at the next deployment.' : '')),
    ];
  }
  await refresh();
  return { refresh };
}
