// The comment thread's small rules on the client: tags typed as a comma-separated list, when a comment
// shows "edited", and how its times read. Validation itself is the service's (its sentence is shown).
// Pure: tests/ui/detail.test.ts.

/** GET /api/v1/logs/{log_id}/comments → data[i]. */
export interface Comment {
  id: string;
  fractal_id: string;
  log_id: string;
  timestamp: string;
  content: string;
  tags: string[];
  author: string;
  author_type: 'user' | 'api_key';
  created_at: string;
  updated_at: string;
  can_edit: boolean;
}

/** "triage, phishing ,, triage" → ["triage", "phishing"]: trimmed, empties dropped, first spelling kept. */
export function parseTags(text: string): string[] {
  const out: string[] = [];
  for (const part of text.split(',')) {
    const t = part.trim();
    if (t && !out.includes(t)) out.push(t);
  }
  return out;
}

export const tagsText = (tags: readonly string[]): string => tags.join(', ');

/** Changed after it was written (more than a second later: creation sets both times). */
export function isEdited(c: Pick<Comment, 'created_at' | 'updated_at'>): boolean {
  const a = Date.parse(c.created_at);
  const b = Date.parse(c.updated_at);
  return Number.isFinite(a) && Number.isFinite(b) && b - a > 1000;
}

/** Oldest first, as a conversation reads; ties by id so the order is stable. */
export function sortComments(list: readonly Comment[]): Comment[] {
  return [...list].sort((x, y) => Date.parse(x.created_at) - Date.parse(y.created_at) || (x.id < y.id ? -1 : 1));
}

/** Which input a refusal is about, from the field the service's sentence names ("content", "tags"). */
export function errorField(message: string | null): 'content' | 'tags' | null {
  if (!message) return null;
  if (/"tags?"/.test(message)) return 'tags';
  if (/"content"/.test(message)) return 'content';
  return null;
}
