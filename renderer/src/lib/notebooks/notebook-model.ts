// A notebook as the page holds it, and how each live event changes it. Every change carries a
// version, so an event older than what the page already has (its own write's echo, a replayed
// event) changes nothing, and the order of the sections always comes from the service. Pure:
// tests/ui/notebooks.test.ts.

export type SectionType = 'markdown' | 'query' | 'ai_summary' | 'comment_context';

import { applyDocumentEvent, type Variable } from '../documents.ts';
import type { Applied as LiveApplied } from '../live/follow.ts';

export type { Variable };

export interface ContextComment {
  id: string;
  log_id: string;
  fractal_id: string;
  timestamp: string;
  content: string;
  tags: string[];
  author: string;
  created_at: string;
}

/**
 * What the notebook's answer says of a section's stored results: the snapshot without its rows and
 * comments (service/src/notebooks/notebooks-logic.ts sectionView). The rows are read when the
 * section comes into view (GET …/sections/{id}/results).
 */
export interface ResultsSummary {
  /** Rows stored. */
  count: number;
  field_order: string[];
  is_aggregated: boolean;
  chart_type: string;
  chart_config: Record<string, unknown>;
  limit_hit: string;
  execution_ms: number;
  query: string;
  start: string | null;
  end: string | null;
  executed_at: string;
  executed_by: string;
  truncated: boolean;
  /** comment_context: how many comments the snapshot holds. */
  comment_count?: number;
}

/** A section's stored results whole (service/src/notebooks/results.ts). */
export interface Snapshot extends Omit<ResultsSummary, 'comment_count'> {
  results: Array<Record<string, unknown>>;
  comments?: ContextComment[];
}

export interface Section {
  id: string;
  notebook_id: string;
  position: number;
  section_type: SectionType;
  title: string;
  content: string;
  tags: string[];
  version: number;
  results_version: number;
  created_by: string;
  updated_by: string;
  created_at: string;
  updated_at: string;
  /** Null when nothing is stored. */
  results_summary: ResultsSummary | null;
  /**
   * The rows of `results_version` when the page already has them (its own run's answer, a live
   * event); absent otherwise, and then read when the section comes into view. Never of another
   * version: whatever changes results_version without rows drops them.
   */
  results?: Snapshot | null;
}

export interface NotebookFields {
  id: string;
  name: string;
  description: string;
  fractal_id: string | null;
  prism_id: string | null;
  tags: string[];
  variables: Variable[];
  time_range: string;
  start: string | null;
  end: string | null;
  version: number;
  created_by: string;
  updated_by: string;
  created_at: string;
  updated_at: string;
}

export interface NotebookListItem extends NotebookFields {
  section_count: number;
}

export interface NotebookDoc extends NotebookFields {
  scope: { type: 'fractal' | 'prism'; id: string; name: string };
  can_edit: boolean;
  live_event_id: string;
  sections: Section[];
}

/** What an event asks of the page beyond the new document. */
export type Applied = LiveApplied<NotebookDoc>;

function ordered(sections: Section[], order: string[] | undefined): Section[] {
  if (!order) return sections;
  const byId = new Map(sections.map((s) => [s.id, s]));
  return order.flatMap((id, position) => {
    const s = byId.get(id);
    return s ? [{ ...s, position }] : [];
  });
}

/** The document after one live event (or a request to read it again). */
export function applyEvent(doc: NotebookDoc, type: string, data: any): Applied {
  switch (type) {
    case 'section_added': {
      const s = data.section as Section;
      const sections = doc.sections.some((x) => x.id === s.id) ? doc.sections : [...doc.sections, s];
      const order = data.order as string[];
      // An order naming a section the page has not seen means events were missed: read it again.
      if (order.some((id) => !sections.some((x) => x.id === id))) return { reload: true };
      return { doc: { ...doc, version: Math.max(doc.version, data.version ?? 0), sections: ordered(sections, order) } };
    }
    case 'section_updated': {
      const s = data.section as Section;
      const cur = doc.sections.find((x) => x.id === s.id);
      if (!cur) return { reload: true };
      if (s.version <= cur.version) return { doc };
      return {
        doc: {
          ...doc,
          sections: doc.sections.map((x) =>
            x.id === s.id ? { ...s, position: x.position, results_summary: x.results_summary, results: x.results, results_version: x.results_version } : x,
          ),
        },
      };
    }
    case 'section_deleted':
      return { doc: { ...doc, version: Math.max(doc.version, data.version ?? 0), sections: ordered(doc.sections.filter((x) => x.id !== data.id), data.order) } };
    case 'sections_reordered': {
      if ((data.order as string[]).length !== doc.sections.length || (data.order as string[]).some((id) => !doc.sections.some((x) => x.id === id))) return { reload: true };
      return { doc: { ...doc, version: Math.max(doc.version, data.version ?? 0), sections: ordered(doc.sections, data.order) } };
    }
    case 'results_stored': {
      const cur = doc.sections.find((x) => x.id === data.section_id);
      if (!cur) return { reload: true };
      if (data.results_version <= cur.results_version) return { doc };
      // Rows too large for an event are read by the section, as on opening.
      const held = data.results_omitted ? undefined : (data.results as Snapshot | null);
      const stored: Section = {
        ...cur,
        results_summary: data.results_summary ?? (held ? summaryOf(held) : null),
        results: held,
        results_version: data.results_version,
        updated_by: data.updated_by,
        updated_at: data.updated_at,
      };
      if (held === undefined) delete stored.results;
      return { doc: { ...doc, sections: doc.sections.map((x) => (x.id === cur.id ? stored : x)) } };
    }
    case 'notebook_replaced':
      return { reload: true };
    default:
      return applyDocumentEvent('notebook', doc, type, data) ?? { doc };
  }
}

/** A snapshot's summary, as the service gives it beside a section. */
export function summaryOf(snap: Snapshot): ResultsSummary {
  const { results: _rows, comments, ...rest } = snap;
  return comments ? { ...rest, comment_count: comments.length } : rest;
}

/**
 * `cur` after the service answered a write with `next` (older answers change nothing). Rows `next`
 * carries are taken; rows the page held stay only while they are of the same results_version.
 */
export function mergeSection(cur: Section, next: Section): Section {
  if (next.version < cur.version) return cur;
  const merged: Section = { ...cur, ...next };
  if (next.results === undefined) {
    if (next.results_version === cur.results_version && cur.results !== undefined) merged.results = cur.results;
    else delete merged.results;
  }
  return merged;
}

/** Moves the section at `from` to `to` in an id list (drag and drop, Alt+arrows). */
export function moved(ids: string[], from: number, to: number): string[] {
  const out = [...ids];
  const [x] = out.splice(from, 1);
  out.splice(Math.max(0, Math.min(to, out.length)), 0, x!);
  return out;
}
