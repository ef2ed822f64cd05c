// The .evtx recordings of the shared data set (EVTX-ATTACK-SAMPLES), unpacked into a temporary
// directory for a test or benchmark: `../shared/data/evtx-attack-samples.tar.gz`.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sharedData } from './shared-data.ts';

export interface EvtxSamples {
  dir: string;
  /** Every .evtx file, sorted by path. */
  files: string[];
  remove(): void;
}

export function unpackEvtxSamples(): EvtxSamples {
  const dir = mkdtempSync(path.join(tmpdir(), 'evtx-samples-'));
  execFileSync('tar', ['-xzf', sharedData('evtx-attack-samples.tar.gz'), '-C', dir]);
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((n) => {
      const p = path.join(d, n);
      return statSync(p).isDirectory() ? walk(p) : p.endsWith('.evtx') ? [p] : [];
    });
  return { dir, files: walk(dir).sort(), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
