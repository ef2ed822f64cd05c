#!/usr/bin/env node
// Writes bundled-config/attack-enterprise-table.json, the compact ATT&CK table the service reads
// (notebooks' tactic breakdown; anything else naming techniques): the tactics in kill-chain order,
// every technique and sub-technique with its name, parent and tactics, and which retired ids were
// replaced by which.
//
// Source: MITRE ATT&CK Enterprise (© The MITRE Corporation, reproduced under its terms of use), as
// the extract ../shared/data/attack-enterprise.json.gz (see that folder's README), read from the
// project root. Run it again when that file changes and commit the table:
//   node scripts/generate-attack-table.mjs [path/to/attack-enterprise.json.gz]
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';

const root = path.resolve(import.meta.dirname, '..');
const source = process.argv[2] ?? path.join(root, '..', 'shared', 'data', 'attack-enterprise.json.gz');
const out = path.join(root, 'bundled-config', 'attack-enterprise-table.json');

if (!existsSync(source)) {
  console.error(`${source} not found: run this from a checkout beside shared/, or pass the extract's path`);
  process.exit(1);
}
const attack = JSON.parse(gunzipSync(readFileSync(source)).toString('utf8'));
if (!Array.isArray(attack.tactics) || !Array.isArray(attack.techniques)) throw new Error(`${source} is not the ATT&CK extract (no tactics or techniques)`);

const techniques = {};
for (const t of [...attack.techniques].sort((a, b) => a.id.localeCompare(b.id))) {
  if (!/^T\d{4}(\.\d{3})?$/.test(t.id)) throw new Error(`unexpected technique id ${t.id}`);
  const entry = { name: t.name, tactics: t.tactics ?? [] };
  if (t.parent) entry.parent = t.parent;
  if (t.deprecated) entry.deprecated = true;
  techniques[t.id] = entry;
}

const table = {
  source: 'MITRE ATT&CK Enterprise (© The MITRE Corporation, reproduced under its terms of use), from ../shared/data/attack-enterprise.json.gz',
  generated_by: 'scripts/generate-attack-table.mjs',
  domain: attack.domain,
  version: attack.version,
  // Kill-chain order, as ATT&CK lists them.
  tactics: attack.tactics.map((t) => ({ id: t.id, short: t.short, name: t.name })),
  techniques,
  revoked_by: Object.fromEntries(Object.entries(attack.revoked_by ?? {}).sort(([a], [b]) => a.localeCompare(b))),
};

// One technique a line: small diffs when ATT&CK changes, and still readable.
const lines = [
  '{',
  ...['source', 'generated_by', 'domain', 'version', 'tactics'].map((k) => `  ${JSON.stringify(k)}: ${JSON.stringify(table[k])},`),
  '  "techniques": {',
  Object.entries(techniques)
    .map(([id, t]) => `    ${JSON.stringify(id)}: ${JSON.stringify(t)}`)
    .join(',\n'),
  '  },',
  `  "revoked_by": ${JSON.stringify(table.revoked_by)}`,
  '}',
];
writeFileSync(out, lines.join('\n') + '\n');
console.log(`${path.relative(root, out)}: ATT&CK ${table.domain} v${table.version}, ${table.tactics.length} tactics, ${Object.keys(techniques).length} techniques, ${Object.keys(table.revoked_by).length} revoked ids`);
