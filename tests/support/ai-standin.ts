// A local stand-in for a LAN model server: a node:http server speaking the OpenAI chat-completions
// API (POST <base>/chat/completions), the one thing the notebooks' AI features call that is outside
// the box. It records every request and answers in the mode the test sets: a summary that names
// what it was sent, a hang (for time-outs), an HTTP error, or a body that is not JSON.
import http from 'node:http';

export interface AiRequest {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: { model?: string; messages: Array<{ role: string; content: string }>; [k: string]: unknown };
}

export type AiMode = 'answer' | 'hang' | 'error' | 'garbage';

export interface AiStandIn {
  /** The base URL to give SVC_AI_BASE_URL (ends in /v1, as real servers' do). */
  url: string;
  requests: AiRequest[];
  mode: AiMode;
  /** What 'answer' mode replies, from the request. */
  reply: (req: AiRequest) => string;
  /** Answers the requests held in 'hang' mode (as 'answer' would) and goes back to answering. */
  release(): void;
  close(): Promise<void>;
}

/** The stand-in's default answer: says how much it was sent and its first line, so tests can tell. */
export const standInReply = (req: AiRequest) => {
  const user = req.body.messages.find((m) => m.role === 'user')?.content ?? '';
  return `**Stand-in summary** of ${user.length} characters, starting: ${user.split('\n')[0]}`;
};

export async function startAiStandIn(): Promise<AiStandIn> {
  const open = new Set<http.ServerResponse>();
  const held: Array<{ r: AiRequest; res: http.ServerResponse }> = [];
  const s: AiStandIn = {
    url: '',
    requests: [],
    mode: 'answer',
    reply: standInReply,
    release: () => {
      s.mode = 'answer';
      for (const { r, res } of held.splice(0)) if (!res.destroyed) answer(r, res);
    },
    close: async () => {
      for (const res of open) res.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
  const server = http.createServer((req, res) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.url}` } }));
        return;
      }
      const r: AiRequest = { path: req.url, headers: req.headers, body: JSON.parse(text) };
      s.requests.push(r);
      if (s.mode === 'hang') {
        held.push({ r, res });
        open.add(res);
        res.on('close', () => open.delete(res));
        return;
      }
      if (s.mode === 'error') {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'model is loading' } }));
        return;
      }
      if (s.mode === 'garbage') {
        res.writeHead(200, { 'content-type': 'text/html' }).end('<html>proxy login</html>');
        return;
      }
      answer(r, res);
    });
  });
  function answer(r: AiRequest, res: http.ServerResponse) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        id: 'chatcmpl-standin',
        object: 'chat.completion',
        model: r.body.model ?? 'standin-default',
        choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: s.reply(r) } }],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
    );
  }
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  s.url = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  return s;
}
