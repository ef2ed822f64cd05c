// Layout cases of the dashboard grid, shared by the unit test of grid.ts (tests/ui/dashboard-grid)
// and the API test (tests/api/dashboards), which makes the service place the same boxes and checks
// it stored what the page computes.
import type { Box, Cells } from '../../service/src/dashboards/grid.ts';

export interface PlaceCase {
  name: string;
  layout: Box[];
  /** The widget placed (moved, resized, or new with its id). */
  placed: Box;
  /** Every box afterwards, by id. */
  expect: Record<string, Cells>;
}

const box = (id: string, pos_x: number, pos_y: number, width: number, height: number): Box => ({ id, pos_x, pos_y, width, height });
const cells = (pos_x: number, pos_y: number, width: number, height: number): Cells => ({ pos_x, pos_y, width, height });

export const PLACE_CASES: PlaceCase[] = [
  {
    name: 'a move into free cells moves nothing else',
    layout: [box('a', 0, 0, 6, 4), box('b', 6, 0, 6, 4)],
    placed: box('a', 0, 4, 6, 4),
    expect: { a: cells(0, 4, 6, 4), b: cells(6, 0, 6, 4) },
  },
  {
    name: 'a widget dropped onto another pushes it down just below',
    layout: [box('a', 0, 0, 6, 4), box('b', 6, 0, 6, 4)],
    placed: box('a', 6, 0, 6, 4),
    expect: { a: cells(6, 0, 6, 4), b: cells(6, 4, 6, 4) },
  },
  {
    name: 'a push cascades down a column',
    layout: [box('a', 0, 0, 12, 2), box('b', 0, 2, 6, 3), box('c', 0, 5, 4, 2), box('d', 6, 2, 6, 3)],
    placed: box('a', 0, 0, 12, 4),
    expect: { a: cells(0, 0, 12, 4), b: cells(0, 4, 6, 3), c: cells(0, 7, 4, 2), d: cells(6, 4, 6, 3) },
  },
  {
    name: 'a widget moved up pushes the one it lands on below itself',
    layout: [box('a', 0, 0, 6, 3), box('b', 0, 3, 6, 3), box('c', 0, 6, 6, 2)],
    placed: box('c', 0, 0, 6, 2),
    expect: { c: cells(0, 0, 6, 2), a: cells(0, 2, 6, 3), b: cells(0, 5, 6, 3) },
  },
  {
    name: 'a resize wider takes the neighbour’s cells; the neighbour goes below',
    layout: [box('a', 0, 0, 4, 3), box('b', 4, 0, 4, 3), box('c', 8, 0, 4, 3)],
    placed: box('a', 0, 0, 8, 3),
    expect: { a: cells(0, 0, 8, 3), b: cells(4, 3, 4, 3), c: cells(8, 0, 4, 3) },
  },
  {
    name: 'a new widget between two: the boxes below settle top first, each against those above it',
    layout: [box('a', 0, 0, 6, 2), box('b', 0, 2, 6, 2), box('c', 0, 6, 6, 2)],
    placed: box('n', 0, 1, 6, 2),
    expect: { a: cells(0, 3, 6, 2), b: cells(0, 5, 6, 2), c: cells(0, 7, 6, 2), n: cells(0, 1, 6, 2) },
  },
];
