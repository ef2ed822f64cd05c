import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { Args, valueText } from './args.ts';
import { defineCommand } from './command.ts';
import { captureGroups } from './regex-groups.ts';

const USAGE = 'replace("pattern", "replacement", field, output)';
/** An output column name: an identifier of query-language.md §1.1 (no `*`, which would read as a wildcard). */
const OUTPUT_NAME = /^[\p{L}_][\p{L}\p{N}_.-]*$/u;

export default defineCommand({
  name: 'replace',
  tier: 'STANDARD',
  category: 'string',
  signature: 'replace("pattern", "replacement", field, output)',
  description:
    'Replaces every match of an RE2 pattern in a field and writes the result to the output column. Strictly positional: field defaults to norm_log (the whole event text), output to the field itself (overwritten for the rest of the pipeline); as= is rejected. The replacement refers to capture groups as \\1…\\9 and to the whole match as \\0 (write "\\\\1" in the query); \\\\ is a literal backslash.',
  outputs: 'output (default: the field)',
  example: '* | replace("\\\\d{4}", "XXXX", card, card_masked)',
  apply(call, p) {
    const args = new Args(call);
    for (const a of call.args) {
      if (a.key === undefined) continue;
      const k = a.key.toLowerCase();
      if (k === 'as' || k === 'output') {
        throw new QueryCompileError(`replace(): invalid output field: ${a.key}=${valueText(a.value)} (the output is the fourth positional argument: ${USAGE})`, a.span);
      }
    }
    args.allowOnly([]);
    if (args.positional.length > 4) {
      throw new QueryCompileError(`replace() takes at most 4 arguments: ${USAGE}`, args.positional[4].span);
    }
    const [patternArg, replacementArg, fieldArg, outputArg] = args.positional;
    if (!patternArg || !replacementArg) {
      throw new QueryCompileError(`replace() requires a pattern and a replacement, e.g. replace("\\\\d{4}", "XXXX", card, card_masked)`, call.span);
    }
    const pattern = valueText(patternArg);
    const replacement = valueText(replacementArg);
    const field = fieldArg ? valueText(fieldArg) : 'norm_log';
    const output = outputArg ? valueText(outputArg) : field;
    if (!OUTPUT_NAME.test(output)) throw new QueryCompileError(`replace(): invalid output field: "${output}"`, outputArg?.span ?? call.span);

    // ClickHouse's replaceRegexpAll reads \0…\9 exactly as the spec's replacement does (and
    // `\\` as one backslash); a reference to a group the pattern lacks would fail at run time.
    const groups = captureGroups(pattern).length;
    for (let i = 0; i < replacement.length; i++) {
      if (replacement[i] !== '\\') continue;
      const next = replacement[i + 1] ?? '';
      if (/[0-9]/.test(next) && Number(next) > groups) {
        throw new QueryCompileError(
          `replace(): the replacement refers to group \\${next} but the pattern has ${groups} capture group${groups === 1 ? '' : 's'}`,
          replacementArg.span,
        );
      }
      i++;
    }

    p.regexes.push(pattern);
    const stage = p.rowStage();
    const text = asText(p.resolveIn(stage, field));
    p.addComputed(output, `replaceRegexpAll(${text}, ${p.params.text(pattern)}, ${p.params.text(replacement)})`, 'text', { stage });
  },
});
