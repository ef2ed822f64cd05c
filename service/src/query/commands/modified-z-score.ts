import { defineCommand } from './command.ts';
import { applyModifiedZ } from './modified-z.ts';

export default defineCommand({
  name: 'modifiedZScore',
  aliases: ['modifiedz', 'mzscore'],
  tier: 'STANDARD',
  category: 'window',
  signature: 'modifiedZScore(field)',
  description:
    'Robust z-score of a numeric field or aggregate output over all rows of the stage: _median and _mad (median absolute deviation) of its numeric values, and per row _modified_z = 0.6745·(x − median)/MAD, 4 decimals (0 when MAD is 0; no score when x is not a number). On events the value is also in _mz_val. Conditions on these columns apply after they exist.',
  outputs: '_median, _mad, _modified_z (on events also _mz_val, not listed)',
  example: '* | groupBy(user) | modifiedZScore(_count) | sort(_modified_z, order=desc)',
  apply: (call, p) => applyModifiedZ(call, p, 'modifiedZScore'),
});
