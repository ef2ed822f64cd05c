// Where a feed's rules come from (conventions.md: "cloned with git over https/http, or read from a
// local repository or folder"), through the system's `git` binary:
// - `https://…` / `http://…`: a shallow clone of the branch; an auth token is sent as an HTTP
//   header through git's environment (never in the URL or the command line, so it shows neither
//   in `ps` nor in an error message);
// - `file://…` or a local path to a git repository: the same shallow clone from the repository;
// - a local path to a plain folder: read in place (no branch, no commit).
// git runs without prompts, without the user's or the system's git configuration, and under a
// deadline: a server that hangs is killed and the sync fails naming the wait.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

/** A feed source the sync can read, or the sentence naming what is wrong with `repo_url`. */
export type RepoLocation = { kind: 'remote'; url: string } | { kind: 'git'; url: string; dir: string } | { kind: 'folder'; dir: string };

/** Feed sync failures: their message is the sentence shown as the feed's last sync error. */
export class FeedSourceError extends Error {}

/** Checks `repo_url` and says how it is read; the sentence of a FeedSourceError for a bad one. */
export function locate(repoUrl: string): RepoLocation {
  const url = repoUrl.trim();
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):\/\//.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'https' || scheme === 'http') {
    try {
      new URL(url);
    } catch {
      throw new FeedSourceError(`The field "repo_url" is not a valid URL: ${url}.`);
    }
    if (/^[a-z]+:\/\/[^/]*@/i.test(url)) throw new FeedSourceError('The field "repo_url" must not carry credentials; put the token in "auth_token", which is stored encrypted.');
    return { kind: 'remote', url };
  }
  if (scheme === 'file') {
    let dir: string;
    try {
      dir = decodeURIComponent(new URL(url).pathname);
    } catch {
      throw new FeedSourceError(`The field "repo_url" is not a valid file:// URL: ${url}.`);
    }
    return { kind: 'git', url, dir };
  }
  if (scheme !== undefined || /^[a-zA-Z0-9+.-]+@[^:]+:/.test(url)) {
    throw new FeedSourceError(`The field "repo_url" must be an https://, http:// or file:// URL or a local folder path; "${url.split('://')[0]}" is not supported.`);
  }
  if (!path.isAbsolute(url)) throw new FeedSourceError(`The field "repo_url" must be an absolute folder path (or an https://, http:// or file:// URL); got "${url}".`);
  const dir = path.resolve(url);
  return isGitRepository(dir) ? { kind: 'git', url: pathToFileURL(dir).href, dir } : { kind: 'folder', dir };
}

function isGitRepository(dir: string): boolean {
  return existsSync(path.join(dir, '.git')) || (existsSync(path.join(dir, 'HEAD')) && existsSync(path.join(dir, 'objects')));
}

export interface CheckedOut {
  /** The tree's root folder. */
  root: string;
  /** The commit read, or null for a plain folder. */
  commit: string | null;
  /** Removes what the checkout made (nothing for a folder read in place). */
  dispose(): void;
}

export interface CheckoutOptions {
  branch: string;
  authToken: string | null;
  /** Where temporary clones go (under the data directory). */
  workDir: string;
  timeoutMs: number;
}

/** Runs git with the feed's environment; rejects with FeedSourceError naming what failed. */
function git(args: string[], opts: { cwd?: string; authToken: string | null; timeoutMs: number; secrets: string[] }): Promise<string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: tmpdir(),
    LANG: 'C',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: 'true',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    // A server that stops sending for this long is given up on even before the deadline.
    GIT_HTTP_LOW_SPEED_LIMIT: '1',
    GIT_HTTP_LOW_SPEED_TIME: String(Math.max(5, Math.ceil(opts.timeoutMs / 1000))),
  };
  if (opts.authToken) {
    const basic = Buffer.from(`x-access-token:${opts.authToken}`).toString('base64');
    Object.assign(env, { GIT_CONFIG_COUNT: '1', GIT_CONFIG_KEY_0: 'http.extraHeader', GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}` });
    opts.secrets.push(opts.authToken, basic);
  }
  const scrub = (text: string) => opts.secrets.reduce((t, s) => (s ? t.split(s).join('***') : t), text);
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['-c', 'credential.helper=', '-c', 'protocol.file.allow=always', ...args], {
      cwd: opts.cwd,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString('utf8')).slice(-4000)));
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, 'SIGKILL'); // git and its remote helper
      } catch {
        child.kill('SIGKILL');
      }
      reject(new FeedSourceError(`git did not finish within ${Math.round(opts.timeoutMs / 1000)} s (${scrub(args.filter((a) => !a.startsWith('-')).slice(0, 2).join(' '))}); the server may be unreachable or hanging.`));
    }, opts.timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new FeedSourceError(`git could not be started: ${e.message}. Install git on this machine.`));
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new FeedSourceError(gitFailure(scrub(err))));
    });
  });
}

/** git's complaint as one sentence a person can act on. */
function gitFailure(stderr: string): string {
  const lines = stderr.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('Cloning into'));
  const fatal = lines.find((l) => /^(fatal|error):/.test(l)) ?? lines[lines.length - 1] ?? 'git failed';
  const text = fatal.replace(/^(fatal|error):\s*/, '');
  if (/Remote branch .* not found/i.test(text)) return `The branch does not exist in the repository: ${text}.`;
  if (/could not read Username|Authentication failed|401|403/i.test(text)) return `The repository refused access (check "auth_token"): ${text}.`;
  if (/does not appear to be a git repository|not found|does not exist/i.test(text)) return `The repository was not found: ${text}.`;
  return `git failed: ${text}.`;
}

/** Checks out the feed's branch (or opens its folder) for reading. */
export async function checkout(loc: RepoLocation, opts: CheckoutOptions): Promise<CheckedOut> {
  if (loc.kind === 'folder') {
    if (!existsSync(loc.dir) || !statSync(loc.dir).isDirectory()) throw new FeedSourceError(`The folder ${loc.dir} does not exist on this machine.`);
    return { root: loc.dir, commit: null, dispose: () => {} };
  }
  if (loc.kind === 'git' && !existsSync(loc.dir)) throw new FeedSourceError(`The repository ${loc.dir} does not exist on this machine.`);
  const target = mkdtempSync(path.join(opts.workDir, 'clone-'));
  const dispose = () => rmSync(target, { recursive: true, force: true });
  try {
    const secrets: string[] = [];
    const common = { authToken: opts.authToken, timeoutMs: opts.timeoutMs, secrets };
    await git(['clone', '--quiet', '--depth', '1', '--single-branch', '--no-tags', '--branch', opts.branch, '--', loc.url, target], common);
    const commit = (await git(['rev-parse', 'HEAD'], { ...common, cwd: target })).trim();
    return { root: target, commit, dispose };
  } catch (err) {
    dispose();
    throw err;
  }
}
