// The dashboard endpoints as the pages call them (interface-spec "Dashboards"). Writes carry this
// tab's live client id (X-Live-Client) so the page recognises the echo of its own changes. The public
// page reads /api/v1/shared/{token} with publicDashboard(), without a session.
import { del, enc, get, post, put, readEnvelope, send } from '../api.ts';
import type { Variable } from '../documents.ts';
import { QueryError, type ScopeParams } from '../search/query-client.ts';
import type { Box, Cells } from './grid.ts';
import type { DashboardDoc, DashboardFields, DashboardListItem, PublicDashboard, SharedLink, Widget, WidgetResult } from './dashboard-model.ts';

const query = (p: Record<string, string | undefined>) => {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(p)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
};

export type WidgetBody = Partial<Pick<Widget, 'title' | 'query_content' | 'chart_type' | 'chart_config' | 'time_range' | 'start' | 'end'>> & Partial<Cells> & { version?: number };

export interface RunBody {
  variables?: Variable[];
  start?: string;
  end?: string;
  /** Stored results up to this old are answered without a query. */
  max_age_s?: number;
  widget_ids?: string[];
}

export class DashboardsApi {
  constructor(private readonly clientId: string) {}

  private get h() {
    return { headers: { 'X-Live-Client': this.clientId } };
  }

  list(scope: ScopeParams, q?: string): Promise<DashboardListItem[]> {
    return get(`/dashboards${query({ ...scope, q, limit: '1000' })}`);
  }
  create(scope: ScopeParams, body: { name: string; description?: string; refresh_interval_s?: number }): Promise<DashboardDoc> {
    return post('/dashboards', { ...scope, ...body }, this.h);
  }
  get(id: string): Promise<DashboardDoc> {
    return get(`/dashboards/${enc(id)}`);
  }
  update(id: string, body: Partial<Pick<DashboardFields, 'name' | 'description' | 'time_range' | 'start' | 'end' | 'shared_hide_queries'>> & { version?: number }): Promise<DashboardFields> {
    return put(`/dashboards/${enc(id)}`, body, this.h);
  }
  remove(id: string): Promise<unknown> {
    return del(`/dashboards/${enc(id)}`, this.h);
  }
  addWidget(id: string, body: WidgetBody): Promise<Widget & { moved: Box[] }> {
    return this.refusable('POST', `/dashboards/${enc(id)}/widgets`, body);
  }
  updateWidget(id: string, wid: string, body: WidgetBody): Promise<Widget> {
    return this.refusable('PUT', `/dashboards/${enc(id)}/widgets/${enc(wid)}`, body);
  }
  deleteWidget(id: string, wid: string): Promise<unknown> {
    return del(`/dashboards/${enc(id)}/widgets/${enc(wid)}`, this.h);
  }
  /** Puts a widget on these cells; the answer holds every widget's cells afterwards. */
  moveWidget(id: string, wid: string, cells: Cells): Promise<Box & { moved: Box[]; layout: Box[] }> {
    return put(`/dashboards/${enc(id)}/widgets/${enc(wid)}/layout`, cells, this.h);
  }
  execute(id: string, body: RunBody = {}, signal?: AbortSignal): Promise<{ executed_at: string; results: WidgetResult[] }> {
    return post(`/dashboards/${enc(id)}/execute`, body, { ...this.h, signal });
  }
  /** Runs one widget; a refusal throws QueryError with where in the query. */
  executeWidget(id: string, wid: string, body: RunBody = {}): Promise<WidgetResult> {
    return this.refusable('POST', `/dashboards/${enc(id)}/widgets/${enc(wid)}/execute`, body);
  }
  setVariables(id: string, variables: Variable[], version: number): Promise<{ variables: Variable[]; version: number }> {
    return put(`/dashboards/${enc(id)}/variables`, { variables, version }, this.h);
  }
  setRefresh(id: string, seconds: number): Promise<{ refresh_interval_s: number; version: number }> {
    return put(`/dashboards/${enc(id)}/refresh-interval`, { refresh_interval_s: seconds }, this.h);
  }
  async exportYaml(id: string): Promise<string> {
    const res = await send('GET', `/dashboards/${enc(id)}/export`, { accept: 'application/yaml' });
    if (!res.ok) await readEnvelope(res);
    return res.text();
  }
  importYaml(scope: ScopeParams, text: string): Promise<DashboardDoc> {
    return post(`/dashboards/import${query({ ...scope })}`, undefined, { raw: { type: 'application/yaml', data: text } });
  }
  links(id: string): Promise<SharedLink[]> {
    return get(`/dashboards/${enc(id)}/shared-links`);
  }
  createLink(id: string, body: { label: string; expires_at: string | null }): Promise<SharedLink> {
    return post(`/dashboards/${enc(id)}/shared-links`, body, this.h);
  }
  deleteLink(id: string, linkId: string): Promise<unknown> {
    return del(`/dashboards/${enc(id)}/shared-links/${enc(linkId)}`, this.h);
  }

  /** A write whose refusal may name a place in a query (error_pos): thrown as QueryError. */
  private async refusable<T>(method: string, path: string, body: unknown): Promise<T> {
    const res = await send(method, path, { body, ...this.h });
    if (res.ok) return readEnvelope(res);
    const b = await res.json().catch(() => ({}));
    throw new QueryError(typeof b.error === 'string' ? b.error : `The request failed (HTTP ${res.status}).`, res.status, b.error_type, b.error_pos);
  }
}

/** GET /api/v1/shared/{token}: the public dashboard, read without a session (null: the link is gone). */
export async function publicDashboard(token: string, signal?: AbortSignal): Promise<PublicDashboard | null> {
  const res = await send('GET', `/shared/${encodeURIComponent(token)}`, { authRedirect: false, signal });
  if (res.status === 404) return null;
  return readEnvelope(res);
}
