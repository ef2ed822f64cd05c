// Ingest tokens: `svc_ingest_` + 32 hex. Shippers are configured with the value, so a fractal's
// admins can read it again: it is stored sealed (AES-GCM) plus a SHA-256 hash for look-up.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Db } from '../storage/sqlite.ts';
import { sha256, type SecretBox } from '../storage/secret-box.ts';

export type ParserType = 'json' | 'kv' | 'syslog';
export const PARSER_TYPES: ParserType[] = ['json', 'kv', 'syslog'];
const INGEST_TOKEN_PATTERN = /^svc_ingest_[0-9a-f]{32}$/;

export interface IngestTokenRow {
  id: string;
  fractal_id: string;
  name: string;
  token_hash: string;
  token_encrypted: string;
  parser_type: ParserType;
  normalization: number;
  /** The normalizer applied; null: with normalization on, the default one. */
  normalizer_id: string | null;
  timestamp_fields: string;
  enabled: number;
  is_default: number;
  created_at: string;
  updated_at: string;
}

export interface IngestTokenInput {
  name: string;
  parserType: ParserType;
  normalization: boolean;
  normalizerId: string | null;
  timestampFields: string[];
  enabled: boolean;
  isDefault?: boolean;
}

export class IngestTokensStore {
  private listeners: Array<() => void> = [];
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
  ) {}

  /** Called after any token changes (including removal with its fractal). */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }
  notifyChanged(): void {
    for (const fn of this.listeners) fn();
  }

  list(fractalId: string): IngestTokenRow[] {
    return this.db.prepare('SELECT * FROM ingest_tokens WHERE fractal_id = ? ORDER BY created_at').all(fractalId) as IngestTokenRow[];
  }
  get(fractalId: string, id: string): IngestTokenRow | undefined {
    return this.db.prepare('SELECT * FROM ingest_tokens WHERE fractal_id = ? AND id = ?').get(fractalId, id) as
      | IngestTokenRow
      | undefined;
  }
  /** A token of any fractal (a syslog listener names its token by id). */
  byId(id: string): IngestTokenRow | undefined {
    return this.db.prepare('SELECT * FROM ingest_tokens WHERE id = ?').get(id) as IngestTokenRow | undefined;
  }
  byValue(token: string): IngestTokenRow | undefined {
    if (!INGEST_TOKEN_PATTERN.test(token)) return undefined;
    return this.db.prepare('SELECT * FROM ingest_tokens WHERE token_hash = ?').get(sha256(token)) as IngestTokenRow | undefined;
  }
  reveal(row: IngestTokenRow): string {
    return this.box.open(row.token_encrypted);
  }
  create(fractalId: string, t: IngestTokenInput): IngestTokenRow {
    const token = `svc_ingest_${randomBytes(16).toString('hex')}`;
    const id = randomUUID();
    const now = new Date().toISOString();
    this.db
      .prepare(
        `INSERT INTO ingest_tokens (id, fractal_id, name, token_hash, token_encrypted, parser_type, normalization,
           normalizer_id, timestamp_fields, enabled, is_default, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(id, fractalId, t.name, sha256(token), this.box.seal(token), t.parserType, t.normalization ? 1 : 0,
        t.normalizerId, JSON.stringify(t.timestampFields), t.enabled ? 1 : 0, t.isDefault ? 1 : 0, now, now);
    return this.get(fractalId, id)!;
  }
  update(row: IngestTokenRow, patch: Partial<IngestTokenInput>): IngestTokenRow {
    this.db
      .prepare(
        `UPDATE ingest_tokens SET name = ?, parser_type = ?, normalization = ?, normalizer_id = ?, timestamp_fields = ?,
           enabled = ?, updated_at = ? WHERE id = ?`,
      )
      .run(
        patch.name ?? row.name,
        patch.parserType ?? row.parser_type,
        patch.normalization === undefined ? row.normalization : patch.normalization ? 1 : 0,
        patch.normalizerId === undefined ? row.normalizer_id : patch.normalizerId,
        patch.timestampFields ? JSON.stringify(patch.timestampFields) : row.timestamp_fields,
        patch.enabled === undefined ? row.enabled : patch.enabled ? 1 : 0,
        new Date().toISOString(),
        row.id,
      );
    this.notifyChanged();
    return this.get(row.fractal_id, row.id)!;
  }
  delete(id: string): void {
    this.db.prepare('DELETE FROM ingest_tokens WHERE id = ?').run(id);
    this.notifyChanged();
  }
}
