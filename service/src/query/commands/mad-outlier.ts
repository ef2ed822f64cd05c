import { defineCommand } from './command.ts';
import { applyModifiedZ, thresholdOf } from './modified-z.ts';

export default defineCommand({
  name: 'madOutlier',
  aliases: ['outlier'],
  tier: 'STANDARD',
  category: 'window',
  signature: 'madOutlier(field, threshold=3.5)',
  description:
    'modifiedZScore() plus _is_outlier: "1" when |_modified_z| > threshold, else "0" (also for rows without a score). The threshold may be positional. Conditions on these columns apply after they exist.',
  outputs: '_median, _mad, _modified_z, _is_outlier (on events also _mz_val, not listed)',
  example: '* | groupBy(user) | madOutlier(_count) | _is_outlier = 1',
  apply: (call, p) => applyModifiedZ(call, p, 'madOutlier', thresholdOf),
});
