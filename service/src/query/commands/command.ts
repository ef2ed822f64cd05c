// What one query command is: its documentation (served by GET /api/v1/query/reference, so the
// reference is generated from the same registry the planner uses) and how it plans.
import type { Call } from '../syntax/ast.ts';
import type { Pipeline } from '../plan/pipeline.ts';

export type Tier = 'CORE' | 'STANDARD' | 'ADVANCED';
export type Category =
  | 'filter'
  | 'aggregate'
  | 'field'
  | 'string'
  | 'time'
  | 'display'
  | 'join'
  | 'chain'
  | 'window'
  | 'chart'
  | 'enrichment'
  | 'traversal';

export interface CommandDefinition {
  /** Canonical name as query-language.md spells it. */
  name: string;
  aliases?: string[];
  tier: Tier;
  category: Category;
  /** Signature with defaults, e.g. `head(n=200)`. */
  signature: string;
  description: string;
  /** Output columns, as the reference shows them. */
  outputs?: string;
  example: string;
  /** True for commands that aggregate (so `case` branches can make them conditional). */
  aggregates?: boolean;
  /** Plans the command as a pipeline stage. */
  apply?(call: Call, p: Pipeline): void;
  /** Plans the command as a condition operand (`in`, `cidr`, `comment`): SQL over the given stage. */
  condition?(call: Call, p: Pipeline, resolve: (name: string) => import('../plan/columns.ts').Column): string;
}

export const defineCommand = (def: CommandDefinition): CommandDefinition => def;
