// A workflow's graph as SVG, drawn here without a library: a layered layout (a node's layer is the
// longest path to it from a root, so every edge points to the right), nodes as boxes with their
// name, queue, job id and state in words (not colour alone), edges as arrows: success solid,
// failure dashed and labelled "on failure", result labelled with its predicate, and an edge not
// taken greyed. Every node is a link to its job page, reachable with the Tab key.
// layout() is a pure function of the answer of GET workflows/{id}; draw() builds the SVG from it.

const SVG = 'http://www.w3.org/2000/svg';

/** Box and gap sizes in SVG units (CSS pixels at 100 %). */
export const BOX = { width: 190, height: 62, column: 150, row: 24, margin: 16 };

/** A predicate longer than this is cut on its label; the edge's tooltip has it whole. */
const LABEL_CHARS = 24;

/**
 * Positions for the nodes and the edges between them: {nodes: [{...node, layer, x, y}], edges:
 * [{...edge, x1, y1, x2, y2}], width, height}. An edge to or from a node the answer left out (past
 * its first 1,000) is dropped; a cycle, which the enqueue refuses, would put its nodes one layer
 * past the others rather than loop.
 */
export function layout(nodes, edges) {
  const byId = new Map(nodes.map((n) => [n.job, n]));
  const kept = edges.filter((e) => byId.has(e.from) && byId.has(e.to) && e.from !== e.to);
  const parents = new Map(nodes.map((n) => [n.job, []]));
  const children = new Map(nodes.map((n) => [n.job, []]));
  for (const e of kept) {
    parents.get(e.to).push(e.from);
    children.get(e.from).push(e.to);
  }
  // Kahn's order; the layer of a node is one past the deepest of its parents.
  const layer = new Map();
  const pending = new Map(nodes.map((n) => [n.job, parents.get(n.job).length]));
  const ready = nodes.filter((n) => pending.get(n.job) === 0).map((n) => n.job);
  for (const id of ready) layer.set(id, 0);
  while (ready.length > 0) {
    const id = ready.shift();
    for (const c of children.get(id)) {
      layer.set(c, Math.max(layer.get(c) ?? 0, layer.get(id) + 1));
      pending.set(c, pending.get(c) - 1);
      if (pending.get(c) === 0) ready.push(c);
    }
  }
  const deepest = Math.max(-1, ...layer.values());
  for (const n of nodes) if (!layer.has(n.job)) layer.set(n.job, deepest + 1);

  // Within a layer: by the mean row of the parents (fewer crossings), then by job id.
  const columns = [];
  for (const n of nodes) (columns[layer.get(n.job)] ||= []).push(n.job);
  const row = new Map();
  for (const column of columns) {
    if (!column) continue;
    const key = (id) => {
      const rows = parents.get(id).filter((p) => row.has(p)).map((p) => row.get(p));
      return rows.length ? rows.reduce((a, b) => a + b, 0) / rows.length : -1;
    };
    column.sort((a, b) => key(a) - key(b) || byNumber(a, b));
    column.forEach((id, i) => row.set(id, i));
  }
  const tallest = Math.max(1, ...columns.map((c) => (c ? c.length : 0)));
  const height = BOX.margin * 2 + tallest * BOX.height + (tallest - 1) * BOX.row;
  const placed = new Map();
  for (const n of nodes) {
    const l = layer.get(n.job);
    // Each column centred on the tallest one.
    const offset = ((tallest - columns[l].length) * (BOX.height + BOX.row)) / 2;
    placed.set(n.job, {
      ...n, layer: l,
      x: BOX.margin + l * (BOX.width + BOX.column),
      y: BOX.margin + offset + row.get(n.job) * (BOX.height + BOX.row),
    });
  }
  const width = BOX.margin * 2 + columns.length * BOX.width + Math.max(0, columns.length - 1) * BOX.column;
  return {
    nodes: nodes.map((n) => placed.get(n.job)),
    edges: kept.map((e) => {
      const a = placed.get(e.from);
      const b = placed.get(e.to);
      return { ...e, x1: a.x + BOX.width, y1: a.y + BOX.height / 2, x2: b.x, y2: b.y + BOX.height / 2 };
    }),
    width: Math.max(width, 2 * BOX.margin + BOX.width),
    height,
  };
}

