// The custody log in SQLite (`custody_entries`, `custody_heads`; migration 9). Append-only: this
// class has no update or delete, and SQLite triggers refuse UPDATE and DELETE of an entry from
// anyone else. An edit made behind the appliance's back (triggers dropped, the file changed) is
// found by verify(): the chain (chain.ts) catches a changed or removed entry, and the head, sealed
// with an HMAC under the appliance's secret key, catches entries removed from the end and a chain
// rewritten as a whole.
import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import { preparedOnce, type Db } from '../../storage/sqlite.ts';
import { entryHash, GENESIS_HASH, verifyEntries, type ChainVerdict, type CustodyEntry, type CustodyKind } from './chain.ts';

/** An entry as SQLite holds it: its details as JSON text. */
type EntryRow = Omit<CustodyEntry, 'details'> & { details: string };

interface HeadRow {
  fractal_id: string;
  seq: number;
  hash: string;
  seal: string;
}

export interface CustodyAppend {
  kind: CustodyKind;
  actor: string;
  details: Record<string, unknown>;
}

export class CustodyStore {
  private readonly sealKey: Buffer;
  /** A folder of small files imported appends an entry per file. */
  private readonly sql;

  /** `secretKey`: the appliance's secret key (storage/secret-box.ts loadSecretKey). */
  constructor(
    private readonly db: Db,
    secretKey: Buffer,
  ) {
    this.sealKey = createHmac('sha256', secretKey).update('custody-head-seal').digest();
    this.sql = preparedOnce(db);
  }

  /** Appends one entry at the end of the fractal's chain, atomically with its head. */
  append(fractalId: string, entry: CustodyAppend, at: Date = new Date()): CustodyEntry {
    const details = JSON.parse(JSON.stringify(entry.details)) as Record<string, unknown>; // as it will read back
    return this.db.transaction(() => {
      const head = this.head(fractalId);
      const body = {
        id: randomUUID(),
        fractal_id: fractalId,
        seq: (head?.seq ?? 0) + 1,
        kind: entry.kind,
        recorded_at: at.toISOString(),
        actor: entry.actor,
        details,
      };
      const prev_hash = head?.hash ?? GENESIS_HASH;
      const hash = entryHash(prev_hash, body);
      this.sql(
        `INSERT INTO custody_entries (id, fractal_id, seq, kind, recorded_at, actor, details, prev_hash, hash)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(body.id, fractalId, body.seq, body.kind, body.recorded_at, body.actor, JSON.stringify(details), prev_hash, hash);
      const seal = this.seal(fractalId, body.seq, hash);
      if (head) this.sql('UPDATE custody_heads SET seq = ?, hash = ?, seal = ? WHERE fractal_id = ?').run(body.seq, hash, seal, fractalId);
      else this.sql('INSERT INTO custody_heads (fractal_id, seq, hash, seal) VALUES (?, ?, ?, ?)').run(fractalId, body.seq, hash, seal);
      return { ...body, prev_hash, hash };
    })();
  }

  /** The fractal's entries, oldest first. */
  list(fractalId: string, page: { limit?: number; offset?: number } = {}): CustodyEntry[] {
    const rows = this.db
      .prepare('SELECT * FROM custody_entries WHERE fractal_id = ? ORDER BY seq LIMIT ? OFFSET ?')
      .all(fractalId, page.limit ?? -1, page.offset ?? 0) as EntryRow[];
    return rows.map(toEntry);
  }

  count(fractalId: string): number {
    return (this.db.prepare('SELECT count(*) AS n FROM custody_entries WHERE fractal_id = ?').get(fractalId) as { n: number }).n;
  }

  /** Checks the whole chain and its sealed head: ok, or the first bad entry and why. */
  verify(fractalId: string): ChainVerdict {
    const entries = this.list(fractalId);
    const verdict = verifyEntries(entries);
    if (!verdict.ok) return verdict;
    const head = this.head(fractalId);
    const last = entries.at(-1);
    const n = entries.length;
    if (!head) {
      return n === 0 ? verdict : { ok: false, entries: n, bad_entry: { id: null, seq: n }, reason: 'the record of the chain\'s last entry is missing, so removed entries could not be detected' };
    }
    if (!this.sealOk(head)) {
      return { ok: false, entries: n, bad_entry: { id: null, seq: head.seq }, reason: `the record of the chain's last entry (entry ${head.seq}) was not written by this appliance: the log was rewritten outside it` };
    }
    if (head.seq !== n || head.hash !== last?.hash) {
      return head.seq > n
        ? { ok: false, entries: n, bad_entry: { id: null, seq: n + 1 }, reason: `the chain ends at entry ${n} but ${head.seq} entries were recorded: entries ${n + 1}–${head.seq} were removed` }
        : { ok: false, entries: n, bad_entry: { id: last?.id ?? null, seq: n }, reason: `entry ${n} is not the last entry this appliance recorded (entry ${head.seq}, hash ${head.hash.slice(0, 12)}…)` };
    }
    return verdict;
  }

  private head(fractalId: string): HeadRow | undefined {
    return this.sql('SELECT * FROM custody_heads WHERE fractal_id = ?').get(fractalId) as HeadRow | undefined;
  }

  private seal(fractalId: string, seq: number, hash: string): string {
    return createHmac('sha256', this.sealKey).update(`${fractalId}\n${seq}\n${hash}`).digest('hex');
  }

  private sealOk(head: HeadRow): boolean {
    const want = Buffer.from(this.seal(head.fractal_id, head.seq, head.hash), 'hex');
    const got = Buffer.from(head.seal, 'hex');
    return got.length === want.length && timingSafeEqual(got, want);
  }
}

function toEntry(r: EntryRow): CustodyEntry {
  let details: Record<string, unknown>;
  try {
    details = JSON.parse(r.details) as Record<string, unknown>;
  } catch {
    details = { unreadable: r.details }; // an edit that broke the JSON: it will not hash to the stored hash
  }
  return { id: r.id, fractal_id: r.fractal_id, seq: r.seq, kind: r.kind, recorded_at: r.recorded_at, actor: r.actor, details, prev_hash: r.prev_hash, hash: r.hash };
}
