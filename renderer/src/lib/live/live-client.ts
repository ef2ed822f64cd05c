// The browser side of the live-edit mechanism (service/src/live): one connection to a document's
// event stream plus its presence beats, for any kind of document (notebooks, dashboards).
//
//   const live = new LiveConnection({
//     path: `/notebooks/${id}`,            // the document's API path, without /api/v1
//     lastEventId: doc.live_event_id,      // handed out with the document: nothing is missed
//     clientId,                            // this tab; also send it as X-Live-Client with writes
//     onEvent: (type, env) => …,           // env = {at, origin, data}; origin === clientId: our own echo
//     onResync: () => reload(),            // missed events are gone: read the document again
//     onPresence: (list) => …,
//     onStatus: (s) => …,                  // connecting | live | reconnecting | closed
//     onClosed: (why) => …,                // the service refused the stream (404, 403, 401) or ended it
//   });
//   live.start(); … live.stop();
//
// The stream is read with fetch (not EventSource) so that a refusal is seen with its status and
// sentence and a dropped connection is retried on our terms: after 1, 2, then 5 s, always sending
// the last event id seen, so the service replays what was missed (or says resync).
import { send, type RequestOptions } from '../api.ts';
import { SseParser } from '../search/sse.ts';

export interface LiveEnvelope<T = any> {
  at: string;
  origin: string | null;
  data: T;
}

export interface PresenceEntry {
  name: string;
  kind: 'user' | 'api_key';
  clients: number;
  since: string;
  last_seen: string;
}

export type LiveStatus = 'connecting' | 'live' | 'reconnecting' | 'closed';

/** How requests are made: the app's send(); tests in Node pass one with a base URL and a cookie. */
export type LiveTransport = (method: string, path: string, opts: RequestOptions) => Promise<Response>;

export interface LiveOptions {
  path: string;
  lastEventId?: string;
  clientId: string;
  onEvent: (type: string, env: LiveEnvelope) => void;
  onResync: () => void;
  onPresence?: (list: PresenceEntry[]) => void;
  onStatus?: (s: LiveStatus) => void;
  /** The stream will not come back: `status` 0 when the service ended it, else its refusal. */
  onClosed?: (why: { status: number; message: string }) => void;
  beatMs?: number;
  retryMs?: number[];
  transport?: LiveTransport;
}

/** A client id the service accepts (letters, digits, _ and -), unique enough per tab. */
export function newClientId(): string {
  const bytes = new Uint8Array(9);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

export class LiveConnection {
  private lastId: string | undefined;
  private stopped = true;
  private ctrl: AbortController | null = null;
  private beatTimer: ReturnType<typeof setInterval> | null = null;
  private attempt = 0;
  private readonly transport: LiveTransport;
  status: LiveStatus = 'closed';

  constructor(private readonly o: LiveOptions) {
    this.lastId = o.lastEventId;
    this.transport = o.transport ?? send;
  }

  /** The id of the last event seen (what a reconnect resumes after). */
  get lastEventId(): string | undefined {
    return this.lastId;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    void this.loop();
    void this.beat();
    this.beatTimer = setInterval(() => void this.beat(), this.o.beatMs ?? 10_000);
  }

  /** Ends the stream and the beats; `leaving` (default) tells the others at once instead of in 30 s. */
  stop(leaving = true): void {
    if (this.stopped) return;
    this.stopped = true;
    this.ctrl?.abort();
    if (this.beatTimer) clearInterval(this.beatTimer);
    this.setStatus('closed');
    if (leaving) {
      void this.transport('POST', `${this.o.path}/presence`, { body: { client_id: this.o.clientId, leaving: true }, keepalive: true, authRedirect: false }).catch(() => {});
    }
  }

  private setStatus(s: LiveStatus): void {
    if (this.status === s) return;
    this.status = s;
    this.o.onStatus?.(s);
  }

  private async beat(): Promise<void> {
    if (this.stopped) return;
    try {
      const res = await this.transport('POST', `${this.o.path}/presence`, { body: { client_id: this.o.clientId } });
      if (!res.ok || this.stopped) return;
      const body = (await res.json()) as { data?: PresenceEntry[] };
      if (body.data) this.o.onPresence?.(body.data);
    } catch {
      /* the stream's reconnects report the trouble */
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      this.setStatus(this.attempt === 0 ? 'connecting' : 'reconnecting');
      const ctrl = new AbortController();
      this.ctrl = ctrl;
      try {
        const res = await this.transport('GET', `${this.o.path}/events`, {
          accept: 'text/event-stream',
          signal: ctrl.signal,
          headers: this.lastId ? { 'Last-Event-ID': this.lastId } : {},
        });
        if (!res.ok || !res.body) {
          // A refusal (gone, no access, signed out) does not get better by retrying.
          if ([400, 401, 403, 404].includes(res.status)) {
            const message = await res
              .json()
              .then((b: { error?: string }) => b.error ?? `HTTP ${res.status}`)
              .catch(() => `HTTP ${res.status}`);
            return this.close({ status: res.status, message });
          }
          throw new Error(`HTTP ${res.status}`);
        }
        const ended = await this.read(res.body);
        if (ended) return this.close({ status: 0, message: 'The service ended the live stream.' });
      } catch {
        if (this.stopped) return;
      }
      const waits = this.o.retryMs ?? [1000, 2000, 5000];
      const wait = waits[Math.min(this.attempt, waits.length - 1)]!;
      this.attempt++;
      this.setStatus('reconnecting');
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  private close(why: { status: number; message: string }): void {
    const wasRunning = !this.stopped;
    this.stop(false);
    if (wasRunning) this.o.onClosed?.(why);
  }

  /** Reads frames until the stream ends; true when the service said `end` (the document is gone). */
  private async read(body: ReadableStream<Uint8Array>): Promise<boolean> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    const parser = new SseParser();
    let final = false;
    for (;;) {
      const { done, value } = await reader.read();
      const frames = done ? parser.end() : parser.push(decoder.decode(value, { stream: true }));
      for (const f of frames) {
        if (f.id !== undefined) this.lastId = f.id;
        let env: LiveEnvelope;
        try {
          env = JSON.parse(f.data) as LiveEnvelope;
        } catch {
          continue;
        }
        if (f.event === 'ready') {
          this.attempt = 0;
          this.setStatus('live');
          this.o.onPresence?.(env.data?.presence ?? []);
        } else if (f.event === 'resync') this.o.onResync();
        else if (f.event === 'presence') this.o.onPresence?.(env.data ?? []);
        else if (f.event === 'end') final = true;
        else this.o.onEvent(f.event, env);
        if (this.stopped) {
          void reader.cancel().catch(() => {});
          return false;
        }
      }
      if (done) return final;
    }
  }
}
