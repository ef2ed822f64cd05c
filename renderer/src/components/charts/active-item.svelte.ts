// The item a chart highlights (a slice, a place, a node) and how it got there. The mouse highlights
// what it is over and lets go when it leaves; the keyboard steps through the items, has the live region
// read each one out, and holds its item until the chart loses focus.
import { filterKey, stepKey } from './chart-dom.ts';

export class ActiveItem {
  /** Index of the highlighted item, -1 for none. */
  index = $state(-1);
  /** The keyboard, not the mouse, chose it. */
  keyboard = $state(false);
  /** What the live region reads out for the keyboard's item. */
  announce = $state('');

  /** The mouse is over item i. */
  enter(i: number): void {
    this.index = i;
    this.keyboard = false;
  }

  /** The mouse left item i. */
  leave(i: number): void {
    if (this.index === i && !this.keyboard) this.index = -1;
  }

  /** The chart lost focus. */
  blur = (): void => {
    if (this.keyboard) this.index = -1;
    this.keyboard = false;
  };

  /**
   * Arrow keys, Home and End step through the items in `order` (item indices in keyboard order, or
   * the item count when that order is their own) and announce the new one; Escape lets go; Enter,
   * Delete and "-" filter on the highlighted item. Returns whether it stepped.
   */
  keydown(e: KeyboardEvent, order: number | readonly number[], describe: (i: number) => string, fire: (i: number, negate: boolean) => void): boolean {
    const next = typeof order === 'number' ? stepKey(e, this.index, order) : stepKey(e, order.indexOf(this.index), order.length);
    if (next !== null) {
      this.index = typeof order === 'number' ? next : order[next]!;
      this.keyboard = true;
      this.announce = describe(this.index);
      e.preventDefault();
      return true;
    }
    if (e.key === 'Escape') this.index = -1;
    const fk = filterKey(e);
    if (fk && this.index >= 0) {
      fire(this.index, fk.negate);
      e.preventDefault();
    }
    return false;
  }
}
