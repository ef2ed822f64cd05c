// The project's third-party data (`shared/data`, see its README). Where a checkout finds it:
// SVC_TEST_SHARED_DATA when set; else `shared/data` beside the checkout or beside any folder above
// it (CI's clone, /work/main, a worktree deeper down); else beside the repository a local clone was
// made from (`git clone . /tmp/x/p` has /work/main as its origin).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');

/** The folders of its own and of its origin's ancestry a checkout looks in, nearest first. */
function candidateFolders(): string[] {
  const fromEnv = process.env.SVC_TEST_SHARED_DATA ? [path.resolve(process.env.SVC_TEST_SHARED_DATA)] : [];
  const besideAncestors = (start: string): string[] => {
    const out: string[] = [];
    for (let dir = path.dirname(start); ; dir = path.dirname(dir)) {
      out.push(path.join(dir, 'shared', 'data'));
      if (path.dirname(dir) === dir) return out;
    }
  };
  let origin: string | null = null;
  try {
    const url = execFileSync('git', ['-C', root, 'config', '--get', 'remote.origin.url'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const local = url.startsWith('file://') ? url.slice('file://'.length) : url;
    if (path.isAbsolute(local) && existsSync(local)) origin = local;
  } catch {
    // not a git checkout, or no origin: only the checkout's own ancestry counts
  }
  return [...new Set([...fromEnv, ...besideAncestors(root), ...(origin ? besideAncestors(origin) : [])])];
}

let folders: string[] | null = null;

/** The path of a file of shared/data, or an error naming where it was looked for. */
export function sharedData(name: string): string {
  folders ??= candidateFolders();
  const found = folders.map((f) => path.join(f, name)).find((p) => existsSync(p));
  if (!found) throw new Error(`${name} not found in ${folders.join(', ')}: the tests need the project's shared/data (set SVC_TEST_SHARED_DATA to its path)`);
  return found;
}
