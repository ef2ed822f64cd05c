// A real server-sent-events reader for the live-edit streams (GET …/events), as a second browser
// would hold one: the session's cookie or API key, an optional Last-Event-ID, and the frames parsed
// by the UI's own parser. `next()` waits for the next event of a type (with a deadline, not a sleep).
import { SseParser, type SseFrame } from '../../renderer/src/lib/search/sse.ts';
import type { Client } from './appliance.ts';
import { WAIT_MS } from './wait.ts';

export interface LiveFrame {
  event: string;
  id?: string;
  /** The frame's data, parsed: {at, origin, data}. */
  body: { at: string; origin: string | null; data: any };
}

export class LiveReader {
  readonly frames: LiveFrame[] = [];
  private read = 0;
  private waiters: Array<() => void> = [];
  ended = false;
  status = 0;
  headers: Headers | null = null;
  private readonly ctrl = new AbortController();

  private constructor() {}

  /** Opens the stream of `path` (e.g. /api/v1/notebooks/<id>/events) as `client`. */
  static async open(client: Client, path: string, opts: { lastEventId?: string; query?: string } = {}): Promise<LiveReader> {
    const r = new LiveReader();
    const headers: Record<string, string> = { ...client.headers, accept: 'text/event-stream' };
    if (client.cookie) headers.cookie = client.cookie;
    if (opts.lastEventId) headers['last-event-id'] = opts.lastEventId;
    const res = await fetch(client.base + path + (opts.query ?? ''), { headers, signal: r.ctrl.signal });
    r.status = res.status;
    r.headers = res.headers;
    if (!res.ok || !res.body) {
      r.ended = true;
      r.errorBody = await res.text();
      return r;
    }
    void r.pump(res.body);
    return r;
  }

  errorBody = '';

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const parser = new SseParser();
    const decoder = new TextDecoder();
    const push = (frames: SseFrame[]) => {
      for (const f of frames) this.frames.push({ event: f.event, id: f.id, body: JSON.parse(f.data) });
      this.wake();
    };
    try {
      for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) push(parser.push(decoder.decode(chunk, { stream: true })));
      push(parser.end());
    } catch {
      /* aborted or cut */
    }
    this.ended = true;
    this.wake();
  }

  private wake() {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** The next frame not read yet whose event is `type` (any when omitted); skips others. */
  async next(type?: string, timeoutMs = WAIT_MS): Promise<LiveFrame> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      while (this.read < this.frames.length) {
        const f = this.frames[this.read++]!;
        if (type === undefined || f.event === type) return f;
      }
      if (this.ended) throw new Error(`stream ended before a ${type ?? 'frame'} arrived; got ${this.frames.map((f) => f.event).join(', ')}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${type ?? 'frame'} within ${timeoutMs} ms; got ${this.frames.map((f) => f.event).join(', ')}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  /** Frames of a type received so far (read or not). */
  all(type: string): LiveFrame[] {
    return this.frames.filter((f) => f.event === type);
  }

  /** The id of the last frame that had one: what a browser would send as Last-Event-ID. */
  lastId(): string | undefined {
    for (let i = this.frames.length - 1; i >= 0; i--) if (this.frames[i]!.id) return this.frames[i]!.id;
    return undefined;
  }

  /** Waits until the stream ends (the server closed it). */
  async waitEnd(timeoutMs = WAIT_MS): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ended) {
      if (Date.now() > deadline) throw new Error('the stream did not end');
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, Math.max(1, deadline - Date.now()));
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }

  close(): void {
    this.ctrl.abort();
  }
}

/** Waits (with a deadline) until the stream's latest presence lists exactly these names, in order. */
export async function waitForPresence(stream: LiveReader, names: string[]): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const last = stream.all('presence').at(-1);
    if (last && JSON.stringify(last.body.data.map((e: any) => e.name)) === JSON.stringify(names)) return;
    if (Date.now() > deadline) throw new Error(`presence never became ${names.join(', ')}`);
    await stream.next('presence', Math.max(1, deadline - Date.now())).catch(() => undefined);
  }
}
