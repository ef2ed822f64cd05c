// A body refused before it has all arrived (413: larger than the route takes) is read to its end
// and thrown away, within a budget of bytes and time, before the connection is given up, as nginx's
// lingering close does. Closing at once, with the sender still writing, turns the 413 that tells a
// shipper to split its batch into a broken pipe (EPIPE or ECONNRESET) in Node's client, curl and
// the Elasticsearch client alike. Nothing is buffered: the bytes are dropped as they come.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './app.ts';

export interface LingerOptions {
  /** Bytes read and dropped after the refusal before the socket is destroyed. */
  maxBytes: number;
  /** Time after the refusal before the socket is destroyed, whatever is still arriving. */
  maxMs: number;
  /** Time without a byte before the socket is destroyed (a client that stopped sending once it read the answer). */
  idleMs: number;
}

export const DEFAULT_LINGER: LingerOptions = { maxBytes: 256 * 1024 * 1024, maxMs: 30_000, idleMs: 5_000 };

export function registerLingeringRefusal(app: App, opts: LingerOptions = DEFAULT_LINGER): void {
  app.addHook('onSend', async (req, reply, payload) => {
    if (reply.statusCode === 413 && !req.raw.complete) linger(req, reply, opts);
    return payload;
  });
}

function linger(req: FastifyRequest, reply: FastifyReply, opts: LingerOptions): void {
  const raw = req.raw;
  const socket = raw.socket;
  if (!socket || socket.destroyed) return;
  // Fastify asks to close the connection after a refused body; Node would then close it under the
  // sender. Kept alive, Node reads the rest of the request (and may serve the next one after it).
  reply.removeHeader('connection');
  // A decompressing stream (ingest's preParsing) is fed no more: what follows is only counted.
  raw.unpipe();
  let left = opts.maxBytes;
  const done = () => {
    clearTimeout(deadline);
    clearTimeout(idle);
    raw.off('data', count);
    raw.off('end', done);
    socket.off('close', done);
  };
  const giveUp = () => {
    done();
    socket.destroy();
  };
  const deadline = setTimeout(giveUp, opts.maxMs);
  let idle = setTimeout(giveUp, opts.idleMs);
  deadline.unref();
  idle.unref();
  // Counted on the request (the server's parser reads the socket itself): only its body's bytes.
  const count = (chunk: Buffer) => {
    left -= chunk.length;
    if (left < 0) return giveUp();
    clearTimeout(idle);
    idle = setTimeout(giveUp, opts.idleMs);
    idle.unref();
  };
  raw.on('data', count);
  raw.once('end', done);
  socket.once('close', done);
  raw.resume();
}
