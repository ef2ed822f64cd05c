// AI summaries of notebook sections. What a model is sent is capped so that it fits the context of
// a small local model: at most PROMPT_CHARS characters in all (~8k tokens); of each section's stored
// results at most RESULT_ROWS rows and RESULT_CHARS characters (rows are cut whole, with a note of
// how many were left out); of a comment_context section its comments and up to RESULT_ROWS logs.
//
// POST …/sections/{sid}/summarize on an `ai_summary` section writes into it a summary of the
// notebook's other sections; on any other section it adds an `ai_summary` section right after it
// that summarizes that section alone. Either way the summary is stored, versioned and sent live.
import type { Comment } from '../collaboration/comments-store.ts';
import type { Context } from '../context.ts';
import { badRequest } from '../http/errors.ts';
import type { ChatMessage } from './ai-client.ts';
import type { Actor } from '../shared/documents.ts';
import { addSection, updateSection } from './notebooks-logic.ts';
import type { Notebook, Section } from './notebooks-store.ts';
import type { Snapshot } from './results.ts';

export const PROMPT_CHARS = 32_000;
export const RESULT_ROWS = 50;
export const RESULT_CHARS = 8_000;

const SYSTEM =
  'You assist incident responders who investigate logs. Summarize what you are given for a colleague: what was looked at, ' +
  'what was found (hosts, users, addresses, times, counts), and what it suggests. Be factual and brief; say when the data ' +
  'does not show something instead of guessing. Answer in Markdown (short paragraphs or a list), without a title.';

const LABELS: Record<string, string> = { markdown: 'Notes', query: 'Query', comment_context: 'Analyst comments', ai_summary: 'Earlier summary' };

/** Rows as compact JSON lines, whole rows only, within the caps. */
export function rowsText(rows: Array<Record<string, unknown>>, maxRows = RESULT_ROWS, maxChars = RESULT_CHARS): string {
  const lines: string[] = [];
  let used = 0;
  for (const r of rows.slice(0, maxRows)) {
    const line = JSON.stringify(r);
    if (used + line.length + 1 > maxChars) break;
    lines.push(line);
    used += line.length + 1;
  }
  const left = rows.length - lines.length;
  return lines.join('\n') + (left > 0 ? `\n(${left} more row${left === 1 ? '' : 's'} not shown)` : '');
}

function sectionText(s: Section): string {
  const head = `## ${LABELS[s.section_type] ?? s.section_type}${s.title ? `: ${s.title}` : ''}`;
  const parts = [head];
  const snap: Snapshot | null = s.results ? JSON.parse(s.results) : null;
  if (s.section_type === 'query') {
    parts.push(`Query: ${snap?.query || s.content}`);
    if (snap) {
      parts.push(`Ran over ${snap.start ?? '?'} to ${snap.end ?? '?'}: ${snap.count} row${snap.count === 1 ? '' : 's'}${snap.limit_hit ? ' (stopped at the row cap)' : ''}.`);
      if (snap.results.length) parts.push(rowsText(snap.results));
    } else parts.push('(not run yet)');
  } else if (s.section_type === 'comment_context') {
    for (const c of snap?.comments ?? []) parts.push(`- ${c.timestamp} ${c.author} on log ${c.log_id}${c.tags.length ? ` [${c.tags.join(', ')}]` : ''}: ${c.content}`);
    if (snap?.results.length) parts.push('Their logs:', rowsText(snap.results));
  } else if (s.content.trim()) parts.push(s.content.trim());
  return parts.join('\n');
}

/** The whole prompt text within PROMPT_CHARS: sections in order, cut at a section boundary. */
function within(parts: string[]): string {
  let out = '';
  for (const p of parts) {
    if (out.length + p.length + 2 > PROMPT_CHARS) {
      const room = PROMPT_CHARS - out.length - 40;
      if (room > 200) out += `${p.slice(0, room)}\n(cut)\n\n`;
      out += '(the rest of the notebook was left out: too long)';
      break;
    }
    out += `${p}\n\n`;
  }
  return out.trim();
}

export function notebookMessages(nb: Notebook, sections: Section[]): ChatMessage[] {
  const intro = `Notebook "${nb.name}"${nb.description ? `: ${nb.description}` : ''}. Summarize the investigation below.`;
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: within([intro, ...sections.map(sectionText)]) },
  ];
}

export function sectionMessages(nb: Notebook, s: Section): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: within([`One section of the notebook "${nb.name}". Summarize it.`, sectionText(s)]) },
  ];
}

export function commentsMessages(tag: string, comments: Comment[]): ChatMessage[] {
  const lines = comments.map((c) => `- ${c.log_timestamp} ${c.author} on log ${c.log_id}${c.tags.length ? ` [${c.tags.join(', ')}]` : ''}: ${c.content}`);
  return [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: within([`Analysts tagged these comments "${tag}". Summarize what they describe, in time order.`, ...lines]) },
  ];
}

/** Writes a summary (see the header) and returns the ai_summary section that holds it. */
export async function summarizeSection(ctx: Context, a: Actor, nb: Notebook, s: Section, signal?: AbortSignal): Promise<{ section: Section; model: string | null }> {
  if (s.section_type === 'ai_summary') {
    const others = ctx.notebooks.sections(nb.id, 'full').filter((x) => x.section_type !== 'ai_summary');
    if (others.length === 0) throw badRequest(`Notebook "${nb.name}" has nothing to summarize yet: add notes, queries or comments first.`);
    const { text, model } = await ctx.ai.complete(notebookMessages(nb, others), { signal });
    // The summary replaces the section's text whatever was edited meanwhile: it was asked for.
    const current = ctx.notebooks.section(s.id);
    if (!current) throw badRequest('The section was deleted while the model wrote its summary.');
    return { section: updateSection(ctx, a, nb, s.id, { version: current.version, content: text }), model };
  }
  const withResults = ctx.notebooks.section(s.id, 'full')!;
  if (!withResults.content.trim() && !withResults.results) throw badRequest(`Section "${s.title || s.id}" is empty: there is nothing to summarize.`);
  const { text, model } = await ctx.ai.complete(sectionMessages(nb, withResults), { signal });
  const position = ctx.notebooks.section(s.id)?.position ?? Number.MAX_SAFE_INTEGER;
  const section = addSection(ctx, a, ctx.notebooks.get(nb.id)!, {
    section_type: 'ai_summary',
    title: `Summary of ${s.title ? `"${s.title}"` : `the ${s.section_type} section`}`.slice(0, 500),
    content: text,
    position: position + 1,
  });
  return { section, model };
}
