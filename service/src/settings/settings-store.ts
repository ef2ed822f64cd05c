// Runtime settings an admin changes without a restart (conventions.md "Settings").
import type { Db } from '../storage/sqlite.ts';

export interface Settings {
  shared_links_enabled: boolean;
  query_timeout_s: number;
  alert_interval_s: number;
  timestamp_fields: string[];
  max_query_rows: number;
}

export class SettingsStore {
  private cache: Settings | null = null;
  private readonly listeners: Array<() => void> = [];
  constructor(
    private readonly db: Db,
    private readonly defaults: Settings,
  ) {}

  get(): Settings {
    if (this.cache) return this.cache;
    const rows = this.db.prepare('SELECT key, value FROM settings').all() as Array<{ key: string; value: string }>;
    const stored = Object.fromEntries(rows.map((r) => [r.key, JSON.parse(r.value)]));
    const merged = { ...this.defaults };
    for (const k of Object.keys(merged) as Array<keyof Settings>) if (k in stored) (merged as Record<string, unknown>)[k] = stored[k];
    this.cache = merged;
    return merged;
  }

  update(patch: Partial<Settings>): Settings {
    const put = this.db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value');
    this.db.transaction(() => {
      for (const [k, v] of Object.entries(patch)) if (k in this.defaults && v !== undefined) put.run(k, JSON.stringify(v));
    })();
    this.cache = null;
    for (const l of this.listeners) l();
    return this.get();
  }

  /** Calls `fn` after every change (the alert engine reschedules its tick). */
  onChange(fn: () => void): void {
    this.listeners.push(fn);
  }
}
