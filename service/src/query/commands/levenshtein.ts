import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { Args, valueText } from './args.ts';
import { defineCommand } from './command.ts';

/** Longest input (in characters) ClickHouse's damerauLevenshteinDistance accepts. */
const MAX_CHARS = 65536;

/**
 * Damerau-Levenshtein distance counted in characters. ClickHouse's damerauLevenshteinDistance
 * (the optimal-string-alignment form) compares bytes, so each distinct code point of the pair is
 * first mapped to one byte (its 1-based position in the pair's alphabet). A pair with more than
 * 255 distinct code points cannot be mapped so: it gets the Levenshtein distance in characters
 * (editDistanceUTF8, no transpositions). Inputs longer than these functions take (65536 characters,
 * resp. bytes) give an empty (null) distance instead of failing the query.
 */
function distanceSql(a: string, b: string): string {
  const alphabet = `arrayDistinct(arrayConcat(ngrams(${a}, 1), ngrams(${b}, 1)))`;
  const mapped = (s: string) => `arrayStringConcat(arrayMap(c -> char(indexOf(${alphabet}, c)), ngrams(${s}, 1)))`;
  return (
    `multiIf(lengthUTF8(${a}) > ${MAX_CHARS} OR lengthUTF8(${b}) > ${MAX_CHARS}, NULL, ` +
    `length(${alphabet}) <= 255, damerauLevenshteinDistance(${mapped(a)}, ${mapped(b)}), ` +
    `length(${a}) > ${MAX_CHARS} OR length(${b}) > ${MAX_CHARS}, NULL, ` +
    `editDistanceUTF8(${a}, ${b}))`
  );
}

export default defineCommand({
  name: 'levenshtein',
  tier: 'STANDARD',
  category: 'string',
  signature: 'levenshtein(a, b)',
  description:
    'Damerau-Levenshtein distance (insertions, deletions, substitutions and adjacent transpositions, in characters) between the values of two fields. Quoted arguments are still field names: assign a constant first. The output is a number.',
  outputs: '_distance (number)',
  example: '* | base := "svchost.exe" | levenshtein(process_name, base) | _distance < 3',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly([]);
    if (args.positional.length !== 2) {
      throw new QueryCompileError('levenshtein() requires two fields, e.g. levenshtein(process_name, base)', call.span);
    }
    const [a, b] = args.positional.map(valueText);
    const stage = p.rowStage();
    const sql = distanceSql(asText(p.resolveIn(stage, a)), asText(p.resolveIn(stage, b)));
    p.addComputed('_distance', sql, 'number', { stage });
  },
});
