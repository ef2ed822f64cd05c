// The one live-edit mechanism (notebooks, dashboards): a channel per document, named by its kind and
// id ("notebook", <uuid>), that carries every change as a server-sent event, remembers the latest ones
// so a browser that reconnects resumes where it stopped, and keeps who has the document open.
// It knows nothing of what a document is: a domain publishes after each stored change and declares
// the routes of its documents with live/routes.ts.
//
//   const cursor = hub.cursor('notebook', id);          // give it to the reader with the document
//   hub.publish('notebook', id, 'section_updated', section, origin);   // after the change is stored
//   hub.end('notebook', id, 'notebook_deleted', { id });            // the document is gone
//
// Event ids are `<boot>-<seq>`: seq comes from one counter of the hub, so it only grows (across all
// channels), and boot names this process, so an id from before a restart is known to be foreign.
// A channel can replay every event after a given id while that id is not older than its `floor`,
// the last event it no longer holds; a reader asking from further back (or from another boot) gets
// `resync`: reload the document, then carry on from the id that event carries.
import { randomBytes } from 'node:crypto';

/** One stored change, as sent: `frame` is the whole SSE frame, written as is to every reader. */
export interface LiveEvent {
  id: string;
  seq: number;
  type: string;
  frame: string;
}

/** Who has a document open (one entry per user or API key, however many tabs). */
export interface PresenceEntry {
  name: string;
  kind: 'user' | 'api_key';
  /** Browser tabs or clients beating for it. */
  clients: number;
  since: string;
  last_seen: string;
}

/** The identity a beat counts for: `key` is unique per user or API key, `name` is what is shown. */
export interface PresenceIdentity {
  key: string;
  name: string;
  kind: 'user' | 'api_key';
}

/**
 * What a reader is handed: a stored event's frame, a presence change, or the end of the stream:
 * `gone` after the document's last event (do not come back), `shutdown` when the service stops
 * (come back later with the last id).
 */
export type LiveMessage = { frame: string } | { end: 'gone' | 'shutdown' };

export interface Subscription {
  /** The events after the reader's id, in order; null when they cannot be replayed (send resync). */
  replay: LiveEvent[] | null;
  /** The id of the newest event of the hub: where a resync tells the reader to carry on from. */
  cursor: string;
  presence: PresenceEntry[];
  unsubscribe(): void;
}

export interface LiveHubOptions {
  /** Events each channel keeps for replay (default 500). */
  replayEvents?: number;
  /** Bytes of frames each channel keeps for replay (default 8 MB); the older ones go first. */
  replayBytes?: number;
  /** A presence beat counts this long (default 25 s; with the sweep, gone within 30 s). */
  presenceTtlMs?: number;
  /** How often expired presence is swept and idle channels dropped (default 5 s). */
  sweepMs?: number;
  /** A channel without readers, presence or events for this long is dropped (default 10 min). */
  idleMs?: number;
  /** A comment line to every reader this often, so proxies and browsers keep the stream (default 15 s). */
  keepAliveMs?: number;
  now?: () => number;
}

interface Beat {
  identity: PresenceIdentity;
  since: number;
  lastSeen: number;
}

class Channel {
  readonly events: LiveEvent[] = [];
  bytes = 0;
  /** Every event of this channel after `floor` is in `events`. */
  floor: number;
  readonly readers = new Set<(m: LiveMessage) => void>();
  /** By identity key, then client id. */
  readonly beats = new Map<string, Map<string, Beat>>();
  touched: number;

  constructor(floor: number, now: number) {
    this.floor = floor;
    this.touched = now;
  }
}

export class LiveHub {
  /** Names this process in event ids: an id of an earlier run cannot be replayed. */
  readonly boot = randomBytes(3).toString('hex');
  private seq = 0;
  private readonly channels = new Map<string, Channel>();
  private readonly opts: Required<Omit<LiveHubOptions, 'now'>>;
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;
  private readonly keepAlive: NodeJS.Timeout;
  private closed = false;

