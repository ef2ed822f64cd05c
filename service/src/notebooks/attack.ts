// ATT&CK technique ids in analysts' comments, and the tactic breakdown of a generated notebook.
// The table is bundled-config/attack-enterprise-table.json, which scripts/generate-attack-table.mjs
// derives from MITRE ATT&CK Enterprise (../shared/data/attack-enterprise.json.gz); imported, so the
// Electron bundle carries it too.
import table from '../../../bundled-config/attack-enterprise-table.json' with { type: 'json' };

export interface AttackTable {
  version: string;
  tactics: Array<{ id: string; short: string; name: string }>;
  techniques: Record<string, { name: string; tactics: string[]; parent?: string; deprecated?: boolean }>;
  revoked_by: Record<string, string>;
}

export const ATTACK: AttackTable = table as AttackTable;

/** `T1059`, `t1059.001`, also inside tags such as `attack.t1021.002`; not inside a longer word or number. */
const TECHNIQUE_ID = /(?<![A-Za-z0-9])T(\d{4})(?:\.(\d{3}))?(?![0-9]|\.[0-9])/gi;

/** The technique ids a text names, upper-cased, in order of first mention. */
export function techniqueIds(text: string): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(TECHNIQUE_ID)) out.add(`T${m[1]}${m[2] ? `.${m[2]}` : ''}`);
  return [...out];
}

export interface ResolvedTechnique {
  /** The id as named. */
  named: string;
  /** The current id (a revoked one's replacement). */
  id: string;
  /** "Remote Services: SMB/Windows Admin Shares" for a sub-technique. */
  name: string;
  tactics: string[];
}

/** A named id in the table (following a revocation); null when ATT&CK does not know it. */
export function resolveTechnique(named: string, t: AttackTable = ATTACK): ResolvedTechnique | null {
  const id = t.revoked_by[named] ?? named;
  const tech = t.techniques[id];
  if (!tech) return null;
  const parent = tech.parent ? t.techniques[tech.parent] : undefined;
  return { named, id, name: parent ? `${parent.name}: ${tech.name}` : tech.name, tactics: tech.tactics };
}

/** Markdown text of a value: characters that mean something in Markdown are escaped. */
export const mdText = (s: string) => s.replace(/[\\`*_[\]<>#|~!]/g, (c) => `\\${c}`);

export interface Mention {
  /** The comment (or log) the id was found in, counted once per technique. */
  commentId: string;
  logId: string;
  text: string;
}

/**
 * The tactic breakdown as Markdown: for each tactic in kill-chain order, the techniques the
 * mentions name (a technique under several tactics is listed under each), with how many comments
 * and logs name it; then the ids ATT&CK does not know, and the revoked ones that were followed.
 */
export function tacticBreakdown(mentions: Mention[], intro: string, t: AttackTable = ATTACK): string {
  const byTechnique = new Map<string, { tech: ResolvedTechnique; comments: Set<string>; logs: Set<string> }>();
  const unknown = new Set<string>();
  const revoked = new Map<string, string>();
  for (const m of mentions) {
    for (const named of techniqueIds(m.text)) {
      const tech = resolveTechnique(named, t);
      if (!tech) {
        unknown.add(named);
        continue;
      }
      if (tech.id !== named) revoked.set(named, tech.id);
      let e = byTechnique.get(tech.id);
      if (!e) byTechnique.set(tech.id, (e = { tech, comments: new Set(), logs: new Set() }));
      e.comments.add(m.commentId);
      e.logs.add(m.logId);
    }
  }
  const lines = [intro, ''];
  if (byTechnique.size === 0) {
    lines.push('No ATT&CK technique id (such as T1059 or T1059.001) appears in these comments or their tags.');
  }
  for (const tactic of t.tactics) {
    const techs = [...byTechnique.values()].filter((e) => e.tech.tactics.includes(tactic.short)).sort((a, b) => a.tech.id.localeCompare(b.tech.id));
    if (techs.length === 0) continue;
    lines.push(`### ${mdText(tactic.name)} (${tactic.id})`, '', '| Technique | Name | Comments | Logs |', '| --- | --- | ---: | ---: |');
    for (const e of techs) lines.push(`| ${e.tech.id} | ${mdText(e.tech.name)} | ${e.comments.size} | ${e.logs.size} |`);
    lines.push('');
  }
  if (revoked.size) lines.push(`Revoked ids counted as their replacements: ${[...revoked].map(([a, b]) => `${a} → ${b}`).join(', ')}.`, '');
  if (unknown.size) lines.push(`Not in ATT&CK Enterprise v${t.version}: ${[...unknown].sort().join(', ')}.`, '');
  return lines.join('\n').trim();
}
