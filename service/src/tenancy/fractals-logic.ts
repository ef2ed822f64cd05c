// Fractal life cycle across both stores: a new fractal gets its default ingest token; a deleted
// one loses its logs in ClickHouse first (so a failure there leaves it intact to retry), then its
// tokens, keys, grants and prism memberships in SQLite.
import type { Context } from '../context.ts';
import type { FractalRow, FractalStats } from './fractals-store.ts';

export function createFractal(
  ctx: Context,
  f: { name: string; description: string; isDefault?: boolean; id?: string },
): { fractal: FractalRow; token: string } {
  return ctx.db.transaction(() => {
    const fractal = ctx.fractals.create(f);
    const row = ctx.ingestTokens.create(fractal.id, {
      name: 'default',
      parserType: 'json',
      normalization: true,
      normalizerId: null,
      timestampFields: [],
      enabled: true,
      isDefault: true,
    });
    return { fractal, token: ctx.ingestTokens.reveal(row) };
  })();
}

export async function deleteFractal(ctx: Context, id: string): Promise<void> {
  await ctx.logs.deleteFractal(id);
  ctx.fractals.delete(id);
  ctx.ingestTokens.notifyChanged(); // its tokens went with it (cascade)
}

export async function refreshAllStats(ctx: Context): Promise<Array<FractalStats & { fractal_id: string }>> {
  const stats = await ctx.logs.statsByFractal();
  return ctx.fractals.list().map((f) => {
    const s = stats.get(f.id) ?? { log_count: 0, size_bytes: 0, oldest: null, newest: null };
    ctx.fractals.saveStats(f.id, s);
    return { fractal_id: f.id, ...s };
  });
}
