// The rule files of a checked-out feed and what each one is: a Sigma rule (translated through the
// feed's normalizer), a native alert (the alert fields of conventions.md, imported unchanged),
// or something that is skipped with the reason. Thresholds (min severity, min status) are applied
// here; whether a translation compiles is checked by the sync, all rules at once.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { SEVERITIES, STATUSES, type Feed, type FeedRule } from './feeds-store.ts';
import { asText, looksLikeSigma, readRuleMeta, readSigmaRule, readYaml, type Plain, type RuleMeta } from './sigma/rule.ts';
import { SigmaSkip, type SkipCode } from './sigma/skip.ts';
import { translateRule } from './sigma/translate.ts';
import { FeedSourceError } from './git.ts';

/** A rule file bigger than this is not read (SigmaHQ's largest is a few KB). */
export const MAX_RULE_BYTES = 1024 * 1024;
/** More rule files than this under a feed's path and the sync stops with a message. */
export const MAX_RULE_FILES = 50_000;

/** What the sync makes of one file: the alert it becomes, or why it does not. */
export type RuleOutcome = {
  rule: FeedRule;
  /** The alert fields (for an imported rule). */
  alert?: Record<string, unknown>;
};

/** Every `.yml` / `.yaml` file under `root/sub` (hidden folders such as .git and .github left out), as paths relative to root. */
export function ruleFiles(root: string, sub: string): string[] {
  const cleaned = sub.replace(/^\/+|\/+$/g, '');
  const start = path.resolve(root, cleaned);
  if (start !== root && !start.startsWith(root + path.sep)) throw new FeedSourceError(`The path "${sub}" leaves the repository.`);
  let st;
  try {
    st = statSync(start);
  } catch {
    throw new FeedSourceError(`The path "${cleaned}" does not exist in the repository.`);
  }
  if (!st.isDirectory()) return /\.ya?ml$/i.test(start) ? [path.relative(root, start)] : [];
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name.startsWith('.')) continue;
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile() && /\.ya?ml$/i.test(entry.name)) {
        out.push(path.relative(root, p).split(path.sep).join('/'));
        if (out.length > MAX_RULE_FILES) throw new FeedSourceError(`The path "${cleaned}" holds more than ${MAX_RULE_FILES} YAML files; point the feed at a folder of rules.`);
      }
    }
  };
  walk(start);
  return out.sort();
}

const rank = <T extends string>(list: readonly T[], v: string | null): number => (v === null ? -1 : list.indexOf(v as T));

function skipped(source_path: string, kind: FeedRule['kind'], meta: Partial<RuleMeta> | null, code: SkipCode, reason: string): RuleOutcome {
  return {
    rule: {
      source_path,
      kind,
      rule_id: meta?.id ?? null,
      title: meta?.title ?? path.basename(source_path),
      level: meta?.level ?? null,
      status: meta?.status ?? null,
      tags: meta?.tags ?? [],
      imported: false,
      reason_code: code,
      reason,
    },
  };
}

/** A Sigma rule's level as an alert severity (Sigma's levels are the alert severities). */
function severityOf(level: string | null): string {
  return level && (SEVERITIES as readonly string[]).includes(level) ? level : 'medium';
}

function sigmaOutcome(feed: Feed, sourcePath: string, doc: Plain, fieldName: (n: string) => string): RuleOutcome {
  let meta: RuleMeta;
  try {
    meta = readRuleMeta(doc);
  } catch (err) {
    if (err instanceof SigmaSkip) return skipped(sourcePath, 'sigma', null, err.code, err.message);
    throw err;
  }
  if (rank(SEVERITIES, meta.level) < rank(SEVERITIES, feed.min_severity)) {
    return skipped(sourcePath, 'sigma', meta, 'below_min_severity', `level ${meta.level ?? '(none)'} is below the feed's minimum severity ${feed.min_severity}`);
  }
  if (rank(STATUSES, meta.status) < rank(STATUSES, feed.min_status)) {
    return skipped(sourcePath, 'sigma', meta, 'below_min_status', `status ${meta.status ?? '(none)'} is below the feed's minimum status ${feed.min_status}`);
  }
  try {
    const { query } = translateRule(readSigmaRule(doc), fieldName);
    return {
      rule: { source_path: sourcePath, kind: 'sigma', rule_id: meta.id, title: meta.title, level: meta.level, status: meta.status, tags: meta.tags, imported: true, reason_code: null, reason: null },
      alert: {
        name: meta.title,
        description: meta.description,
        query_string: query,
        alert_type: 'event',
        severity: severityOf(meta.level),
        labels: meta.tags,
        references: meta.references,
      },
    };
  } catch (err) {
    if (err instanceof SigmaSkip) return skipped(sourcePath, 'sigma', meta, err.code, err.message);
    throw err;
  }
}

function alertOutcome(feed: Feed, sourcePath: string, doc: { [k: string]: Plain }): RuleOutcome {
  const meta = {
    title: asText(doc.name) ?? path.basename(sourcePath),
    level: asText(doc.severity),
    tags: Array.isArray(doc.labels) ? doc.labels.map(asText).filter((x): x is string => x !== null) : [],
  };
  if (meta.level !== null && rank(SEVERITIES, meta.level) < rank(SEVERITIES, feed.min_severity)) {
    return skipped(sourcePath, 'alert', meta, 'below_min_severity', `severity ${meta.level} is below the feed's minimum severity ${feed.min_severity}`);
  }
  // The alert's own fields as written; its scope is the feed's, whatever the file says.
  const alert: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(doc)) {
    if (k === 'fractal_id' || k === 'prism_id' || k === 'id') continue;
    alert[k] = toJs(v);
  }
  return {
    rule: { source_path: sourcePath, kind: 'alert', rule_id: asText(doc.id), title: meta.title, level: meta.level, status: null, tags: meta.tags, imported: true, reason_code: null, reason: null },
    alert,
  };
}

/** Plain YAML values as JSON values (numbers as numbers). */
function toJs(v: Plain): unknown {
  if (Array.isArray(v)) return v.map(toJs);
  if (v !== null && typeof v === 'object') {
    if ('number' in v && 'text' in v && Object.keys(v).length === 2) return v.number;
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, toJs(x as Plain)]));
  }
  return v;
}

/** What one rule file becomes. */
export function ruleOutcome(feed: Feed, sourcePath: string, text: string, fieldName: (n: string) => string): RuleOutcome {
  let doc: Plain;
  try {
    doc = readYaml(text);
  } catch (err) {
    if (err instanceof SigmaSkip) return skipped(sourcePath, 'unknown', null, err.code, err.message);
    throw err;
  }
  if (looksLikeSigma(doc)) return sigmaOutcome(feed, sourcePath, doc, fieldName);
  if (doc !== null && typeof doc === 'object' && !Array.isArray(doc) && 'query_string' in doc) return alertOutcome(feed, sourcePath, doc as { [k: string]: Plain });
  return skipped(sourcePath, 'unknown', null, 'not_a_rule', 'neither a Sigma rule (no detection) nor an alert (no query_string)');
}

/** Reads and classifies every rule file under the feed's path. */
export function readRules(feed: Feed, root: string, fieldName: (n: string) => string): RuleOutcome[] {
  return ruleFiles(root, feed.path).map((rel) => {
    const full = path.join(root, rel);
    const size = statSync(full).size;
    if (size > MAX_RULE_BYTES) return skipped(rel, 'unknown', null, 'too_large', `the file is ${size} bytes; rule files are read up to ${MAX_RULE_BYTES}`);
    return ruleOutcome(feed, rel, readFileSync(full, 'utf8'), fieldName);
  });
}
