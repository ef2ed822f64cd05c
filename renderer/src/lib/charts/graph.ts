// Node-link data for graph (parent → child), mesh (src → dst edge list) and pgraph (`pgr` rows), and a
// small deterministic force layout (links pull, nodes push apart, a weak pull to the middle keeps separate
// pieces on screen). Pure: tests/ui/charts.test.ts.
import type { ChartSpec } from './spec.ts';
import { toNumber, type Row } from './values.ts';
import { cellText } from '../search/export.ts';

type GraphSpec = Extract<ChartSpec, { kind: 'graph' }>;

export interface GNode {
  id: string;
  /** What the node shows under it: its description (label columns) or its id. */
  label: string;
  /** The field a click on this node filters on, and the value. */
  field: string;
  details: Array<[string, string]>;
  /** Mesh: sum of the size column over its edges; else its degree. */
  size: number;
  inDeg: number;
  outDeg: number;
  role: 'source' | 'target' | 'both';
  /** pgraph: highest anomaly score of an edge into it. */
  score: number | null;
  focus: boolean;
}

export interface GEdge {
  source: number;
  target: number;
  weight: number;
  /** Rows merged into this edge. */
  rows: number;
  colorKey: string | null;
  type: string | null;
  score: number | null;
}

export interface GraphData {
  nodes: GNode[];
  edges: GEdge[];
  /** Edges past the renderer's limit (§4). */
  hiddenEdges: number;
  totalEdges: number;
}

/**
 * Nodes and edges of a result. Rows with the same source and destination become one edge (weights add up);
 * the limit keeps the heaviest edges for mesh and the first ones (result order) for graph and pgraph.
 * A row with an empty source still brings its destination node (a root of the tree).
 */
export function buildGraph(rows: readonly Row[], spec: GraphSpec): GraphData {
  interface E {
    src: string;
    dst: string;
    weight: number;
    size: number;
    rows: number;
    order: number;
    colorKey: string | null;
    type: string | null;
    score: number | null;
  }
  const edges = new Map<string, E>();
  const describe = new Map<string, Array<[string, string]>>();
  const lone: string[] = [];
  for (const r of rows) {
    const src = cellText(r[spec.srcCol]);
    const dst = cellText(r[spec.dstCol]);
    if (dst !== '' && !describe.has(dst)) {
      const d = spec.labelCols.map((c): [string, string] => [c, cellText(r[c])]).filter(([, v]) => v !== '');
      describe.set(dst, d);
    }
    if (spec.srcLabelCol && src !== '' && !describe.has(src)) {
      const v = cellText(r[spec.srcLabelCol]);
      if (v !== '') describe.set(src, [[spec.srcLabelCol, v]]);
    }
    if (src === '' || dst === '') {
      if (dst !== '') lone.push(dst);
      else if (src !== '') lone.push(src);
      continue;
    }
    const key = `${src}\u0000${dst}`;
    const w = spec.weightCol ? (toNumber(r[spec.weightCol]) ?? 0) : 1;
    const s = spec.sizeCol ? (toNumber(r[spec.sizeCol]) ?? 0) : 1;
    const score = spec.scoreCol ? toNumber(r[spec.scoreCol]) : null;
    const seen = edges.get(key);
    if (seen) {
      seen.weight += w;
      seen.size += s;
      seen.rows++;
      if (score !== null && (seen.score === null || score > seen.score)) seen.score = score;
    } else {
      edges.set(key, {
        src,
        dst,
        weight: w,
        size: s,
        rows: 1,
        order: edges.size,
        colorKey: spec.colorCol ? cellText(r[spec.colorCol]) : null,
        type: spec.typeCol ? cellText(r[spec.typeCol]) : null,
        score,
      });
    }
  }
  let list = [...edges.values()];
  const totalEdges = list.length;
  if (list.length > spec.limit) {
    list = spec.variant === 'mesh' ? [...list].sort((a, b) => b.weight - a.weight || a.order - b.order).slice(0, spec.limit) : list.slice(0, spec.limit);
    list.sort((a, b) => a.order - b.order);
  }
  const index = new Map<string, number>();
  const nodes: GNode[] = [];
  const srcField = spec.srcCol;
  const dstField = spec.dstCol;
  const node = (id: string): number => {
    let i = index.get(id);
    if (i === undefined) {
      i = nodes.length;
      index.set(id, i);
      const details = describe.get(id) ?? [];
      nodes.push({
        id,
        label: details.length ? details.map(([, v]) => v).join(' · ') : id,
        field: dstField,
        details,
        size: 0,
        inDeg: 0,
        outDeg: 0,
        role: 'target',
        score: null,
        focus: spec.focus !== null && id === spec.focus,
      });
    }
    return i;
  };
  const out: GEdge[] = list.map((e) => {
    const s = node(e.src);
    const t = node(e.dst);
    nodes[s]!.outDeg++;
    nodes[t]!.inDeg++;
    if (spec.sizeCol) {
      nodes[s]!.size += e.size;
      if (t !== s) nodes[t]!.size += e.size;
    }
    if (e.score !== null) {
      const n = nodes[t]!;
      if (n.score === null || e.score > n.score) n.score = e.score;
    }
    return { source: s, target: t, weight: e.weight, rows: e.rows, colorKey: e.colorKey, type: e.type, score: e.score };
  });
  if (list.length === totalEdges) for (const id of lone) node(id);
  for (const n of nodes) {
    n.role = n.outDeg > 0 && n.inDeg > 0 ? 'both' : n.outDeg > 0 ? 'source' : 'target';
    // A node that only ever appears as a source is filtered by the source field.
    n.field = n.inDeg === 0 && n.outDeg > 0 ? srcField : dstField;
    if (!spec.sizeCol) n.size = n.inDeg + n.outDeg;
  }
  return { nodes, edges: out, hiddenEdges: totalEdges - list.length, totalEdges };
}

