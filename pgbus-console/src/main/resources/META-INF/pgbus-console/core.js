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

/** h('a', {href: '#/x', class: 'y'}, 'text', child): an element; strings become text nodes. */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
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

export function when(iso) {
  if (!iso) return '—';
  const d = new Date(iso);
  return d.toLocaleString(undefined, { hour12: false });
}

export function ago(ms) {
  if (!ms) return '—';
  const s = Math.round(ms / 1000);
  if (s < 60) return s + ' s';
  if (s < 3600) return Math.round(s / 60) + ' min';
  return (s / 3600).toFixed(1) + ' h';
}

export function flash(message, ok = false) {
  const el = document.getElementById('flash');
  el.textContent = message;
  el.className = ok ? 'ok' : '';
  el.hidden = !message;
}

/** An action button, for admins only: a viewer gets nothing. */
export function actionButton(label, action, run, danger = false) {
  if (!session.admin) return null;
  const button = h('button', { class: 'act' + (danger ? ' danger' : ''), 'data-action': action, type: 'button' }, label);
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      await run();
    } catch (e) {
      flash(`${label} failed: ${e.message}`);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

export const STATES = ['scheduled', 'available', 'running', 'retryable', 'completed', 'dead', 'cancelled'];

export function jobTable(jobs) {
  return h('table', { class: 'jobs' },
    h('thead', {}, h('tr', {}, ['id', 'queue', 'state', 'attempt', 'created', 'run at', 'last error'].map((t) => h('th', {}, t)))),
    h('tbody', {}, jobs.map((j) => h('tr', { 'data-job-id': j.id },
      h('td', {}, h('a', { href: '#/job/' + j.id }, j.id)),
      h('td', {}, h('a', { href: '#/queue/' + encodeURIComponent(j.queue) }, j.queue)),
      h('td', {}, stateBadge(j.state)),
      h('td', { class: 'num' }, `${j.attempt}/${j.maxAttempts}`),
      h('td', {}, when(j.createdAt)),
      h('td', {}, when(j.runAt)),
      h('td', { class: 'muted' }, (j.lastError || '').slice(0, 120))))));
}
