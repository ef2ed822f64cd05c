// POST /api/v1/notebooks/generate-from-comments {tag, attack_chain}: every comment carrying the tag
// in the fractal or prism (named, else the selection) becomes a notebook named "Notebook: {tag}",
// replacing one of that name there (same id, so open pages reload it). Its sections:
//   1. an overview (how many comments and logs, their span, who generated it);
//   2. with attack_chain, the ATT&CK tactic breakdown of the technique ids in the comments and
//      their tags (attack.ts); otherwise an AI summary of the comments when AI is on (written in the
//      background; the section fills in live), else a plain timeline of the comments;
//   3. a comment_context section of the tag, holding the comments with their logs as results.
import type { Comment } from '../collaboration/comments-store.ts';
import { normalizeTag } from '../collaboration/comments-logic.ts';
import type { Context } from '../context.ts';
import { notFound } from '../http/errors.ts';
import { mdText, tacticBreakdown, ATTACK } from './attack.ts';
import { contextComments, gatherContext, scopeFractals } from './comment-context.ts';
import { actorName, type Actor } from '../shared/documents.ts';
import { createNotebook, LIVE_KIND, notebookView, updateSection } from './notebooks-logic.ts';
import type { NewSection, Notebook, Scope } from './notebooks-store.ts';
import { commentsMessages } from './summarize.ts';

export interface GenerateResult {
  notebook: Notebook;
  replaced: boolean;
  /** Settles when the background summary is written (or failed); undefined when there is none. */
  summary?: Promise<void>;
}

const MARGIN_MS = 3_600_000;

function overview(tag: string, scope: Scope & { name: string }, comments: Comment[], by: string): string {
  const logs = new Set(comments.map((c) => c.log_id)).size;
  const authors = [...new Set(comments.map((c) => c.author))].sort();
  const first = comments[0]!.log_timestamp;
  const last = comments[comments.length - 1]!.log_timestamp;
  return [
    `Generated from the ${comments.length} comment${comments.length === 1 ? '' : 's'} tagged “${mdText(tag)}” in ${scope.type} “${mdText(scope.name)}”, ` +
      `on ${logs} log${logs === 1 ? '' : 's'} from ${first} to ${last} (UTC), by ${mdText(by)} on ${new Date().toISOString()}.`,
    '',
    `Comments by: ${authors.map(mdText).join(', ')}.`,
  ].join('\n');
}

function timeline(comments: Comment[]): string {
  return comments
    .map((c) => {
      const tags = c.tags.length ? ` (${c.tags.map(mdText).join(', ')})` : '';
      const text = mdText(c.content).replace(/\s*\n\s*/g, ' ');
      return `- **${c.log_timestamp}** · ${mdText(c.author)} · log \`${c.log_id}\`${tags}: ${text}`;
    })
    .join('\n');
}

export async function generateFromComments(
  ctx: Context,
  a: Actor,
  scope: Scope & { name: string },
  input: { tag: string; attack_chain?: boolean },
): Promise<GenerateResult> {
  const tag = normalizeTag(input.tag);
  const comments = contextComments(ctx, scopeFractals(ctx, a.p, scope), { tag });
  if (comments.length === 0) throw notFound(`No comments tagged "${tag}" in ${scope.type} "${scope.name}".`);
  const by = actorName(a.p);
  const context = await gatherContext(ctx, a.p, scope, { tag });

  const sections: NewSection[] = [{ section_type: 'markdown', title: 'Overview', content: overview(tag, scope, comments, by), tags: [] }];
  let summaryTitle: string | null = null;
  if (input.attack_chain) {
    const mentions = comments.map((c) => ({ commentId: c.id, logId: c.log_id, text: `${c.content}\n${c.tags.join(' ')}` }));
    const intro = `Technique ids named in the comments tagged “${mdText(tag)}” and in their tags, by ATT&CK Enterprise v${ATTACK.version} tactic in kill-chain order. A technique under several tactics is listed under each.`;
    sections.push({ section_type: 'markdown', title: 'ATT&CK tactic breakdown', content: tacticBreakdown(mentions, intro), tags: ['attack'] });
  } else if (ctx.ai.enabled) {
    summaryTitle = 'AI summary of the comments';
    const model = ctx.ai.status().model;
    sections.push({ section_type: 'ai_summary', title: summaryTitle, content: `_The model${model ? ` ${mdText(model)}` : ''} is writing this summary…_`, tags: [] });
  } else {
    sections.push({ section_type: 'markdown', title: 'Timeline', content: timeline(comments), tags: [] });
  }
  sections.push({
    section_type: 'comment_context',
    title: `Comments tagged “${tag}” with their logs`,
    content: JSON.stringify({ tag }),
    tags: [],
    results: JSON.stringify(context),
  });

  const first = Date.parse(comments[0]!.log_timestamp);
  const last = Date.parse(comments[comments.length - 1]!.log_timestamp);
  const fields = {
    name: `Notebook: ${tag}`,
    description: `Generated from the comments tagged "${tag}".`,
    tags: [tag],
    variables: [],
    time_range: 'custom',
    time_start: new Date(first - MARGIN_MS).toISOString(),
    time_end: new Date(last + MARGIN_MS).toISOString(),
  };
  const existing = ctx.notebooks.findByName(scope, fields.name);
  let notebook: Notebook;
  if (existing) {
    notebook = ctx.notebooks.replace(existing.id, fields, sections, by);
    ctx.live.publish(LIVE_KIND, notebook.id, 'notebook_replaced', notebookView(ctx, notebook), a.origin);
  } else {
    notebook = createNotebook(ctx, a, scope, { name: fields.name, description: fields.description, tags: fields.tags, time_range: 'custom', start: fields.time_start, end: fields.time_end, prepared: sections });
  }
  const result: GenerateResult = { notebook, replaced: existing !== undefined };
  if (summaryTitle) {
    // The service may stop (or the notebook go) before the model answers: nothing to report then.
    result.summary = writeSummary(ctx, a, notebook, tag, comments).catch((err) => ctx.log.warn({ notebook: notebook.id, err: (err as Error).message }, 'could not store the AI summary'));
  }
  return result;
}

/** Fills the generated ai_summary section once the model answers; a failure is written there too. */
async function writeSummary(ctx: Context, a: Actor, nb: Notebook, tag: string, comments: Comment[]): Promise<void> {
  const target = ctx.notebooks.sections(nb.id).find((s) => s.section_type === 'ai_summary');
  if (!target) return;
  let content: string;
  try {
    content = (await ctx.ai.complete(commentsMessages(tag, comments))).text;
  } catch (err) {
    ctx.log.warn({ notebook: nb.id, err: (err as Error).message }, 'the AI summary of a generated notebook failed');
    content = `_The summary could not be written: ${mdText((err as Error).message)} Use Summarize on this section to try again._`;
  }
  const current = ctx.notebooks.section(target.id);
  if (!current) return; // deleted meanwhile (or the notebook replaced again)
  updateSection(ctx, a, ctx.notebooks.get(nb.id)!, target.id, { version: current.version, content });
}
