// The four kinds of alert action and the SMTP settings, in SQLite (migration 4). An action
// belongs to one fractal or prism, or to everyone (both null). Secrets (a webhook's bearer token
// or basic password, the SMTP password) are sealed with the secret box here and opened only for a
// delivery; nothing outside this store sees them sealed or not, except the delivery code.
import { randomUUID } from 'node:crypto';
import type { SecretBox } from '../../storage/secret-box.ts';
import type { Db } from '../../storage/sqlite.ts';
import type { ActionKind } from '../alerts-store.ts';

export interface ActionOwner {
  fractal_id: string | null;
  prism_id: string | null;
}

interface ActionBase extends ActionOwner {
  id: string;
  name: string;
  description: string;
  enabled: boolean;
  created_by: string;
  created_at: string;
  updated_at: string;
}

export interface WebhookAuth {
  token?: string;
  username?: string;
  password?: string;
}

export interface WebhookFields {
  url: string;
  method: string;
  headers: Record<string, string>;
  auth_type: 'none' | 'bearer' | 'basic';
  /** Opened from the sealed column; never sent to a client. */
  auth: WebhookAuth;
  timeout_seconds: number;
  retry_count: number;
  include_alert_link: boolean;
  body_mode: 'envelope' | 'template';
  body_template: string;
  content_type: string;
}

export interface EmailFields {
  recipients: string[];
  subject_template: string;
  body_template: string;
}

export interface FractalFields {
  target_fractal_id: string;
  preserve_timestamp: boolean;
  add_alert_context: boolean;
  max_logs_per_trigger: number;
}

export interface DictionaryFields {
  dictionary_name: string;
  key_field: string;
  value_fields: string[];
  max_logs_per_trigger: number;
}

export interface ActionFieldsOf {
  webhook: WebhookFields;
  email: EmailFields;
  fractal: FractalFields;
  dictionary: DictionaryFields;
}

export type Action<K extends ActionKind = ActionKind> = ActionBase & ActionFieldsOf[K] & { kind: K };
export type ActionInput<K extends ActionKind> = Pick<ActionBase, 'name' | 'description' | 'enabled'> & ActionFieldsOf[K];

type ColumnType = 'text' | 'int' | 'bool' | 'json';
const COLUMNS: { [K in ActionKind]: { table: string; columns: Record<string, ColumnType> } } = {
  webhook: {
    table: 'webhook_actions',
    columns: {
      url: 'text', method: 'text', headers: 'json', auth_type: 'text', timeout_seconds: 'int', retry_count: 'int',
      include_alert_link: 'bool', body_mode: 'text', body_template: 'text', content_type: 'text',
    },
  },
  email: { table: 'email_actions', columns: { recipients: 'json', subject_template: 'text', body_template: 'text' } },
  fractal: { table: 'fractal_actions', columns: { target_fractal_id: 'text', preserve_timestamp: 'bool', add_alert_context: 'bool', max_logs_per_trigger: 'int' } },
  dictionary: { table: 'dictionary_actions', columns: { dictionary_name: 'text', key_field: 'text', value_fields: 'json', max_logs_per_trigger: 'int' } },
};

export const tableOf = (kind: ActionKind): string => COLUMNS[kind].table;

export interface SmtpSettings {
  host: string;
  port: number;
  username: string;
  /** Opened for sending only. */
  password: string;
  from_address: string;
  tls_mode: 'none' | 'starttls' | 'tls';
  updated_at: string;
}

export class ActionsStore {
  constructor(
    private readonly db: Db,
    private readonly box: SecretBox,
  ) {}

  private fromRow<K extends ActionKind>(kind: K, r: Record<string, unknown>): Action<K> {
    const out: Record<string, unknown> = { ...r, kind, enabled: r.enabled === 1 };
    for (const [c, t] of Object.entries(COLUMNS[kind].columns)) {
      if (t === 'bool') out[c] = r[c] === 1;
      if (t === 'json') out[c] = JSON.parse(r[c] as string);
    }
    if (kind === 'webhook') {
      out.auth = r.auth_sealed ? (JSON.parse(this.box.open(r.auth_sealed as string)) as WebhookAuth) : {};
      delete out.auth_sealed;
    }
    return out as unknown as Action<K>;
  }

  get<K extends ActionKind>(kind: K, id: string): Action<K> | undefined {
    const r = this.db.prepare(`SELECT * FROM ${tableOf(kind)} WHERE id = ?`).get(id) as Record<string, unknown> | undefined;
    return r && this.fromRow(kind, r);
  }

  /** The actions an alert of this scope may use: the scope's own, then everyone's; by name. */
  visibleTo<K extends ActionKind>(kind: K, scope: { type: 'fractal' | 'prism'; id: string }): Array<Action<K>> {
    const column = scope.type === 'fractal' ? 'fractal_id' : 'prism_id';
    const rows = this.db
      .prepare(`SELECT * FROM ${tableOf(kind)} WHERE ${column} = ? OR (fractal_id IS NULL AND prism_id IS NULL) ORDER BY (fractal_id IS NULL AND prism_id IS NULL), name COLLATE NOCASE`)
      .all(scope.id) as Array<Record<string, unknown>>;
    return rows.map((r) => this.fromRow(kind, r));
  }

