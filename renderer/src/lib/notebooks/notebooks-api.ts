// The notebook endpoints as the pages call them (interface-spec "Notebooks"). Writes carry this
// tab's live client id (X-Live-Client) so the page recognises the echo of its own changes.
import { ApiError, del, enc, get, post, put, readEnvelope, send } from '../api.ts';
import type { Scoped } from '../documents.ts';
import type { ErrorPos } from '../search/query-client.ts';
import type { NotebookDoc, NotebookFields, NotebookListItem, Section, SectionType, Snapshot, Variable } from './notebook-model.ts';


const query = (p: Record<string, string | undefined>) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(p)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
};

/** A query section that could not run: the sentence and, for a syntax error, where. */
export class RunError extends ApiError {
  readonly errorPos?: ErrorPos;
  constructor(message: string, status: number, errorPos?: ErrorPos) {
    super(message, status);
    this.errorPos = errorPos;
  }
}

export class NotebooksApi {
  constructor(private readonly clientId: string) {}

  private get h() {
    return { headers: { 'X-Live-Client': this.clientId } };
  }

  list(scope: Scoped, filter: { tag?: string; q?: string } = {}): Promise<NotebookListItem[]> {
    return get(`/notebooks${query({ ...scope, tag: filter.tag, q: filter.q, limit: '1000' })}`);
  }
  create(scope: Scoped, body: { name: string; description?: string; tags?: string[] }): Promise<NotebookDoc> {
    return post('/notebooks', { ...scope, ...body }, this.h);
  }
  get(id: string): Promise<NotebookDoc> {
    return get(`/notebooks/${enc(id)}`);
  }
  update(id: string, body: Partial<Pick<NotebookFields, 'name' | 'description' | 'tags' | 'time_range' | 'start' | 'end'>> & { version?: number }): Promise<NotebookFields> {
    return put(`/notebooks/${enc(id)}`, body, this.h);
  }
  remove(id: string): Promise<unknown> {
    return del(`/notebooks/${enc(id)}`, this.h);
  }
  addSection(id: string, body: { section_type: SectionType; title?: string; content?: string; position?: number }): Promise<Section> {
    return post(`/notebooks/${enc(id)}/sections`, body, this.h);
  }
  updateSection(id: string, sid: string, body: { version: number; title?: string; content?: string; tags?: string[] }): Promise<Section> {
    return put(`/notebooks/${enc(id)}/sections/${enc(sid)}`, body, this.h);
  }
  deleteSection(id: string, sid: string, version: number): Promise<unknown> {
    return del(`/notebooks/${enc(id)}/sections/${enc(sid)}?version=${version}`, this.h);
  }
  reorder(id: string, order: string[], version: number): Promise<{ section_order: string[]; version: number }> {
    return post(`/notebooks/${enc(id)}/sections/reorder`, { section_order: order, version }, this.h);
  }
  setVariables(id: string, variables: Variable[], version: number): Promise<{ variables: Variable[]; version: number }> {
    return put(`/notebooks/${enc(id)}/variables`, { variables, version }, this.h);
  }
  /** Runs a query or comment_context section and stores its results; a refusal throws RunError. */
  async execute(id: string, sid: string, signal?: AbortSignal): Promise<{ section: Section; result: Snapshot }> {
    const res = await send('POST', `/notebooks/${enc(id)}/sections/${enc(sid)}/execute`, { body: {}, signal, ...this.h });
    if (res.ok) return readEnvelope(res);
    const body = await res.json().catch(() => ({}));
    throw new RunError(typeof body.error === 'string' ? body.error : `The run failed (HTTP ${res.status}).`, res.status, body.error_pos);
  }
  /** A section's stored results with their rows (null: none stored), as of `results_version`. */
  storedResults(id: string, sid: string, signal?: AbortSignal): Promise<{ section_id: string; results_version: number; results: Snapshot | null }> {
    return get(`/notebooks/${enc(id)}/sections/${enc(sid)}/results`, { signal });
  }
  summarize(id: string, sid: string): Promise<{ section: Section; model: string | null }> {
    return post(`/notebooks/${enc(id)}/sections/${enc(sid)}/summarize`, {}, this.h);
  }
  aiStatus(): Promise<{ enabled: boolean; model: string | null; endpoint: string | null }> {
    return get('/notebooks/ai-status');
  }
  exportDocument(id: string): Promise<unknown> {
    return get(`/notebooks/${enc(id)}/export`);
  }
  importDocument(scope: Scoped, text: string): Promise<NotebookDoc> {
    return post(`/notebooks/import${query({ ...scope })}`, undefined, { raw: { type: 'application/json', data: text } });
  }
  generate(scope: Scoped, tag: string, attackChain: boolean): Promise<NotebookDoc & { replaced: boolean }> {
    return post('/notebooks/generate-from-comments', { ...scope, tag, attack_chain: attackChain }, this.h);
  }
  commentTags(scope: Scoped): Promise<Array<{ tag: string; count: number }>> {
    return get(`/comments/tags${query({ ...scope })}`);
  }
}
