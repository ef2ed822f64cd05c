// SQLite migration 12's rewrite: the shipped default normalizer learns syslog-ng's numeric macros
// (LEVEL_NUM → severity, FACILITY_NUM → facility, PRI → priority), which default-normalizer.ts now
// maps for new installs. Frozen here (a migration's code must not change once applied): it adds a
// name only where no mapping of that normalizer already takes it, so an admin's own choice stands,
// and only to the normalizer the appliance shipped (name "Default", made by the system).
import type { Db } from '../storage/sqlite.ts';

const ADDED: ReadonlyArray<{ source: string; target: string }> = [
  { source: 'LEVEL_NUM', target: 'severity' },
  { source: 'FACILITY_NUM', target: 'facility' },
  { source: 'PRI', target: 'priority' },
];

export function addSyslogNgNumbersToDefault(db: Db): void {
  const row = db.prepare("SELECT id, field_mappings FROM normalizers WHERE name = 'Default' AND created_by = 'system'").get() as
    | { id: string; field_mappings: string }
    | undefined;
  if (!row) return;
  const mappings = JSON.parse(row.field_mappings) as Array<{ sources: string[]; target: string }>;
  let changed = false;
  for (const { source, target } of ADDED) {
    if (mappings.some((m) => m.sources.includes(source))) continue;
    const same = mappings.find((m) => m.target === target);
    if (same) same.sources.push(source);
    else mappings.push({ sources: [source], target });
    changed = true;
  }
  if (!changed) return;
  db.prepare('UPDATE normalizers SET field_mappings = ?, version = version + 1, updated_at = ? WHERE id = ?').run(JSON.stringify(mappings), new Date().toISOString(), row.id);
}
