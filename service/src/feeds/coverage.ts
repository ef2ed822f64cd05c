// ATT&CK coverage of a fractal's or prism's alerts: tactics as columns (kill-chain order), their
// techniques as cells, each with the alerts whose labels name it (`attack.t1059.001`: Sigma's
// tags) and how many of them are enabled, and the rules feeds did not import that would have
// covered it, with why. A sub-technique's alerts count for its parent's cell too (a rule tagged
// T1059.001 does detect T1059), listed apart. Retired ids count as their replacements.
import type { Alert } from '../alerts/alerts-store.ts';
import { ATTACK, resolveTechnique, techniqueIds, type AttackTable } from '../notebooks/attack.ts';
import type { FeedRule } from './feeds-store.ts';

export interface CoverageAlert {
  id: string;
  name: string;
  enabled: boolean;
  severity: string;
  /** The technique the alert names directly (a sub-technique's, for a parent's cell). */
  via: string;
}

export interface CoverageSkipped {
  feed_id: string;
  feed_name: string;
  source_path: string;
  title: string;
  reason_code: string | null;
  reason: string | null;
  via: string;
}

export interface TechniqueCell {
  id: string;
  name: string;
  /** Enabled alerts naming it or one of its sub-techniques: the cell's colour. */
  enabled: number;
  alerts: CoverageAlert[];
  skipped: CoverageSkipped[];
  subtechniques: Array<{ id: string; name: string; enabled: number }>;
}

export interface Coverage {
  version: string;
  tactics: Array<{ id: string; short: string; name: string; techniques: TechniqueCell[]; covered: number }>;
  /** Alerts with no technique among their labels (tactic-only tags, or none). */
  unmapped_alerts: number;
  /** Technique ids in labels that ATT&CK does not know, with how many alerts carry each. */
  unknown_ids: Record<string, number>;
}

export function coverage(alerts: Alert[], skipped: Array<FeedRule & { feed_id: string; feed_name: string }>, t: AttackTable = ATTACK): Coverage {
  const byTechnique = new Map<string, { alerts: CoverageAlert[]; skipped: CoverageSkipped[] }>();
  const entry = (id: string) => {
    let e = byTechnique.get(id);
    if (!e) byTechnique.set(id, (e = { alerts: [], skipped: [] }));
    return e;
  };
  const unknown: Record<string, number> = {};
  let unmapped = 0;
  /** The cells a list of labels counts for: each technique named, and a sub-technique's parent. */
  const cellsOf = (labels: string[], onUnknown?: (id: string) => void): Array<[string, string]> => {
    const cells: Array<[string, string]> = [];
    for (const named of techniqueIds(labels.join(' '))) {
      const tech = resolveTechnique(named, t);
      if (!tech) {
        onUnknown?.(named);
        continue;
      }
      cells.push([tech.id, tech.id]);
      const parent = t.techniques[tech.id]?.parent;
      if (parent) cells.push([parent, tech.id]);
    }
    return cells;
  };
  for (const a of alerts) {
    const cells = cellsOf(a.labels, (id) => (unknown[id] = (unknown[id] ?? 0) + 1));
    if (cells.length === 0) unmapped++;
    const done = new Set<string>();
    for (const [cell, via] of cells) {
      if (done.has(cell)) continue;
      done.add(cell);
      entry(cell).alerts.push({ id: a.id, name: a.name, enabled: a.enabled, severity: a.severity, via });
    }
  }
  for (const r of skipped) {
    const done = new Set<string>();
    for (const [cell, via] of cellsOf(r.tags)) {
      if (done.has(cell)) continue;
      done.add(cell);
      entry(cell).skipped.push({ feed_id: r.feed_id, feed_name: r.feed_name, source_path: r.source_path, title: r.title, reason_code: r.reason_code, reason: r.reason, via });
    }
  }
  const subsOf = new Map<string, string[]>();
  for (const [id, tech] of Object.entries(t.techniques)) {
    if (tech.parent && !tech.deprecated) subsOf.set(tech.parent, [...(subsOf.get(tech.parent) ?? []), id]);
  }
  const enabledCount = (id: string) => byTechnique.get(id)?.alerts.filter((a) => a.enabled).length ?? 0;
  return {
    version: t.version,
    tactics: t.tactics.map((tactic) => {
      const techniques = Object.entries(t.techniques)
        .filter(([, tech]) => !tech.parent && !tech.deprecated && tech.tactics.includes(tactic.short))
        .map(([id, tech]): TechniqueCell => {
          const e = byTechnique.get(id);
          return {
            id,
            name: tech.name,
            enabled: enabledCount(id),
            alerts: e?.alerts ?? [],
            skipped: e?.skipped ?? [],
            subtechniques: (subsOf.get(id) ?? []).sort().map((sub) => ({ id: sub, name: t.techniques[sub]!.name, enabled: enabledCount(sub) })),
          };
        })
        .sort((a, b) => a.name.localeCompare(b.name));
      return { ...tactic, techniques, covered: techniques.filter((c) => c.enabled > 0).length };
    }),
    unmapped_alerts: unmapped,
    unknown_ids: unknown,
  };
}
