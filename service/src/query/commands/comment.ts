import { QueryCompileError } from '../plan/errors.ts';
import { Args, listOf } from './args.ts';
import { defineCommand } from './command.ts';

export default defineCommand({
  name: 'comment',
  aliases: ['comments'],
  tier: 'STANDARD',
  category: 'filter',
  signature: 'comment(tags=t1,t2, keyword="text")',
  description:
    'Keeps events carrying at least one analyst comment. tags= (or tag=; extra bare arguments are more tags): a comment with any of the tags (exact, case-sensitive). keyword=: the comment text contains it (case-insensitive). Both: the same comment must match both. No comment matching: empty result. !comment() negates.',
  example: '* | comment(tags=incident) | groupBy(src_ip)',
  condition(call, p) {
    const args = new Args(call);
    args.allowOnly(['tags', 'tag', 'keyword']);
    const tags = [
      ...['tags', 'tag'].flatMap((k) => {
        const v = args.value([k]);
        return v ? listOf(v) : [];
      }),
      ...args.positional.flatMap(listOf),
    ];
    const keyword = args.text(['keyword']) || undefined;
    const lookup = p.options.commentedLogIds;
    if (!lookup) throw new QueryCompileError('comment() cannot read comments here', call.span);
    // Comments belong to single events: after an aggregation there is no log_id to match.
    if (!p.current.isEvents || p.current.agg) {
      throw new QueryCompileError('comment() filters events: use it before the first aggregation', call.span);
    }
    const filter = { tags: [...new Set(tags)], keyword };
    const fractals = p.options.fractalIds;
    if (fractals.length <= 1) return `log_id IN ${p.params.bind(lookup(fractals, filter), 'Array(UUID)')}`;
    // Across a prism each fractal's comments match only that fractal's events, even should two
    // fractals hold the same log id.
    const parts = fractals.flatMap((f) => {
      const ids = lookup([f], filter);
      return ids.length ? [`(fractal_id IN ${p.params.bind([f], 'Array(UUID)')} AND log_id IN ${p.params.bind(ids, 'Array(UUID)')})`] : [];
    });
    return parts.length ? `(${parts.join(' OR ')})` : `log_id IN ${p.params.bind([], 'Array(UUID)')}`;
  },
});
