// The dashboard grid: 12 columns, rows of one fixed height, a widget a box of whole cells. How
// widgets make room for each other is decided here, once, for the service (which stores the
// layout) and for the page (which shows it while a widget is dragged or resized): the renderer
// imports this very file (renderer/src/lib/dashboards/grid.ts), so both always agree.
// Pure: no Node or DOM; tested in tests/ui/dashboard-grid.test.ts.
//
// The rule: the widget being placed (added, moved, resized) takes exactly the cells asked for.
// Every other widget keeps its cells unless they are taken; then it moves down, row by row, until
// it fits. They are settled from the top (then left to right), each against the placed widget and
// the ones settled before it, so a push can cascade down a column but nothing ever moves up.

export const GRID_COLUMNS = 12;
/** The tallest a widget may be, in rows. */
export const MAX_HEIGHT = 48;
/** The lowest row a request may name; pushes may carry widgets further down. */
export const MAX_ROW = 1000;

export interface Cells {
  pos_x: number;
  pos_y: number;
  width: number;
  height: number;
}

export interface Box extends Cells {
  id: string;
}

/** Why a requested box is not on the grid (a sentence naming the field), or null when it is. */
export function cellsProblem(c: Partial<Cells>, at = ''): string | null {
  const f = (k: string) => `"${at}${k}"`;
  const whole = (k: keyof Cells, min: number, max: number): string | null => {
    const v = c[k];
    if (typeof v !== 'number' || !Number.isInteger(v)) return `The field ${f(k)} must be a whole number.`;
    if (v < min || v > max) return `The field ${f(k)} must be from ${min} to ${max} (the grid has ${GRID_COLUMNS} columns); it is ${v}.`;
    return null;
  };
  const problem =
    whole('width', 1, GRID_COLUMNS) ?? whole('height', 1, MAX_HEIGHT) ?? whole('pos_x', 0, GRID_COLUMNS - 1) ?? whole('pos_y', 0, MAX_ROW);
  if (problem) return problem;
  if (c.pos_x! + c.width! > GRID_COLUMNS) {
    return `The widget reaches past the grid's right edge: ${f('pos_x')} ${c.pos_x} plus ${f('width')} ${c.width} is more than ${GRID_COLUMNS} columns.`;
  }
  return null;
}

/** The nearest box on the grid to what a drag or resize asks for (the page, while the pointer moves). */
export function clampCells(c: Cells): Cells {
  const width = Math.min(GRID_COLUMNS, Math.max(1, Math.round(c.width)));
  const height = Math.min(MAX_HEIGHT, Math.max(1, Math.round(c.height)));
  return {
    width,
    height,
    pos_x: Math.min(GRID_COLUMNS - width, Math.max(0, Math.round(c.pos_x))),
    pos_y: Math.min(MAX_ROW, Math.max(0, Math.round(c.pos_y))),
  };
}

export function overlaps(a: Cells, b: Cells): boolean {
  return a.pos_x < b.pos_x + b.width && b.pos_x < a.pos_x + a.width && a.pos_y < b.pos_y + b.height && b.pos_y < a.pos_y + a.height;
}

const topFirst = (a: Box, b: Box) => a.pos_y - b.pos_y || a.pos_x - b.pos_x || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** `boxes` in order, each moved down as far as it must to clear the ones in `fixed` and those before it. */
function settleAgainst(fixed: Box[], boxes: Box[]): Map<string, Box> {
  const settled = [...fixed];
  const out = new Map<string, Box>();
  for (const b of [...boxes].sort(topFirst)) {
    let y = b.pos_y;
    while (settled.some((s) => overlaps({ ...b, pos_y: y }, s))) y++;
    const placed = y === b.pos_y ? b : { ...b, pos_y: y };
    settled.push(placed);
    out.set(b.id, placed);
  }
  return out;
}

/**
 * The layout after `placed` takes its cells (a new widget, or one moved or resized): every box of
 * `layout` in its order (with `placed` in place of its old self, or appended when new), the others
 * pushed down where they must make room.
 */
export function placeBox(layout: readonly Box[], placed: Box): Box[] {
  const others = layout.filter((b) => b.id !== placed.id);
  const settled = settleAgainst([placed], others);
  const known = layout.some((b) => b.id === placed.id);
  const result = layout.map((b) => (b.id === placed.id ? placed : settled.get(b.id)!));
  return known ? result : [...result, placed];
}

/** A layout without overlaps (an import, a stored layout of unknown origin): top first, later boxes move down. */
export function settleLayout(layout: readonly Box[]): Box[] {
  const settled = settleAgainst([], [...layout]);
  return layout.map((b) => settled.get(b.id)!);
}

/** Where a new box of this size goes when none is asked for: the first free cells, top row first, then left to right. */
export function freeCells(layout: readonly Cells[], width: number, height: number): Cells {
  const w = Math.min(GRID_COLUMNS, Math.max(1, width));
  for (let y = 0; ; y++) {
    for (let x = 0; x + w <= GRID_COLUMNS; x++) {
      const c = { pos_x: x, pos_y: y, width: w, height };
      if (!layout.some((b) => overlaps(c, b))) return c;
    }
  }
}

/** The boxes of `after` whose cells differ from `before` (what a live event needs to tell). */
export function movedBoxes(before: readonly Box[], after: readonly Box[]): Box[] {
  const was = new Map(before.map((b) => [b.id, b]));
  return after.filter((b) => {
    const o = was.get(b.id);
    return !o || o.pos_x !== b.pos_x || o.pos_y !== b.pos_y || o.width !== b.width || o.height !== b.height;
  });
}

/** Rows the layout uses (the grid's height). */
export const layoutRows = (layout: readonly Cells[]): number => layout.reduce((n, b) => Math.max(n, b.pos_y + b.height), 0);
