// Compiled normalizers, one per normalizer, kept while it is unchanged: every token and feed
// applying it shares the one memo of names. Any change to a normalizer empties the cache, so the
// next ingest request (and the next feed sync) compiles the new rules; no restart.
import { compileNormalizer, type CompiledNormalizer } from './compile.ts';
import type { NormalizersStore } from './normalizers-store.ts';

export class NormalizerCache {
  private compiled = new Map<string, CompiledNormalizer | null>();
  private defaultId: string | null | undefined;

  constructor(private readonly store: NormalizersStore) {
    store.onChange(() => {
      this.compiled.clear();
      this.defaultId = undefined;
    });
  }

  /** The normalizer by id, or null when there is none with that id. */
  byId(id: string): CompiledNormalizer | null {
    let c = this.compiled.get(id);
    if (c === undefined) {
      const n = this.store.get(id);
      c = n ? compileNormalizer(n) : null;
      this.compiled.set(id, c);
    }
    return c;
  }

  /** The default normalizer (null only if an admin's database has none). */
  defaultOne(): CompiledNormalizer | null {
    if (this.defaultId === undefined) this.defaultId = this.store.defaultOne()?.id ?? null;
    return this.defaultId === null ? null : this.byId(this.defaultId);
  }

  /** What an ingest token applies: nothing with normalization off, else its normalizer or the default. */
  forToken(t: { normalization: number; normalizer_id: string | null }): CompiledNormalizer | null {
    if (t.normalization !== 1) return null;
    return t.normalizer_id ? this.byId(t.normalizer_id) : this.defaultOne();
  }

  /** Whether a change of normalizers must also be heard by a holder of compiled ones (the token cache). */
  onChange(fn: () => void): void {
    this.store.onChange(fn);
  }
}