  constructor(opts: LiveHubOptions = {}) {
    this.opts = {
      replayEvents: opts.replayEvents ?? 500,
      replayBytes: opts.replayBytes ?? 8 * 1024 * 1024,
      presenceTtlMs: opts.presenceTtlMs ?? 25_000,
      sweepMs: opts.sweepMs ?? 5_000,
      idleMs: opts.idleMs ?? 10 * 60_000,
      keepAliveMs: opts.keepAliveMs ?? 15_000,
    };
    this.now = opts.now ?? Date.now;
    this.sweeper = setInterval(() => this.sweep(), this.opts.sweepMs).unref();
    this.keepAlive = setInterval(() => this.broadcastAll(': keep-alive\n\n'), this.opts.keepAliveMs).unref();
  }

  /** The id a reader of the document as it is now resumes from (hand it out with the document). */
  cursor(kind: string, id: string): string {
    this.channel(kind, id);
    return this.idOf(this.seq);
  }

  /**
   * Sends a change to every reader of the document and keeps it for replay. `data` is the domain's
   * payload; `origin` the writer's client id (X-Live-Client), so a browser can recognise its own echo.
   */
  publish(kind: string, id: string, type: string, data: unknown, origin?: string): LiveEvent {
    const ch = this.channel(kind, id);
    const seq = ++this.seq;
    const eventId = this.idOf(seq);
    const body = JSON.stringify({ at: new Date(this.now()).toISOString(), origin: origin ?? null, data });
    const event: LiveEvent = { id: eventId, seq, type, frame: `id: ${eventId}\nevent: ${type}\ndata: ${body}\n\n` };
    ch.events.push(event);
    ch.bytes += event.frame.length;
    while (ch.events.length > this.opts.replayEvents || (ch.bytes > this.opts.replayBytes && ch.events.length > 1)) {
      const dropped = ch.events.shift()!;
      ch.bytes -= dropped.frame.length;
      ch.floor = dropped.seq;
    }
    ch.touched = this.now();
    for (const reader of ch.readers) reader({ frame: event.frame });
    return event;
  }

  /**
   * Starts reading a document's changes after `lastEventId` (none: from now on). The reader gets
   * every later event and presence change until it unsubscribes or the document ends.
   */
  subscribe(kind: string, id: string, lastEventId: string | undefined, reader: (m: LiveMessage) => void): Subscription {
    const ch = this.channel(kind, id);
    let replay: LiveEvent[] | null = [];
    if (lastEventId !== undefined && lastEventId !== '') {
      const seq = this.seqOf(lastEventId);
      replay = seq === null || seq < ch.floor || seq > this.seq ? null : ch.events.filter((e) => e.seq > seq);
    }
    ch.readers.add(reader);
    ch.touched = this.now();
    return {
      replay,
      cursor: this.idOf(this.seq),
      presence: this.presenceOf(ch),
      unsubscribe: () => {
        ch.readers.delete(reader);
        ch.touched = this.now();
      },
    };
  }

  /** The document is gone: a last event to its readers, then their streams end and the channel goes. */
  end(kind: string, id: string, type: string, data: unknown, origin?: string): void {
    const key = keyOf(kind, id);
    if (!this.channels.has(key)) return;
    this.publish(kind, id, type, data, origin);
    const ch = this.channels.get(key)!;
    for (const reader of ch.readers) reader({ end: 'gone' });
    this.channels.delete(key);
  }

  /**
   * A presence beat of one client (a browser tab, `clientId`) of a user or key; `leaving` removes it.
   * Returns who has the document open; readers hear of a change in that list.
   */
  beat(kind: string, id: string, who: PresenceIdentity, clientId: string, leaving = false): PresenceEntry[] {
    const ch = this.channel(kind, id);
    const before = this.presenceKey(ch);
    const now = this.now();
    let clients = ch.beats.get(who.key);
    if (leaving) {
      clients?.delete(clientId);
      if (clients?.size === 0) ch.beats.delete(who.key);
    } else {
      if (!clients) ch.beats.set(who.key, (clients = new Map()));
      const b = clients.get(clientId);
      if (b) b.lastSeen = now;
      else clients.set(clientId, { identity: who, since: now, lastSeen: now });
    }
    ch.touched = now;
    const list = this.presenceOf(ch);
    if (this.presenceKey(ch) !== before) this.sendPresence(ch, list);
    return list;
  }

