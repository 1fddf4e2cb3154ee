// The console's small core: the session, the admin API client (with its CSRF token), a DOM
// builder that never parses HTML, and formatting. Pages import from here.

// Absolute URLs without user info: fetch refuses a URL with credentials, and a relative one
// inherits them from a page opened as http://user:password@host/... .
const here = location.origin + location.pathname;

async function loadSession() {
  const res = await fetch(new URL('session', here), { credentials: 'same-origin' });
  if (!res.ok) {
    document.getElementById('view').textContent = `The console cannot start: session answered HTTP ${res.status}.`;
    throw new Error('session: HTTP ' + res.status);
  }
  return res.json();
}

export const session = await loadSession();
const apiRoot = location.origin + session.api;

let csrfToken = null;

async function fail(res) {
  let body = {};
  try { body = await res.json(); } catch (e) { /* not JSON */ }
  const err = new Error(body.message || body.error || `HTTP ${res.status}`);
  err.status = res.status;
  err.body = body;
  throw err;
}

/** GET an admin API path (relative to the API root) with query parameters; answers its JSON. */
export async function get(path, params = {}) {
  const res = await fetch(apiRoot + path + query(params), {
    credentials: 'same-origin', headers: { Accept: 'application/json' } });
  if (!res.ok) await fail(res);
  return res.json();
}

/** POST an action, with the CSRF header; fetches a token first, and once more if it went stale. */
export async function post(path, params = {}) {
  for (let attempt = 0; attempt < 2; attempt++) {
    if (!csrfToken || attempt > 0) csrfToken = (await get('csrf')).token;
    const res = await fetch(apiRoot + path + query(params), {
      method: 'POST', credentials: 'same-origin',
      headers: { Accept: 'application/json', 'X-Pgbus-CSRF': csrfToken } });
    if (res.ok) return res.json();
    if (res.status !== 403 || attempt > 0) await fail(res);
    const body = await res.clone().json().catch(() => ({}));
    if (body.error !== 'csrf') await fail(res);
  }
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') q.set(k, v);
  const s = q.toString();
  return s ? '?' + s : '';
}

/**
 * h('a', {href: '#/x', class: 'y'}, 'text', child): an element; strings become text nodes, and
 * nested arrays of children are flattened.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Replaces el's children; arrays are flattened and null/false (a viewer's button) left out. */
export function fill(el, ...children) {
  el.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
  return el;
}

export function stateBadge(state) {
  return h('span', { class: 'state ' + state }, state);
}

/** The browser's time zone, named once in the header: every time on the pages is in it. */
export const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';

const pad = (n) => String(n).padStart(2, '0');

/** An instant as the browser's local time with its UTC offset: 2026-12-02 15:04:05 +01:00. */
export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  if (isNaN(d)) return String(iso);
  const off = -d.getTimezoneOffset();
  const sign = off >= 0 ? '+' : '-';
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
    + ` ${sign}${pad(Math.floor(Math.abs(off) / 60))}:${pad(Math.abs(off) % 60)}`;
}

export function ago(ms) {
  if (!ms) return '—';
  const s = Math.round(ms / 1000);
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.round(s / 60) + ' min';
  return (s / 3600).toFixed(1) + ' h';
}

// A queue's count of one state (GET queues): "≈ 12,300" when the live jobs were estimated from the
// statistics, not counted (countsEstimated; older servers send none), "1,000+" when it stopped at
// the cap (countsCapped).
export function queueCount(q, state) {
  const n = q.counts[state].toLocaleString('en');
  if ((q.countsEstimated || []).includes(state)) return '≈ ' + n;
  return q.countsCapped.includes(state) ? n + '+' : n;
}

export function flash(message, ok = false) {
  const el = document.getElementById('flash');
  el.textContent = message;
  el.className = ok ? 'ok' : '';
  el.hidden = !message;
}

/**
 * Asks before an action: a dialog that says what will change (with its count) and answers true
 * only on its confirm button. No one-click destructive action anywhere in the console.
 */
export function confirmAction(message, label = 'Confirm') {
  return new Promise((resolve) => {
    const dialog = h('dialog', { id: 'confirm' });
    const done = (answer) => { dialog.close(); dialog.remove(); resolve(answer); };
    dialog.append(
      h('p', { id: 'confirm-text' }, message),
      h('div', { class: 'toolbar' },
        h('button', { type: 'button', id: 'confirm-ok', class: 'act danger', onclick: () => done(true) }, label),
        h('button', { type: 'button', id: 'confirm-cancel', onclick: () => done(false) }, 'Cancel')));
    dialog.addEventListener('cancel', () => done(false));
    document.body.append(dialog);
    dialog.showModal();
  });
}

