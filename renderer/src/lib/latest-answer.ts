// "Latest answer wins": a list, catalog or query loaded again before the last load answered (the
// scope, a filter or the text changed meanwhile) must show the newest load's answer, not whichever
// arrives last. Each load asks `begin()` for a check and applies its answer only while the check
// holds; `drop()` makes every pending load stale (nothing of theirs should show any more).
export class LatestAnswer {
  #newest = 0;

  /** Starts a load; the check it returns is true until a newer load begins or `drop()` is called. */
  begin(): () => boolean {
    const mine = ++this.#newest;
    return () => mine === this.#newest;
  }

  drop(): void {
    this.#newest++;
  }
}
