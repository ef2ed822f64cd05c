// Keeps ingest-token look-ups off the hot path. Entries are dropped the moment any token changes
// (toggle, edit, delete, fractal deletion), so a disabled or deleted token is refused at once.
import { compileNormalizer, type Normalizer } from './normalize.ts';
import type { NormalizerRule } from './normalizer-rules.ts';
import type { IngestTokenRow, IngestTokensStore } from './tokens-store.ts';

export interface CachedToken {
  row: IngestTokenRow;
  fractalId: string;
  normalize: Normalizer;
  timestampFields: string[];
}

export class TokenCache {
  private entries = new Map<string, CachedToken | null>();

  constructor(private readonly store: IngestTokensStore) {
    store.onChange(() => this.entries.clear());
  }

  /** The enabled token for a presented value, or null. */
  lookup(value: string): CachedToken | null {
    const hit = this.entries.get(value);
    if (hit !== undefined) return hit;
    const row = this.store.byValue(value);
    const entry: CachedToken | null =
      row && row.enabled === 1
        ? {
            row,
            fractalId: row.fractal_id,
            normalize: compileNormalizer(row.normalization === 1, JSON.parse(row.normalizers) as NormalizerRule[]),
            timestampFields: JSON.parse(row.timestamp_fields) as string[],
          }
        : null;
    // Unknown values are cached too (bounded), so a misconfigured shipper cannot hammer SQLite.
    if (this.entries.size > 10_000) this.entries.clear();
    this.entries.set(value, entry);
    return entry;
  }
}
