// Statements of one kind running in the engine, counted: SearchActivity (searches someone waits
// on) and LowPriorityThreads (niced statements) each act when one of theirs ends.
export abstract class RunningCount {
  protected running = 0;

  /** A statement starts; the function returned says it ended (only its first call counts). */
  begin(): () => void {
    this.running++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.running--;
      this.ended();
    };
  }

  get active(): number {
    return this.running;
  }

  /** After a statement ended (`running` already counts it out). */
  protected abstract ended(): void;
}
