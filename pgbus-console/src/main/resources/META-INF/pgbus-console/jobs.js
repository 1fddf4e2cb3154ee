// Job search: queue, handler (the queues its @Handles bean is bound to), state, id, unique key, payload containment, error text and creation time,
// with keyset paging, selection and bulk actions (paging.js). The form's values live in the URL, so a search can be bookmarked and shared.
import { get, h, flash, STATES } from './core.js';
import { pagedJobs } from './paging.js';

const FIELDS = ['queue', 'handler', 'state', 'id', 'uniqueKey', 'payload', 'error', 'createdFrom', 'createdTo'];

export async function render(view, _arg, params) {
  const input = (name, label, placeholder) =>
    h('label', {}, label, h('input', { id: 'f-' + name, name, placeholder, value: params.get(name) || '' }));
  const state = h('select', { id: 'f-state', name: 'state' },
    h('option', { value: '' }, 'any'),
    STATES.map((s) => h('option', { value: s, selected: params.get('state') === s }, s)));
  const form = h('form', { class: 'search card', id: 'search' },
    input('queue', 'Queue', 'payments'),
    handlerInput(params.get('handler')),
    h('label', {}, 'State', state),
    input('id', 'Job id', '1042'),
    input('uniqueKey', 'Unique key', 'order-42'),
    input('payload', 'Payload contains (JSON)', '{"order":42}'),
    input('error', 'Latest error contains', 'SocketTimeoutException'),
    input('createdFrom', 'Created from (ISO-8601)', '2026-12-01T00:00:00Z'),
    input('createdTo', 'Created before (ISO-8601)', ''),
    h('div', {}, h('button', { id: 'f-search', type: 'submit' }, 'Search')));
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    const q = new URLSearchParams();
    for (const f of FIELDS) {
      const v = form.elements[f].value.trim();
      if (v) q.set(f, v);
    }
    location.hash = '#/jobs?' + q.toString();
  });
  const filter = {};
  for (const f of FIELDS) if (params.get(f)) filter[f] = params.get(f);
  const list = pagedJobs(filter);
  view.replaceChildren(h('h1', {}, 'Jobs'), form, list.box);
  try {
    await list.first();
  } catch (e) {
    flash(e.body && e.body.field ? `${e.body.field}: ${e.message}` : e.message);
  }
  // No refresh: a search shows what matched when it ran, and keeps its pages.
  return null;
}

/** The handler field, offering this application's handlers (GET handlers) as suggestions. */
function handlerInput(value) {
  const list = h('datalist', { id: 'handlers' });
  get('handlers').then((r) => list.replaceChildren(...r.handlers.map((x) =>
    h('option', { value: x.handler.slice(x.handler.lastIndexOf('.') + 1) }, x.queues.join(', '))))).catch(() => {});
  return h('label', {}, 'Handler',
    h('input', { id: 'f-handler', name: 'handler', list: 'handlers', placeholder: 'OrderHandler', value: value || '' }), list);
}
