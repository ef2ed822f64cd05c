// Starts a real appliance for a test file: real embedded ClickHouse, a real SQLite file in a
// fresh temporary data dir, real HTTP on a loopback port chosen by the OS.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startAppliance, type Appliance } from '../../service/src/appliance.ts';
import { loadConfig } from '../../service/src/config.ts';

export const ADMIN_PASSWORD = 'correct-horse-battery';

export interface TestAppliance extends Appliance {
  dataDir: string;
  /** Stops the service and removes its data dir. */
  dispose(): Promise<void>;
}

export async function startTestAppliance(env: Record<string, string> = {}, dataDir?: string): Promise<TestAppliance> {
  const dir = dataDir ?? mkdtempSync(path.join(tmpdir(), 'svc-test-'));
  const config = loadConfig({
    SVC_HOST: '127.0.0.1',
    SVC_PORT: '0',
    SVC_DATA_DIR: dir,
    SVC_ADMIN_PASSWORD: ADMIN_PASSWORD,
    SVC_LOG_LEVEL: 'silent',
    ...env,
  });
  const a = await startAppliance(config, { log: false });
  return Object.assign(a, {
    dataDir: dir,
    async dispose() {
      await a.stop();
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    },
  });
}

/** The default fractal of a fresh appliance and the value of the ingest token it was made with. */
export function defaultIngest(a: TestAppliance): { fractalId: string; token: string } {
  const f = a.context.fractals.defaultFractal()!;
  return { fractalId: f.id, token: a.context.ingestTokens.reveal(a.context.ingestTokens.list(f.id)[0]!) };
}

export interface Res<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

/** A small HTTP client that keeps its own session cookie, like one browser. */
export class Client {
  cookie = '';
  constructor(
    readonly base: string,
    readonly headers: Record<string, string> = {},
  ) {}

  async req<T = any>(method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Res<T>> {
    const h: Record<string, string> = { ...this.headers, ...headers };
    if (this.cookie) h.cookie = this.cookie;
    let payload: string | undefined;
    if (body !== undefined) {
      payload = typeof body === 'string' ? body : JSON.stringify(body);
      h['content-type'] ??= 'application/json';
    }
    const r = await fetch(this.base + url, { method, headers: h, body: payload });
    const set = r.headers.get('set-cookie');
    if (set) {
      const first = set.split(';')[0]!;
      this.cookie = first.endsWith('=') ? '' : first;
    }
    const text = await r.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      /* not JSON */
    }
    return { status: r.status, headers: r.headers, body: parsed as T };
  }
  get<T = any>(url: string, headers?: Record<string, string>) {
    return this.req<T>('GET', url, undefined, headers);
  }
  post<T = any>(url: string, body?: unknown, headers?: Record<string, string>) {
    return this.req<T>('POST', url, body ?? {}, headers);
  }
  put<T = any>(url: string, body?: unknown) {
    return this.req<T>('PUT', url, body ?? {});
  }
  del<T = any>(url: string) {
    return this.req<T>('DELETE', url);
  }
}

export async function signIn(base: string, username: string, password: string): Promise<Client> {
  const c = new Client(base);
  const r = await c.post('/api/v1/auth/login', { username, password });
  if (r.status !== 200) throw new Error(`sign-in as ${username} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return c;
}

/** The password makeUser() gives a user. */
export const passwordOf = (username: string) => `${username}-password-1`;

/** Creates a user through the API and signs them in. */
export async function makeUser(admin: Client, username: string, opts: { isAdmin?: boolean } = {}): Promise<Client> {
  const password = passwordOf(username);
  const r = await admin.post('/api/v1/users', { username, password, is_admin: opts.isAdmin ?? false });
  if (r.status !== 201) throw new Error(`creating ${username} failed: ${r.status} ${JSON.stringify(r.body)}`);
  return signIn(admin.base, username, password);
}
