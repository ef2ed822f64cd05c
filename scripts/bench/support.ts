// Shared pieces of the benchmarks under scripts/bench: a fresh data directory and figures. They
// start the appliance, sign in and drive Chromium with the tests' own helpers (tests/support/).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export const root = path.resolve(import.meta.dirname, '../..');

/** A new, empty data directory under the system's temporary directory. */
export const freshDataDir = (prefix: string): string => mkdtempSync(path.join(tmpdir(), `${prefix}-`));

/** Thousands separators, no decimals. */
export const fmt = (n: number): string => Math.round(n).toLocaleString('en-US');

export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
