// The project's third-party data (../shared/data beside the checkout: CI's clone and /work/main have
// it there; a worktree one folder deeper finds it a level further up).
import { existsSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

/** The path of a file of shared/data, or an error naming where it was looked for. */
export function sharedData(name: string): string {
  const candidates = [path.resolve(root, '..', 'shared', 'data', name), path.resolve(root, '..', '..', 'shared', 'data', name)];
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`${name} not found in ${candidates.join(' or ')}: the tests need the project's shared/data beside the checkout`);
  return found;
}
