// SQLite migration 4's rewrite: the shipped default normalizer, and each ingest token's rule list
// moved into a normalizer of its own (named after the fractal and the token), which the token
// then applies. Tokens without rules keep their `normalization` flag and so apply the default
// (flag on) or nothing (flag off). Nothing of a rule list is lost: legacy-rules.ts converts it.
import type { Db } from '../storage/sqlite.ts';
import { DEFAULT_NORMALIZER, DEFAULT_NORMALIZER_DESCRIPTION, DEFAULT_NORMALIZER_NAME } from './default-normalizer.ts';
import { definitionFromRules, type LegacyRule } from './legacy-rules.ts';
import { freeNormalizerName, insertNormalizer } from './normalizers-store.ts';

export function migrateTokenRules(db: Db): void {
  insertNormalizer(db, {
    name: DEFAULT_NORMALIZER_NAME,
    description: DEFAULT_NORMALIZER_DESCRIPTION,
    ...DEFAULT_NORMALIZER,
    isDefault: true,
    createdBy: 'system',
  });
  const tokens = db
    .prepare(
      `SELECT t.id, t.name, t.normalization, t.normalizers, f.name AS fractal_name
       FROM ingest_tokens t JOIN fractals f ON f.id = t.fractal_id ORDER BY f.name, t.name`,
    )
    .all() as Array<{ id: string; name: string; normalization: number; normalizers: string; fractal_name: string }>;
  for (const t of tokens) {
    const rules = JSON.parse(t.normalizers) as LegacyRule[];
    if (rules.length === 0) continue;
    const id = insertNormalizer(db, {
      name: freeNormalizerName(db, `${t.fractal_name} / ${t.name}`),
      description: `The rules of ingest token "${t.name}" of fractal "${t.fractal_name}"${t.normalization === 1 ? ', with the built-in aliases' : ''}, moved here from the token.`,
      ...definitionFromRules(t.normalization === 1, rules),
      createdBy: 'system',
    });
    db.prepare('UPDATE ingest_tokens SET normalizer_id = ?, normalization = 1 WHERE id = ?').run(id, t.id);
  }
  db.exec('ALTER TABLE ingest_tokens DROP COLUMN normalizers');
}