  presence(kind: string, id: string): PresenceEntry[] {
    const ch = this.channels.get(keyOf(kind, id));
    return ch ? this.presenceOf(ch) : [];
  }

  /** Ends every stream (the service is stopping) and stops the timers. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sweeper);
    clearInterval(this.keepAlive);
    for (const ch of this.channels.values()) for (const reader of ch.readers) reader({ end: 'shutdown' });
    this.channels.clear();
  }

  /** Readers of a document right now (tests, metrics). */
  readers(kind: string, id: string): number {
    return this.channels.get(keyOf(kind, id))?.readers.size ?? 0;
  }

  // ---- inside ---------------------------------------------------------------------------------

  private channel(kind: string, id: string): Channel {
    const key = keyOf(kind, id);
    let ch = this.channels.get(key);
    if (!ch) this.channels.set(key, (ch = new Channel(this.seq, this.now())));
    return ch;
  }

  private idOf(seq: number): string {
    return `${this.boot}-${seq}`;
  }

  /** The seq of an id of this boot; null for anything else. */
  private seqOf(id: string): number | null {
    const m = /^([0-9a-f]+)-(\d{1,15})$/.exec(id.trim());
    return m && m[1] === this.boot ? Number(m[2]) : null;
  }

  private alive(ch: Channel, now = this.now()): Beat[] {
    const out: Beat[] = [];
    for (const clients of ch.beats.values()) for (const b of clients.values()) if (now - b.lastSeen < this.opts.presenceTtlMs) out.push(b);
    return out;
  }

  private presenceOf(ch: Channel): PresenceEntry[] {
    const byKey = new Map<string, PresenceEntry & { first: number; last: number }>();
    for (const b of this.alive(ch)) {
      const e = byKey.get(b.identity.key);
      if (!e) {
        byKey.set(b.identity.key, { name: b.identity.name, kind: b.identity.kind, clients: 1, since: '', last_seen: '', first: b.since, last: b.lastSeen });
      } else {
        e.clients++;
        e.first = Math.min(e.first, b.since);
        e.last = Math.max(e.last, b.lastSeen);
      }
    }
    return [...byKey.values()]
      .sort((a, b) => a.first - b.first || a.name.localeCompare(b.name))
      .map(({ first, last, ...e }) => ({ ...e, since: new Date(first).toISOString(), last_seen: new Date(last).toISOString() }));
  }

  /** Who is there, without times: a change of it is worth telling the readers. */
  private presenceKey(ch: Channel): string {
    return this.presenceOf(ch)
      .map((e) => `${e.kind}:${e.name}:${e.clients}`)
      .join('|');
  }

  /** Presence frames carry no id: they are state, not changes to replay. */
  private sendPresence(ch: Channel, list: PresenceEntry[]): void {
    const frame = `event: presence\ndata: ${JSON.stringify({ at: new Date(this.now()).toISOString(), origin: null, data: list })}\n\n`;
    for (const reader of ch.readers) reader({ frame });
  }

  private broadcastAll(frame: string): void {
    for (const ch of this.channels.values()) for (const reader of ch.readers) reader({ frame });
  }

  private sweep(): void {
    const now = this.now();
    for (const [key, ch] of this.channels) {
      let expired = false;
      for (const [who, clients] of ch.beats) {
        for (const [client, b] of clients) {
          if (now - b.lastSeen >= this.opts.presenceTtlMs) {
            clients.delete(client);
            expired = true;
          }
        }
        if (clients.size === 0) ch.beats.delete(who);
      }
      if (expired) this.sendPresence(ch, this.presenceOf(ch));
      if (ch.readers.size === 0 && ch.beats.size === 0 && now - ch.touched >= this.opts.idleMs) this.channels.delete(key);
    }
  }

  /** Runs the periodic sweep now (tests drive expiry with their own clock). */
  sweepNow(): void {
    this.sweep();
  }
}

const keyOf = (kind: string, id: string) => `${kind}:${id}`;
