// The AI model the notebooks use for summaries: any OpenAI-compatible chat-completions endpoint
// (a model server on the LAN: llama.cpp, Ollama, vLLM, LocalAI…) named by SVC_AI_BASE_URL, with
// SVC_AI_API_KEY (sent as a Bearer credential when set) and SVC_AI_MODEL (the `model` field; the
// server's own default when unset). Without SVC_AI_BASE_URL the features say AI is off.
//
// Nothing of a prompt, an answer or the key is logged: errors name the server's host and status.
import { HttpError } from '../http/errors.ts';

export interface AiSettings {
  baseUrl: string;
  apiKey: string | null;
  model: string | null;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export const AI_OFF_SENTENCE =
  'AI is not configured on this appliance: set SVC_AI_BASE_URL (and SVC_AI_MODEL) to an OpenAI-compatible chat-completions server and restart it.';

export class AiClient {
  /** How long one completion may take before the request gives up (a local model can be slow). */
  timeoutMs = 120_000;

  constructor(private readonly settings: AiSettings | null) {}

  get enabled(): boolean {
    return this.settings !== null;
  }

  /** What GET /notebooks/ai-status shows: on or off, the model, the server's address (never the key). */
  status(): { enabled: boolean; model: string | null; endpoint: string | null } {
    if (!this.settings) return { enabled: false, model: null, endpoint: null };
    return { enabled: true, model: this.settings.model, endpoint: `${this.settings.baseUrl}/chat/completions` };
  }

  /** One chat completion: the first choice's text. Throws HttpError sentences (400 off, 502, 504). */
  async complete(messages: ChatMessage[], opts: { signal?: AbortSignal; maxTokens?: number } = {}): Promise<{ text: string; model: string | null }> {
    const s = this.settings;
    if (!s) throw new HttpError(400, AI_OFF_SENTENCE);
    const url = `${s.baseUrl}/chat/completions`;
    const host = new URL(url).host;
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    const body: Record<string, unknown> = { messages, stream: false, temperature: 0.2 };
    if (s.model) body.model = s.model;
    if (opts.maxTokens) body.max_tokens = opts.maxTokens;
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(s.apiKey ? { authorization: `Bearer ${s.apiKey}` } : {}) },
        body: JSON.stringify(body),
        signal,
      });
    } catch (err) {
      throw this.failure(err, host, timeout);
    }
    let payload: unknown;
    try {
      payload = await res.json();
    } catch (err) {
      if (timeout.aborted) throw this.failure(err, host, timeout);
      throw new HttpError(502, `The AI model server at ${host} answered HTTP ${res.status} with something that is not JSON; check SVC_AI_BASE_URL (it usually ends in /v1).`);
    }
    if (!res.ok) {
      const said = (payload as { error?: { message?: unknown } | string })?.error;
      const reason = typeof said === 'string' ? said : typeof said?.message === 'string' ? said.message : '';
      const hint = res.status === 401 || res.status === 403 ? ' Check SVC_AI_API_KEY.' : res.status === 404 ? ' Check SVC_AI_BASE_URL and SVC_AI_MODEL.' : '';
      throw new HttpError(502, `The AI model server at ${host} refused the request (HTTP ${res.status}${reason ? `: ${clip(reason, 200)}` : ''}).${hint}`);
    }
    const choice = (payload as { choices?: Array<{ message?: { content?: unknown } }>; model?: unknown })?.choices?.[0];
    const text = choice?.message?.content;
    if (typeof text !== 'string' || text.trim() === '') {
      throw new HttpError(502, `The AI model server at ${host} answered without a message (no choices[0].message.content).`);
    }
    const model = (payload as { model?: unknown }).model;
    return { text: text.trim(), model: typeof model === 'string' ? model : s.model };
  }

  private failure(err: unknown, host: string, timeout: AbortSignal): Error {
    if (timeout.aborted) return new HttpError(504, `The AI model at ${host} did not answer within ${Math.round(this.timeoutMs / 1000)} s; try a smaller section or a faster model.`);
    if ((err as Error)?.name === 'AbortError') return err as Error; // the caller went away
    const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
    return new HttpError(502, `The AI model server at ${host} could not be reached (${cause?.code ?? cause?.message ?? (err as Error).message}); check SVC_AI_BASE_URL and that the server runs.`);
  }
}

const clip = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);