// ---- force layout -----------------------------------------------------------------------------------------

export interface LayoutState {
  n: number;
  x: Float64Array;
  y: Float64Array;
  vx: Float64Array;
  vy: Float64Array;
  links: Array<{ s: number; t: number; strength: number; bias: number; distance: number }>;
  alpha: number;
  alphaDecay: number;
  alphaMin: number;
  charge: number;
  /** Pairs farther apart than this do not push (keeps big graphs fast). */
  distanceMax: number;
  gravity: number;
  ticks: number;
}

export interface LayoutOptions {
  /** Rest length of a link. */
  distance?: number;
  /** Repulsion (negative pushes apart). */
  charge?: number;
  iterations?: number;
  /** Per edge, multiplies the pull (heavier edges pull closer). */
  edgeStrength?: readonly number[];
}

/** Start positions on a sunflower spiral (deterministic, no overlaps), links weighted like d3-force. */
export function initLayout(n: number, edges: ReadonlyArray<{ source: number; target: number }>, opts: LayoutOptions = {}): LayoutState {
  const x = new Float64Array(n);
  const y = new Float64Array(n);
  const golden = Math.PI * (3 - Math.sqrt(5));
  const distance = opts.distance ?? 40;
  for (let i = 0; i < n; i++) {
    const r = distance * 0.5 * Math.sqrt(i + 0.5);
    x[i] = r * Math.cos(i * golden);
    y[i] = r * Math.sin(i * golden);
  }
  const degree = new Float64Array(n);
  for (const e of edges) {
    degree[e.source]++;
    degree[e.target]++;
  }
  const links = edges
    .map((e, i) => ({ e, i }))
    .filter(({ e }) => e.source !== e.target)
    .map(({ e, i }) => {
      const ds = degree[e.source];
      const dt = degree[e.target];
      return {
        s: e.source,
        t: e.target,
        strength: (opts.edgeStrength?.[i] ?? 1) / Math.max(1, Math.min(ds, dt)),
        bias: ds / (ds + dt),
        distance,
      };
    });
  const iterations = opts.iterations ?? 300;
  return {
    n,
    x,
    y,
    vx: new Float64Array(n),
    vy: new Float64Array(n),
    links,
    alpha: 1,
    alphaMin: 0.001,
    alphaDecay: 1 - 0.001 ** (1 / iterations),
    charge: opts.charge ?? -distance * 3,
    distanceMax: distance * 8,
    gravity: 0.04,
    ticks: 0,
  };
}