  /** Everyone's actions (no scope). */
  global<K extends ActionKind>(kind: K): Array<Action<K>> {
    const rows = this.db.prepare(`SELECT * FROM ${tableOf(kind)} WHERE fractal_id IS NULL AND prism_id IS NULL ORDER BY name COLLATE NOCASE`).all() as Array<Record<string, unknown>>;
    return rows.map((r) => this.fromRow(kind, r));
  }

  nameTaken(kind: ActionKind, owner: ActionOwner, name: string, except?: string): boolean {
    return (
      this.db
        .prepare(`SELECT 1 FROM ${tableOf(kind)} WHERE coalesce(fractal_id, '') = ? AND coalesce(prism_id, '') = ? AND name = ? COLLATE NOCASE AND id != ?`)
        .get(owner.fractal_id ?? '', owner.prism_id ?? '', name, except ?? '') !== undefined
    );
  }

  private values<K extends ActionKind>(kind: K, input: ActionInput<K>): unknown[] {
    const v = input as unknown as Record<string, unknown>;
    return Object.entries(COLUMNS[kind].columns).map(([c, t]) => (t === 'bool' ? (v[c] ? 1 : 0) : t === 'json' ? JSON.stringify(v[c]) : v[c]));
  }

  private sealedAuth(input: ActionInput<ActionKind>): string {
    const auth = (input as Partial<WebhookFields>).auth ?? {};
    return Object.keys(auth).length ? this.box.seal(JSON.stringify(auth)) : '';
  }

  create<K extends ActionKind>(kind: K, input: ActionInput<K>, owner: ActionOwner, createdBy: string): Action<K> {
    const id = randomUUID();
    const t = new Date().toISOString();
    const cols = Object.keys(COLUMNS[kind].columns);
    const extra = kind === 'webhook' ? ['auth_sealed'] : [];
    const all = ['id', 'name', 'description', 'fractal_id', 'prism_id', 'enabled', ...cols, ...extra, 'created_by', 'created_at', 'updated_at'];
    this.db
      .prepare(`INSERT INTO ${tableOf(kind)} (${all.join(', ')}) VALUES (${all.map(() => '?').join(', ')})`)
      .run(
        id, input.name, input.description, owner.fractal_id, owner.prism_id, input.enabled ? 1 : 0, ...this.values(kind, input),
        ...(kind === 'webhook' ? [this.sealedAuth(input)] : []), createdBy, t, t,
      );
    return this.get(kind, id)!;
  }

  update<K extends ActionKind>(kind: K, id: string, input: ActionInput<K>): Action<K> {
    const cols = Object.keys(COLUMNS[kind].columns);
    const set = ['name', 'description', 'enabled', ...cols, ...(kind === 'webhook' ? ['auth_sealed'] : []), 'updated_at'];
    this.db
      .prepare(`UPDATE ${tableOf(kind)} SET ${set.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`)
      .run(
        input.name, input.description, input.enabled ? 1 : 0, ...this.values(kind, input),
        ...(kind === 'webhook' ? [this.sealedAuth(input)] : []), new Date().toISOString(), id,
      );
    return this.get(kind, id)!;
  }

  delete(kind: ActionKind, id: string): boolean {
    return this.db.prepare(`DELETE FROM ${tableOf(kind)} WHERE id = ?`).run(id).changes > 0;
  }

  /** How many alerts use an action. */
  usage(kind: ActionKind, id: string): number {
    const link = { webhook: 'alert_webhook_actions', email: 'alert_email_actions', fractal: 'alert_fractal_actions', dictionary: 'alert_dictionary_actions' }[kind];
    return (this.db.prepare(`SELECT count(*) AS n FROM ${link} WHERE action_id = ?`).get(id) as { n: number }).n;
  }

  // ---- SMTP ---------------------------------------------------------------------------------------

  smtp(): SmtpSettings | null {
    const r = this.db.prepare('SELECT * FROM smtp_settings WHERE id = 1').get() as (Omit<SmtpSettings, 'password'> & { password_sealed: string }) | undefined;
    if (!r) return null;
    const { password_sealed, ...rest } = r;
    return { ...rest, password: password_sealed ? this.box.open(password_sealed) : '' };
  }

  setSmtp(s: Omit<SmtpSettings, 'updated_at'>): SmtpSettings {
    this.db
      .prepare(
        `INSERT INTO smtp_settings (id, host, port, username, password_sealed, from_address, tls_mode, updated_at) VALUES (1, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT(id) DO UPDATE SET host = excluded.host, port = excluded.port, username = excluded.username,
           password_sealed = excluded.password_sealed, from_address = excluded.from_address, tls_mode = excluded.tls_mode, updated_at = excluded.updated_at`,
      )
      .run(s.host, s.port, s.username, s.password ? this.box.seal(s.password) : '', s.from_address, s.tls_mode, new Date().toISOString());
    return this.smtp()!;
  }
}
