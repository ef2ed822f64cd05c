// The dashboard grid's rule (service/src/dashboards/grid.ts), through the renderer's import of it:
// the page and the service run this one module, and tests/api/dashboards.test.ts checks the
// service stores the same cases the same way.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  cellsProblem,
  clampCells,
  freeCells,
  GRID_COLUMNS,
  movedBoxes,
  overlaps,
  placeBox,
  settleLayout,
  type Box,
} from '../../renderer/src/lib/dashboards/grid.ts';
import { PLACE_CASES } from '../support/grid-cases.ts';

const noOverlap = (layout: Box[]) => {
  for (const [i, a] of layout.entries()) for (const b of layout.slice(i + 1)) assert.ok(!overlaps(a, b), `${a.id} and ${b.id} overlap: ${JSON.stringify([a, b])}`);
};

describe('dashboard grid', () => {
  for (const c of PLACE_CASES) {
    test(c.name, () => {
      const after = placeBox(c.layout, c.placed);
      assert.deepEqual(Object.fromEntries(after.map(({ id, ...cells }) => [id, cells])), c.expect);
      noOverlap(after);
      const known = c.layout.some((b) => b.id === c.placed.id);
      assert.deepEqual(after.map((b) => b.id), known ? c.layout.map((b) => b.id) : [...c.layout.map((b) => b.id), c.placed.id], 'the order of the layout is kept');
    });
  }

  test('random layouts: the placed box keeps its cells, nothing overlaps, nothing moves up or sideways', () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 500; round++) {
      const layout = settleLayout(
        Array.from({ length: 1 + rnd(12) }, (_, i) => {
          const width = 1 + rnd(GRID_COLUMNS);
          return { id: `w${i}`, width, height: 1 + rnd(6), pos_x: rnd(GRID_COLUMNS - width + 1), pos_y: rnd(12) };
        }),
      );
      noOverlap(layout);
      const target = layout[rnd(layout.length)]!;
      const width = 1 + rnd(GRID_COLUMNS);
      const placed = { id: target.id, width, height: 1 + rnd(6), pos_x: rnd(GRID_COLUMNS - width + 1), pos_y: rnd(14) };
      const after = placeBox(layout, placed);
      noOverlap(after);
      assert.deepEqual(after.find((b) => b.id === placed.id), placed);
      for (const b of after) {
        const was = layout.find((x) => x.id === b.id)!;
        if (b.id === placed.id) continue;
        assert.equal(b.pos_x, was.pos_x);
        assert.equal(b.width, was.width);
        assert.ok(b.pos_y >= was.pos_y, 'pushed down, never up');
      }
      assert.deepEqual(
        movedBoxes(layout, after).map((b) => b.id).sort(),
        after.filter((b) => JSON.stringify(b) !== JSON.stringify(layout.find((x) => x.id === b.id))).map((b) => b.id).sort(),
      );
    }
  });

  test('settling a layout keeps the first of two overlapping boxes and moves the later one down', () => {
    const settled = settleLayout([
      { id: 'b', pos_x: 0, pos_y: 1, width: 6, height: 2 },
      { id: 'a', pos_x: 0, pos_y: 0, width: 6, height: 2 },
      { id: 'c', pos_x: 6, pos_y: 0, width: 6, height: 2 },
    ]);
    assert.deepEqual(settled.map((b) => [b.id, b.pos_y]), [['b', 2], ['a', 0], ['c', 0]]);
  });

  test('a new box without cells goes to the first free cells, top row first', () => {
    assert.deepEqual(freeCells([], 6, 4), { pos_x: 0, pos_y: 0, width: 6, height: 4 });
    assert.deepEqual(freeCells([{ pos_x: 0, pos_y: 0, width: 6, height: 4 }], 6, 4), { pos_x: 6, pos_y: 0, width: 6, height: 4 });
    assert.deepEqual(freeCells([{ pos_x: 0, pos_y: 0, width: 8, height: 2 }], 6, 4), { pos_x: 0, pos_y: 2, width: 6, height: 4 });
  });

  test('cells off the grid are named; a drag is clamped onto it', () => {
    assert.equal(cellsProblem({ pos_x: 0, pos_y: 0, width: 12, height: 4 }), null);
    assert.match(cellsProblem({ pos_x: 11, pos_y: 0, width: 2, height: 4 })!, /right edge.*"pos_x" 11 plus "width" 2/);
    assert.match(cellsProblem({ pos_x: 0, pos_y: 0, width: 13, height: 4 })!, /"width" must be from 1 to 12/);
    assert.match(cellsProblem({ pos_x: -1, pos_y: 0, width: 2, height: 4 })!, /"pos_x" must be from 0 to 11/);
    assert.match(cellsProblem({ pos_x: 0, pos_y: 0, width: 2, height: 0 })!, /"height" must be from 1/);
    assert.match(cellsProblem({ pos_x: 1.5, pos_y: 0, width: 2, height: 1 })!, /"pos_x" must be a whole number/);
    assert.match(cellsProblem({ pos_x: 0, pos_y: 0, width: '2' as never, height: 1 }, 'widgets[3].')!, /"widgets\[3\]\.width" must be a whole number/);
    assert.deepEqual(clampCells({ pos_x: 10.6, pos_y: -2, width: 4.2, height: 0.4 }), { pos_x: 8, pos_y: 0, width: 4, height: 1 });
  });
});
