import { asText } from '../plan/columns.ts';
import { QueryCompileError } from '../plan/errors.ts';
import { Args } from './args.ts';
import { defineCommand } from './command.ts';
import { captureGroups } from './regex-groups.ts';

export default defineCommand({
  name: 'regex',
  tier: 'CORE',
  category: 'string',
  signature: 'regex("pattern", field=norm_log, as=name)',
  description:
    'Extracts from a field (default the whole event text) without filtering rows: each named group (?<name>…) becomes a column; without named groups, as=name gets the first capture group (or the whole match); without either, regex_match holds the list of matches.',
  outputs: 'named groups, or as=, or regex_match',
  example: '* | regex(field=image, regex="(.+)\\\\\\\\(?<executable_name>.*\\\\.exe)")',
  apply(call, p) {
    const args = new Args(call);
    args.allowOnly(['regex', 'pattern', 'field', 'as']);
    const pattern = args.text(['regex', 'pattern'], 0);
    if (!pattern) throw new QueryCompileError('regex() requires a pattern, e.g. regex("user=(?<user>\\\\w+)")', call.span);
    const field = args.text(['field'], args.has('regex') || args.has('pattern') ? 0 : 1) ?? 'norm_log';
    p.regexes.push(pattern);
    const stage = p.rowStage();
    const text = asText(p.resolveIn(stage, field));
    const pat = p.params.text(pattern);
    const groups = captureGroups(pattern);
    const named = groups.filter((g) => g.name);
    const as = args.text(['as']);
    if (named.length) {
      for (const g of named) p.addComputed(g.name!, `regexpExtract(${text}, ${pat}, ${g.index})`, 'text', { stage });
    } else if (as) {
      p.addComputed(as, `regexpExtract(${text}, ${pat}, ${groups.length ? 1 : 0})`, 'text', { stage });
    } else {
      p.addComputed('regex_match', `extractAll(${text}, ${pat})`, 'list', { stage });
    }
  },
});
