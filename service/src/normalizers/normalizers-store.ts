// Normalizers in SQLite (`normalizers`; the definition's lists as JSON text). Exactly one is the
// default (a partial unique index holds it). Listeners hear of every change, so ingest drops the
// compiled normalizers it holds and the next request uses the new rules.
import { randomUUID } from 'node:crypto';
import type { Db } from '../storage/sqlite.ts';
import type { NormalizerDefinition } from './definition.ts';

export interface Normalizer extends NormalizerDefinition {
  id: string;
  name: string;
  description: string;
  is_default: boolean;
  /** Counts edits; shown with the name as `name@version`. */
  version: number;
  created_by: string;
  created_at: string;
  updated_at: string;
}

interface NormalizerRecord {
  id: string;
  name: string;
  description: string;
  transforms: string;
  field_mappings: string;
  value_mappings: string;
  timestamp_fields: string;
  is_default: number;
  version: number;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface NormalizerInput extends NormalizerDefinition {
  name: string;
  description: string;
}

const fromRecord = (r: NormalizerRecord): Normalizer => ({
  ...r,
  transforms: JSON.parse(r.transforms),
  field_mappings: JSON.parse(r.field_mappings),
  value_mappings: JSON.parse(r.value_mappings),
  timestamp_fields: JSON.parse(r.timestamp_fields),
  is_default: r.is_default === 1,
});

/** The definition's lists as the JSON text of their columns, in column order. */
const definitionColumns = (n: NormalizerDefinition) => [JSON.stringify(n.transforms), JSON.stringify(n.field_mappings), JSON.stringify(n.value_mappings), JSON.stringify(n.timestamp_fields)];

/** Inserts a normalizer; the migration uses it too, so it takes the database rather than the store. */
export function insertNormalizer(db: Db, n: NormalizerInput & { isDefault?: boolean; createdBy: string }): string {
  const id = randomUUID();
  const now = new Date().toISOString();
  db.prepare(
    `INSERT INTO normalizers (id, name, description, transforms, field_mappings, value_mappings, timestamp_fields,
       is_default, version, created_by, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?)`,
  ).run(
    id,
    n.name,
    n.description,
    ...definitionColumns(n),
    n.isDefault ? 1 : 0,
    n.createdBy,
    now,
    now,
  );
  return id;
}

/** Whether a normalizer is named `name` (names are unique, in any case). */
export const normalizerNameTaken = (db: Db, name: string): boolean => db.prepare('SELECT 1 FROM normalizers WHERE name = ? COLLATE NOCASE').get(name) !== undefined;

/** `name`, or `name (2)`, `name (3)`, … : the first not yet taken. */
export function freeNormalizerName(db: Db, name: string): string {
  if (!normalizerNameTaken(db, name)) return name;
  for (let i = 2; ; i++) if (!normalizerNameTaken(db, `${name} (${i})`)) return `${name} (${i})`;
}

export class NormalizersStore {
  private listeners: Array<() => void> = [];
  constructor(private readonly db: Db) {}

  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }
  private changed(): void {
    for (const fn of this.listeners) fn();
  }

  list(): Normalizer[] {
    return (this.db.prepare('SELECT * FROM normalizers ORDER BY is_default DESC, name COLLATE NOCASE').all() as NormalizerRecord[]).map(fromRecord);
  }
  get(id: string): Normalizer | undefined {
    const r = this.db.prepare('SELECT * FROM normalizers WHERE id = ?').get(id) as NormalizerRecord | undefined;
    return r && fromRecord(r);
  }
  byName(name: string): Normalizer | undefined {
    const r = this.db.prepare('SELECT * FROM normalizers WHERE name = ? COLLATE NOCASE').get(name) as NormalizerRecord | undefined;
    return r && fromRecord(r);
  }
  defaultOne(): Normalizer | undefined {
    const r = this.db.prepare('SELECT * FROM normalizers WHERE is_default = 1').get() as NormalizerRecord | undefined;
    return r && fromRecord(r);
  }
  freeName(name: string): string {
    return freeNormalizerName(this.db, name);
  }

  create(n: NormalizerInput, createdBy: string): Normalizer {
    const id = insertNormalizer(this.db, { ...n, createdBy });
    this.changed();
    return this.get(id)!;
  }

  update(id: string, n: NormalizerInput): Normalizer {
    this.db
      .prepare(
        `UPDATE normalizers SET name = ?, description = ?, transforms = ?, field_mappings = ?, value_mappings = ?,
           timestamp_fields = ?, version = version + 1, updated_at = ? WHERE id = ?`,
      )
      .run(n.name, n.description, ...definitionColumns(n), new Date().toISOString(), id);
    this.changed();
    return this.get(id)!;
  }

  /** Makes this one the default (the previous default stops being it). */
  makeDefault(id: string): void {
    this.db.transaction(() => {
      this.db.prepare('UPDATE normalizers SET is_default = 0 WHERE is_default = 1 AND id != ?').run(id);
      this.db.prepare('UPDATE normalizers SET is_default = 1, updated_at = ? WHERE id = ?').run(new Date().toISOString(), id);
    })();
    this.changed();
  }

  delete(id: string): void {
    this.db.prepare('DELETE FROM normalizers WHERE id = ?').run(id);
    this.changed();
  }

  /** The feeds that translate Sigma field names through this normalizer by id. */
  feedsUsing(id: string): Array<{ id: string; name: string }> {
    return this.db.prepare('SELECT id, name FROM feeds WHERE normalizer_id = ? ORDER BY name').all(id) as Array<{ id: string; name: string }>;
  }

  /** The ingest tokens that apply this normalizer by id, with their fractal's name. */
  tokensUsing(id: string): Array<{ id: string; name: string; fractal_id: string; fractal_name: string }> {
    return this.db
      .prepare(
        `SELECT t.id, t.name, t.fractal_id, f.name AS fractal_name FROM ingest_tokens t JOIN fractals f ON f.id = t.fractal_id
         WHERE t.normalizer_id = ? ORDER BY f.name, t.name`,
      )
      .all(id) as Array<{ id: string; name: string; fractal_id: string; fractal_name: string }>;
  }
}
