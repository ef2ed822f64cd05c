// lowercase() and uppercase(): a field's text with Unicode case mapping, written to `output`
// (named or the second argument), else over the field itself for the rest of the pipeline.
import { asText } from '../plan/columns.ts';
import type { Pipeline } from '../plan/pipeline.ts';
import type { Call } from '../syntax/ast.ts';
import { Args } from './args.ts';

export function applyLetterCase(call: Call, p: Pipeline, command: 'lowercase' | 'uppercase', exampleField: string): void {
  const args = new Args(call);
  args.allowOnly(['field', 'output']);
  const field = args.field(['field'], 0, `${command}() requires a field, e.g. ${command}(${exampleField})`);
  const output = args.text(['output'], args.has('field') ? 0 : 1) || field;
  const stage = p.rowStage();
  const fn = command === 'lowercase' ? 'lowerUTF8' : 'upperUTF8';
  p.addComputed(output, `${fn}(${asText(p.resolveIn(stage, field))})`, 'text', { stage });
}
