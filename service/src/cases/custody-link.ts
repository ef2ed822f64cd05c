// The custody log (evidence/custody/) as a case archive carries it: the source fractal's entries
// travel in custody.ndjson unchanged, so their chain still verifies on the other appliance
// (`verifyEntries`; each entry's hash covers its original fractal id, so they cannot join the new
// fractal's chain as rows). The new fractal's chain starts with a `case-import` entry that holds
// them, with their head hash and the archive's hash: one verified chain, carrying the old one.
import { verifyEntries, type CustodyEntry } from '../evidence/custody/index.ts';

/** The carried entries checked as a chain: null when intact, else why not (naming the entry). */
export function carriedChainProblem(entries: unknown[]): string | null {
  if (!entries.every((e) => typeof e === 'object' && e !== null && !Array.isArray(e))) return 'a line is not a custody entry';
  const verdict = verifyEntries(entries as CustodyEntry[]);
  return verdict.ok ? null : `the carried custody log does not verify: ${verdict.reason}`;
}

/** What the `case-import` entry records of the carried log. */
export function carriedCustody(entries: CustodyEntry[]): { entries: CustodyEntry[]; head_hash: string | null } {
  const verdict = verifyEntries(entries);
  return { entries, head_hash: verdict.ok && entries.length ? verdict.head_hash : null };
}
