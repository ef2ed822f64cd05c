// Keeps ingest-token look-ups off the hot path. Entries are dropped the moment any token or any
// normalizer changes (toggle, edit, delete, fractal deletion, a normalizer edited), so a disabled
// or deleted token is refused at once and edited rules apply from the next request.
import type { CompiledNormalizer } from '../normalizers/compile.ts';
import type { NormalizerCache } from '../normalizers/normalizer-cache.ts';
import type { Fields } from './types.ts';
import type { IngestTokenRow, IngestTokensStore } from './tokens-store.ts';

export interface CachedToken {
  row: IngestTokenRow;
  fractalId: string;
  /**
   * The token's normalizer applied to flattened fields (the fields themselves when it changes
   * nothing). `index`: the record's position in the records accept() was given (imports of many
   * files in one batch tell each record's file by it).
   */
  normalize: (fields: Fields, index: number) => Fields;
  /** The token's own timestamp fields, then its normalizer's. */
  timestampFields: string[];
}

const unchanged = (fields: Fields) => fields;

export class TokenCache {
  private entries = new Map<string, CachedToken | null>();

  constructor(
    private readonly store: IngestTokensStore,
    private readonly normalizers: NormalizerCache,
  ) {
    store.onChange(() => this.entries.clear());
    normalizers.onChange(() => this.entries.clear());
  }

  /** The enabled token for a presented value, or null. */
  lookup(value: string): CachedToken | null {
    const hit = this.entries.get(value);
    if (hit !== undefined) return hit;
    const row = this.store.byValue(value);
    let entry: CachedToken | null = null;
    if (row && row.enabled === 1) {
      const n: CompiledNormalizer | null = this.normalizers.forToken(row);
      entry = {
        row,
        fractalId: row.fractal_id,
        normalize: n ? n.apply : unchanged,
        timestampFields: [...(JSON.parse(row.timestamp_fields) as string[]), ...(n?.timestampFields ?? [])],
      };
    }
    // Unknown values are cached too (bounded), so a misconfigured shipper cannot hammer SQLite.
    if (this.entries.size > 10_000) this.entries.clear();
    this.entries.set(value, entry);
    return entry;
  }
}
