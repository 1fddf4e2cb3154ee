// Why a job is where it is (GET jobs/{id}/explain; docs/explain.md): its reasons, most blocking
// first, each with its sentence, the action that would unblock it, when it resolves by itself and
// the evidence behind it (folded). A module of its own, so that the job page needs one hook.
import { get, h, when } from './core.js';

/** Fills box with the job's reasons; empties it when the job is gone. */
export async function renderReasons(box, id) {
  let e;
  try {
    e = await get('jobs/' + encodeURIComponent(id) + '/explain');
  } catch (err) {
    if (err.status === 404) {
      box.replaceChildren();
      return;
    }
    throw err;
  }
  box.replaceChildren(h('h2', {}, 'Why'),
    h('ul', { class: 'reasons', id: 'job-reasons-list' }, ...e.reasons.map(reason)));
}

function reason(r) {
  return h('li', { class: 'card reason', 'data-code': r.code },
    h('div', {}, h('code', { class: 'reason-code' }, r.code), ' ', r.sentence),
    r.error ? h('div', { class: 'error-text' }, r.error) : null,
    r.action ? h('div', { class: 'reason-action' }, h('strong', {}, 'To unblock: '), r.action) : null,
    r.resolvesAt ? h('div', { class: 'muted' }, 'Resolves by itself by ', when(r.resolvesAt)) : null,
    h('details', {}, h('summary', {}, 'Evidence'), h('pre', {}, pretty(r.evidence))));
}

function pretty(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch (e) { return String(text); }
}