/** One tick: link springs, many-body repulsion, gravity, velocity decay. Returns the new alpha. */
export function layoutStep(st: LayoutState): number {
  const { n, x, y, vx, vy } = st;
  const alpha = st.alpha;
  for (const l of st.links) {
    let dx = x[l.t] + vx[l.t] - x[l.s] - vx[l.s];
    let dy = y[l.t] + vy[l.t] - y[l.s] - vy[l.s];
    if (dx === 0 && dy === 0) {
      dx = 1e-3 * ((l.s % 7) - 3 || 1);
      dy = 1e-3 * ((l.t % 5) - 2 || 1);
    }
    const d = Math.sqrt(dx * dx + dy * dy);
    const k = ((d - l.distance) / d) * alpha * Math.min(1, l.strength);
    dx *= k;
    dy *= k;
    vx[l.t] -= dx * l.bias;
    vy[l.t] -= dy * l.bias;
    vx[l.s] += dx * (1 - l.bias);
    vy[l.s] += dy * (1 - l.bias);
  }
  const max2 = st.distanceMax * st.distanceMax;
  const push = (i: number, j: number) => {
    let dx = x[j] - x[i];
    let dy = y[j] - y[i];
    let d2 = dx * dx + dy * dy;
    if (d2 >= max2) return;
    if (d2 < 1e-6) {
      dx = ((i * 7 + j * 3) % 11) - 5 || 1;
      dy = ((i * 5 + j * 13) % 7) - 3 || 1;
      d2 = dx * dx + dy * dy;
    }
    // d3's many-body force, softened near zero so overlapping nodes do not explode.
    const w = (st.charge * alpha) / Math.max(d2, 25);
    vx[i] += dx * w;
    vy[i] += dy * w;
    vx[j] -= dx * w;
    vy[j] -= dy * w;
  };
  if (n <= 400) {
    for (let i = 0; i < n; i++) for (let j = i + 1; j < n; j++) push(i, j);
  } else {
    // A grid of cells one distanceMax wide: only neighbouring cells can be close enough to push.
    const cell = st.distanceMax;
    const grid = new Map<string, number[]>();
    for (let i = 0; i < n; i++) {
      const key = `${Math.floor(x[i] / cell)},${Math.floor(y[i] / cell)}`;
      let b = grid.get(key);
      if (!b) grid.set(key, (b = []));
      b.push(i);
    }
    for (let i = 0; i < n; i++) {
      const cx = Math.floor(x[i] / cell);
      const cy = Math.floor(y[i] / cell);
      for (let gx = cx - 1; gx <= cx + 1; gx++)
        for (let gy = cy - 1; gy <= cy + 1; gy++) {
          const b = grid.get(`${gx},${gy}`);
          if (b) for (const j of b) if (j > i) push(i, j);
        }
    }
  }
  for (let i = 0; i < n; i++) {
    vx[i] -= x[i] * st.gravity * alpha;
    vy[i] -= y[i] * st.gravity * alpha;
    vx[i] *= 0.6;
    vy[i] *= 0.6;
    x[i] += vx[i];
    y[i] += vy[i];
  }
  st.ticks++;
  st.alpha += (0 - st.alpha) * st.alphaDecay;
  return st.alpha;
}

/** Runs the layout to rest; positions in layout units around (0, 0). */
export function forceLayout(
  n: number,
  edges: ReadonlyArray<{ source: number; target: number }>,
  opts: LayoutOptions = {},
): { x: Float64Array; y: Float64Array; ticks: number } {
  const st = initLayout(n, edges, opts);
  if (n > 1) while (st.alpha > st.alphaMin) layoutStep(st);
  return { x: st.x, y: st.y, ticks: st.ticks };
}

/**
 * Positions scaled into a w × h box with `pad` around, centred: uniformly, then stretched along the box's
 * longer side by up to `maxStretch` (a round layout fills a wide chart), never enlarged past `maxScale`
 * (three nodes do not spread over a whole screen). `scale` is the smaller of the two factors.
 */
export function fitPositions(
  x: ArrayLike<number>,
  y: ArrayLike<number>,
  w: number,
  h: number,
  pad: number,
  maxScale = 2.5,
  maxStretch = 1.6,
): { x: number[]; y: number[]; scale: number } {
  const n = x.length;
  if (n === 0) return { x: [], y: [], scale: 1 };
  let x0 = Infinity;
  let x1 = -Infinity;
  let y0 = Infinity;
  let y1 = -Infinity;
  for (let i = 0; i < n; i++) {
    x0 = Math.min(x0, x[i]!);
    x1 = Math.max(x1, x[i]!);
    y0 = Math.min(y0, y[i]!);
    y1 = Math.max(y1, y[i]!);
  }
  const iw = Math.max(1, w - 2 * pad);
  const ih = Math.max(1, h - 2 * pad);
  const fx = x1 > x0 ? iw / (x1 - x0) : Infinity;
  const fy = y1 > y0 ? ih / (y1 - y0) : Infinity;
  const scale = Math.min(maxScale, fx, fy);
  const sx = Math.min(fx, maxScale, scale * maxStretch);
  const sy = Math.min(fy, maxScale, scale * maxStretch);
  const mx = (x0 + x1) / 2;
  const my = (y0 + y1) / 2;
  const ox = [];
  const oy = [];
  for (let i = 0; i < n; i++) {
    ox.push(w / 2 + (x[i]! - mx) * sx);
    oy.push(h / 2 + (y[i]! - my) * sy);
  }
  return { x: ox, y: oy, scale };
}
