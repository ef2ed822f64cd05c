// A Sigma rule translated into the query language (conventions.md "Feeds and Sigma"):
//   [levenshtein(a, b) |] [sigma_category=<category> AND] (<condition over the selections>)
// - Each selection is an OR of groups, each group the AND of its items (matchers.ts), with field
//   names passed through the feed's normalizer, so a rule's `CommandLine` lands on whatever name
//   the logs got.
// - `logsource.category` becomes a prefilter on `sigma_category` (set by a normalizer's value
//   mapping), the four registry categories and `registry_event` meeting on `registry_event`, and
//   `file_create` on `file_event`; a rule without a category has none.
// - The one `fieldref` a rule may have is computed first as `_distance` between the two fields.
import type { Condition } from '../../query/syntax/ast.ts';
import { printCondition } from '../../query/syntax/printer.ts';
import { translateCondition } from './condition.ts';
import { itemCondition } from './matchers.ts';
import type { Item } from './modifiers.ts';
import { and, compare, or } from './query-ast.ts';
import type { SigmaRule } from './rule.ts';
import { SigmaSkip } from './skip.ts';

/** Sigma categories the prefilter maps onto another value (every other category is used as it is). */
export const CATEGORY_ALIASES: Record<string, string> = {
  registry_add: 'registry_event',
  registry_set: 'registry_event',
  registry_delete: 'registry_event',
  registry_rename: 'registry_event',
  file_create: 'file_event',
};

export const CATEGORY_FIELD = 'sigma_category';

/** The `sigma_category` value a rule's logsource category is matched on, or null (no prefilter). */
export function categoryValue(category: string | undefined): string | null {
  const c = category?.trim().toLowerCase();
  if (!c) return null;
  return CATEGORY_ALIASES[c] ?? c;
}

/** What a field name must look like to be written in a query (query-language.md §1.1: an identifier). */
const IDENTIFIER = /^[\p{L}_][\p{L}\p{Nd}_.-]*$/u;
const KEYWORDS = new Set(['and', 'or', 'not']);

function queryField(sigmaName: string, fieldName: (name: string) => string): string {
  const stored = fieldName(sigmaName);
  if (!IDENTIFIER.test(stored) || KEYWORDS.has(stored.toLowerCase())) {
    const via = stored === sigmaName ? '' : ` (the normalizer makes it "${stored}")`;
    throw new SigmaSkip('unknown_field', `the field "${sigmaName}"${via} has no name the query language can use`);
  }
  return stored;
}

export interface Translation {
  query: string;
  /** The category prefilter's value, or null. */
  category: string | null;
}

/** The query of a rule; SigmaSkip with the reason when part of it cannot be translated. */
export function translateRule(rule: SigmaRule, fieldName: (sigmaName: string) => string): Translation {
  const fieldrefs: Array<{ field: string; other: string }> = [];
  const itemOf = (it: Item): Condition => {
    const field = it.field === null ? null : queryField(it.field, fieldName);
    if (it.kind === 'fieldref' && field !== null) {
      const other = it.raw[0];
      if (typeof other !== 'string') throw new SigmaSkip('invalid_value', `fieldref of "${it.field}" must name a field`);
      fieldrefs.push({ field, other: queryField(other, fieldName) });
    }
    return itemCondition(it, field);
  };
  const selections = new Map<string, Condition>();
  for (const [name, groups] of rule.selections) selections.set(name, or(groups.map((items) => and(items.map(itemOf)))));

  const detection = or(rule.conditions.map((c) => translateCondition(c, selections)));
  const unique = [...new Map(fieldrefs.map((f) => [`${f.field}\u0000${f.other}`, f])).values()];
  if (unique.length > 1) throw new SigmaSkip('unsupported_value', 'more than one fieldref in a rule cannot be translated');

  const category = categoryValue(rule.logsource.category);
  const condition = category === null ? detection : and([compare(CATEGORY_FIELD, '=', [category]), detection]);
  const text = printCondition(condition);
  const pre = unique.length === 1 ? `levenshtein(${unique[0]!.field}, ${unique[0]!.other}) | ` : '';
  return { query: pre + text, category };
}
