// head() and tail(): the earliest/latest events, or the first/last aggregated rows (§3.6).
import type { Pipeline } from '../plan/pipeline.ts';
import type { Call } from '../syntax/ast.ts';
import { Args } from './args.ts';

export function applyEdge(call: Call, p: Pipeline, which: 'head' | 'tail'): void {
  const n = new Args(call).int(['n'], 0, 200);
  const stage = p.current;
  stage.edge = { which, n };
  p.hasOwnLimit = true;
}
