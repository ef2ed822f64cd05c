// A page following one document live (notebooks, dashboards): the LiveConnection started from the
// id that came with the document, every event turned into the next document by the page's own
// `apply`, and what the page must do otherwise: read the document again (a gap the service no
// longer holds, an event naming something unknown), show that someone deleted it, or that the
// stream was refused.
import { LiveConnection, type LiveStatus, type PresenceEntry } from './live-client.ts';

/** What one live event means for the page's document. */
export type Applied<D> = { doc: D } | { reload: true } | { deleted: true; by: string };

export interface Follow<D> {
  /** The document's API path without /api/v1: "/notebooks/<id>". */
  path: string;
  clientId: string;
  /** The id handed out with the document (`live_event_id`): nothing after it is missed. */
  lastEventId: string;
  current: () => D | null;
  apply: (doc: D, type: string, data: any) => Applied<D>;
  ondoc: (doc: D) => void;
  reload: () => void;
  ondeleted: (by: string) => void;
  onpresence: (people: PresenceEntry[]) => void;
  onstatus: (s: LiveStatus) => void;
  /** The service refused the stream (gone, no access, signed out): a sentence to show. */
  onstopped: (message: string) => void;
}

/** Starts following; stop it with `.stop()` when the page goes. */
export function followDocument<D>(f: Follow<D>): LiveConnection {
  const live = new LiveConnection({
    path: f.path,
    lastEventId: f.lastEventId,
    clientId: f.clientId,
    onEvent: (type, env) => {
      const doc = f.current();
      if (!doc) return;
      const r = f.apply(doc, type, env.data);
      if ('doc' in r) f.ondoc(r.doc);
      else if ('reload' in r) f.reload();
      else f.ondeleted(r.by);
    },
    onResync: () => f.reload(),
    onPresence: f.onpresence,
    onStatus: f.onstatus,
    onClosed: (why) => {
      if (why.status !== 0) f.onstopped(`Live edits stopped: ${why.message}`);
    },
  });
  live.start();
  return live;
}
