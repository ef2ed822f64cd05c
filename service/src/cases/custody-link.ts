// What the case archive needs of the custody log (evidence/custody/): the entries an archive
// carries, an `export` entry when an archive was written, and, at import, the carried entries
// checked and kept beside the new fractal's own chain, which starts with a `case-import` entry.
export interface CaseCustody {
  /** The fractal's custody entries, oldest first, as the archive's custody.ndjson carries them. */
  entries(fractalId: string): unknown[];
  /** Appends the `export` entry of an archive just written. */
  recordExport(fractalId: string, actor: string, details: Record<string, unknown>): void;
  /** Why the carried entries do not form an intact chain (a sentence), or null when they do. */
  checkCarried(entries: unknown[]): string | null;
  /**
   * Keeps the carried entries for the new fractal and appends its `case-import` entry. Called
   * inside the import's transaction.
   */
  restore(fractalId: string, carried: unknown[], actor: string, details: Record<string, unknown>): void;
}

/** Until the custody log exists: an archive carries no entries and records none. */
export const noCustody: CaseCustody = {
  entries: () => [],
  recordExport: () => undefined,
  checkCarried: () => null,
  restore: () => undefined,
};
