// GET /api/v1/query/reference: generated from the command registry the planner uses, plus the
// operators of query-language.md §2, so the editor's completion and docs cannot drift.
import { COMMANDS } from './commands/registry.ts';

const OPERATORS = [
  { op: '=', description: 'equals as text (numeric columns compare numerically); a comma list means any of' },
  { op: '!=', description: 'not equal; with a list, none of' },
  { op: '=*', description: 'f=* : the field is present and non-empty (f!=* : absent or empty)' },
  { op: '=/re/', description: 'RE2 regex finds a match (flag i: case-insensitive)' },
  { op: '=~', description: 'contains any of the terms, case-insensitive' },
  { op: '=^', description: 'starts with any of the terms, case-insensitive' },
  { op: '=$', description: 'ends with any of the terms, case-insensitive' },
  { op: '>', description: 'numeric comparison (also >=, <, <=)' },
  { op: ':=', description: 'assignment: text, a copy of a field, or arithmetic' },
];

export function commandReference() {
  return {
    commands: COMMANDS.map((c) => ({
      name: c.name,
      aliases: c.aliases ?? [],
      tier: c.tier,
      category: c.category,
      signature: c.signature,
      description: c.description,
      outputs: c.outputs ?? '',
      example: c.example,
      condition: !!c.condition,
    })),
    operators: OPERATORS,
    keywords: ['AND', 'OR', 'NOT'],
    reserved_fields: ['timestamp', 'log_id', 'norm_log', 'normalizer', 'fractal_id'],
  };
}