function byNumber(a, b) {
  return Number(a) - Number(b) || String(a).localeCompare(String(b));
}

/** What a node's state says in words; a pruned member (no job row left) has none. */
export function stateText(state) {
  return state || 'pruned';
}

/** An edge's label: "on failure", its predicate, or nothing for a plain success edge. */
export function edgeLabel(e) {
  if (e.kind === 'failure') return 'on failure';
  if (e.kind === 'result') {
    const p = String(e.predicate ?? '');
    return p.length > LABEL_CHARS ? p.slice(0, LABEL_CHARS - 1) + '…' : p;
  }
  return '';
}

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, v);
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

/** "charge" cut to fit a box's line. */
function fit(text, chars) {
  const t = String(text ?? '');
  return t.length > chars ? t.slice(0, chars - 1) + '…' : t;
}

/** The SVG of a layout; {@code jobHref(id)} is each node's link. */
export function draw(g, jobHref) {
  const arrow = (id, cls) => s('marker', { id, viewBox: '0 0 10 10', refX: 9, refY: 5, markerWidth: 8, markerHeight: 8, orient: 'auto' },
    s('path', { d: 'M 0 0 L 10 5 L 0 10 z', class: cls }));
  const edges = g.edges.map((e) => {
    const dx = Math.max(30, (e.x2 - e.x1) / 2);
    const d = `M ${e.x1} ${e.y1} C ${e.x1 + dx} ${e.y1}, ${e.x2 - dx} ${e.y2}, ${e.x2} ${e.y2}`;
    const taken = e.state !== 'not_taken';
    const label = edgeLabel(e);
    const describe = `${e.from} → ${e.to}: ${e.kind}${e.predicate ? ' ' + e.predicate : ''}, ${e.state.replace('_', ' ')}`;
    return s('g', { class: `edge ${e.kind} ${taken ? '' : 'not-taken'} edge-${e.state}`, 'data-from': e.from, 'data-to': e.to,
      'data-kind': e.kind, 'data-state': e.state },
    s('title', {}, describe),
    s('path', { d, 'marker-end': `url(#${taken ? 'wf-arrow' : 'wf-arrow-muted'})` }),
    label ? s('text', { class: 'edge-label', x: (e.x1 + e.x2) / 2, y: (e.y1 + e.y2) / 2 - 6, 'text-anchor': 'middle' }, label) : null);
  });
  const nodes = g.nodes.map((n) => {
    const state = stateText(n.state);
    // A job a member's handler enqueued joins the workflow without a node name.
    const name = n.node ?? '(fan-out)';
    return s('a', { href: jobHref(n.job), class: `node state-${state}`, 'data-job-id': n.job, 'data-state': state,
      'data-node': n.node, 'aria-label': `${name}: job ${n.job} on queue ${n.queue}, ${state}` },
    s('title', {}, `${name} · job ${n.job} · ${n.queue} · ${state}`),
    s('rect', { x: n.x, y: n.y, width: BOX.width, height: BOX.height, rx: 6 }),
    s('text', { class: 'node-name', x: n.x + 10, y: n.y + 19 }, fit(name, 24)),
    s('text', { class: 'node-meta', x: n.x + 10, y: n.y + 36 }, fit(`${n.queue} · #${n.job}`, 30)),
    s('text', { class: 'node-state', x: n.x + 10, y: n.y + 53 }, state));
  });
  return s('svg', { id: 'wf-svg', xmlns: SVG, width: g.width, height: g.height, viewBox: `0 0 ${g.width} ${g.height}`,
    role: 'group', 'aria-label': `Workflow graph: ${g.nodes.length} jobs, ${g.edges.length} edges` },
  s('defs', {}, arrow('wf-arrow', 'arrow-head'), arrow('wf-arrow-muted', 'arrow-head muted')),
  s('g', { class: 'edges' }, edges), s('g', { class: 'nodes' }, nodes));
}
