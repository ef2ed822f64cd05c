// The state the admin pages share: a list read from the service, a form's submission, and the row a
// confirmation dialog asks about (the log detail's comment forms and deletion use the last two). Every refusal keeps the service's sentence (errorMessage) so the page
// can show it where the person acted: the load's above the table, a row action's under its row, a
// form's next to the form.
import { errorMessage } from './api.ts';
import { LatestAnswer } from './latest-answer.ts';

export class ListResource<T extends { id: string }> {
  /** Null until the first load answers. */
  items = $state<T[] | null>(null);
  error = $state<string | null>(null);
  /** The last refusal of an action on a row, by row id. */
  rowErrors = $state<Record<string, string>>({});

  readonly #read: () => Promise<T[]> | null;
  readonly #loaded?: (items: T[]) => void;
  /** A load answering after a newer one (a scoped page switched fractals meanwhile) is dropped. */
  readonly #latest = new LatestAnswer();

  /**
   * `read` returns null when there is nothing to load (a scoped page with no fractal chosen);
   * `loaded` sees each new list in the same step as the page does.
   */
  constructor(read: () => Promise<T[]> | null, loaded?: (items: T[]) => void) {
    this.#read = read;
    this.#loaded = loaded;
  }

  load = async (): Promise<void> => {
    const current = this.#latest.begin();
    const pending = this.#read();
    if (!pending) return;
    this.error = null;
    try {
      const items = await pending;
      if (!current()) return;
      this.items = items;
      this.#loaded?.(items);
    } catch (err) {
      if (current()) this.error = errorMessage(err);
    }
  };

  /** Puts the item the service answered a change with in place of the one it replaces. */
  replace(next: T): void {
    if (this.items) this.items = this.items.map((x) => (x.id === next.id ? next : x));
  }

  /** Runs an action on one row; a refusal goes under that row. Resolves to whether it went through. */
  async act(id: string, call: () => Promise<unknown>): Promise<boolean> {
    delete this.rowErrors[id];
    try {
      await call();
      return true;
    } catch (err) {
      this.rowErrors[id] = errorMessage(err);
      return false;
    }
  }
}

/** A create form's submission: busy while it runs (the button says so), then the refusal, if any. */
export class Submission {
  busy = $state(false);
  error = $state<string | null>(null);

  async run(work: () => Promise<unknown>): Promise<void> {
    this.busy = true;
    this.error = null;
    try {
      await work();
    } catch (err) {
      this.error = errorMessage(err);
    } finally {
      this.busy = false;
    }
  }
}

/** The row a confirmation dialog asks about; `open` is bound to the dialog. */
export class Confirmation<T> {
  target = $state<T | null>(null);
  open = $state(false);

  ask = (target: T): void => {
    this.target = target;
    this.open = true;
  };
}