/**
 * An action button, for admins only: a viewer gets nothing. With {@code confirm} (a text, or a
 * function answering one, or null to go ahead) the action runs only after the dialog says yes.
 */
export function actionButton(label, action, run, danger = false, confirm = null) {
  if (!session.admin) return null;
  const button = h('button', { class: 'act' + (danger ? ' danger' : ''), 'data-action': action, type: 'button' }, label);
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const text = typeof confirm === 'function' ? await confirm() : confirm;
      if (text && !(await confirmAction(text, label))) return;
      await run();
    } catch (e) {
      flash(`${label} failed: ${e.message}`);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

/** What each job action changes, as the admin API applies it (docs/admin-api.md, Actions). */
export const JOB_ACTIONS = [
  { label: 'Replay', action: 'replay', states: ['dead'], danger: false },
  { label: 'Retry now', action: 'retry', states: ['scheduled', 'retryable'], danger: false },
  { label: 'Cancel', action: 'cancel', states: ['scheduled', 'available', 'retryable'], danger: true },
  { label: 'Delete', action: 'delete', states: ['completed', 'dead', 'cancelled'], danger: true },
];

/** "3 jobs", "1 job". */
export function jobs(n) {
  return `${n} job${n === 1 ? '' : 's'}`;
}

export const STATES = ['scheduled', 'available', 'running', 'retryable', 'completed', 'dead', 'cancelled'];

const FINAL = ['completed', 'dead', 'cancelled'];

/**
 * A table of jobs. {@code opts.selected} (a Set of ids) adds a checkbox per row and one for the
 * page (admins only); {@code opts.onSelect} is told of every change. {@code opts.state} is the
 * state the list shows, if one: a dead list shows when each job died. {@code opts.rowAction(job)}
 * may add a button to a row (Cancel of a running job).
 */
export function jobTable(list, opts = {}) {
  const selectable = session.admin && opts.selected;
  const whenHead = opts.state === 'dead' ? 'died at' : FINAL.includes(opts.state) ? 'finished at' : 'run at / finished';
  const boxes = [];
  const all = selectable ? h('input', { type: 'checkbox', id: 'select-page', title: 'Select every job of this page' }) : null;
  if (all) {
    all.checked = list.length > 0 && list.every((j) => opts.selected.has(j.id));
    all.addEventListener('change', () => {
      for (const [id, box] of boxes) {
        box.checked = all.checked;
        if (all.checked) opts.selected.add(id); else opts.selected.delete(id);
      }
      opts.onSelect && opts.onSelect();
    });
  }
  const row = (j) => {
    let box = null;
    if (selectable) {
      box = h('input', { type: 'checkbox', class: 'select-job', 'data-job-id': j.id, 'data-state': j.state });
      box.checked = opts.selected.has(j.id);
      box.addEventListener('change', () => {
        if (box.checked) opts.selected.add(j.id); else opts.selected.delete(j.id);
        all.checked = list.every((x) => opts.selected.has(x.id));
        opts.onSelect && opts.onSelect();
      });
      boxes.push([j.id, box]);
    }
    const ended = FINAL.includes(j.state);
    return h('tr', { 'data-job-id': j.id, 'data-state': j.state },
      selectable ? h('td', {}, box) : null,
      h('td', {}, h('a', { href: '#/job/' + j.id }, j.id)),
      h('td', {}, h('a', { href: '#/queue/' + encodeURIComponent(j.queue) }, j.queue)),
      h('td', {}, stateBadge(j.state)),
      h('td', { class: 'num' }, attempts(j)),
      h('td', {}, when(j.createdAt)),
      h('td', { class: 'when-col' }, ended ? when(j.finalizedAt) : when(j.runAt)),
      h('td', { class: 'muted' }, (j.lastError || '').split('\n')[0].slice(0, 120)),
      opts.rowAction ? h('td', {}, opts.rowAction(j)) : null);
  };
  return h('table', { class: 'jobs' },
    h('thead', {}, h('tr', {}, selectable ? h('th', {}, all) : null,
      ['id', 'queue', 'state', 'attempt', 'created', whenHead, 'last error'].map((t) => h('th', {}, t)),
      opts.rowAction ? h('th', {}, '') : null)),
    h('tbody', {}, list.map(row)));
}

/** "2/3", or after a replay "1/3 (+3)": this run's attempt of its budget, and those before it. */
export function attempts(j) {
  const before = j.attemptsBeforeReplay || 0;
  return `${j.attempt - before}/${j.maxAttempts - before}` + (before ? ` (+${before})` : '');
}
