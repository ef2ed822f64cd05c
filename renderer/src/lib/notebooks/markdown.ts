// Markdown of notebook sections to HTML, safe by construction: the output is built only from the
// tags written here and text that went through escapeHtml(), so raw HTML in a section (<script>,
// <img onerror=…>, <iframe>) shows as the text it is and never becomes markup. Links keep only
// http(s), mailto and the app's own #/ addresses (javascript:, data: and the rest become plain text);
// images are not loaded (an isolated appliance should not fetch from wherever a note points), they
// show as a link to their address. Pure: tests/ui/notebooks.test.ts, and in Chromium by
// tests/e2e/notebooks.test.ts with hostile notes.
//
// What is understood: ATX headings (#…######, shown two levels down so they sit under the section's
// title), paragraphs, hard breaks (two trailing spaces or a backslash), **bold**, *em* / _em_,
// ~~strike~~, `code`, fenced code blocks, block quotes, bullet and numbered lists (nested by indent),
// tables (| a | b | with a --- row, : for alignment), horizontal rules, [text](url), <url>, bare
// http(s) addresses, backslash escapes.

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
export const escapeHtml = (s: string): string => s.replace(/[&<>"']/g, (c) => ESC[c]!);

/** The address a link may have, or null: http(s), mailto, or the app's own hash addresses. */
export function safeUrl(raw: string): string | null {
  // Browsers ignore control characters and spaces inside a scheme ("java\tscript:"): so does this.
  const url = raw.trim();
  const probe = url.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase();
  if (/^https?:\/\//.test(probe) || /^mailto:/.test(probe)) return url;
  if (probe.startsWith('#/')) return url;
  return null;
}

// ---- inline ----------------------------------------------------------------------------------------

const PUNCT = /[\\`*_{}[\]()#+\-.!|~<>"']/;

function link(text: string, href: string): string {
  const url = safeUrl(href);
  if (url === null) return `${text} <span class="md-unsafe">(${escapeHtml(href)})</span>`;
  const external = !url.startsWith('#');
  return `<a href="${escapeHtml(url)}"${external ? ' target="_blank" rel="noopener noreferrer"' : ''}>${text}</a>`;
}

/** Finds the `]` closing the `[` at `open`, allowing nested brackets; -1 when there is none. */
function closingBracket(s: string, open: number): number {
  let depth = 0;
  for (let i = open; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') i++;
    else if (c === '[') depth++;
    else if (c === ']' && --depth === 0) return i;
  }
  return -1;
}

/** `(url)` right after a link's text: the url and where the whole thing ends, or null. */
function linkTarget(s: string, at: number): { url: string; end: number } | null {
  if (s[at] !== '(') return null;
  let depth = 0;
  for (let i = at; i < s.length; i++) {
    const c = s[i];
    if (c === '\\') i++;
    else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) {
      // An optional "title" after the address is dropped.
      const inner = s.slice(at + 1, i).trim().replace(/\s+("[^"]*"|'[^']*')$/, '');
      return { url: inner.replace(/^<(.*)>$/, '$1'), end: i + 1 };
    }
  }
  return null;
}

const EMPHASIS: Array<{ mark: string; tag: string }> = [
  { mark: '**', tag: 'strong' },
  { mark: '__', tag: 'strong' },
  { mark: '~~', tag: 'del' },
  { mark: '*', tag: 'em' },
  { mark: '_', tag: 'em' },
];

export function renderInline(s: string): string {
  let out = '';
  let i = 0;
  while (i < s.length) {
    const c = s[i]!;
    if (c === '\\' && i + 1 < s.length && PUNCT.test(s[i + 1]!)) {
      out += escapeHtml(s[i + 1]!);
      i += 2;
      continue;
    }
    if (c === '`') {
      const run = /^`+/.exec(s.slice(i))![0];
      const close = s.indexOf(run, i + run.length);
      if (close > 0) {
        out += `<code>${escapeHtml(s.slice(i + run.length, close).trim())}</code>`;
        i = close + run.length;
        continue;
      }
      out += escapeHtml(run);
      i += run.length;
      continue;
    }
    if (c === '!' && s[i + 1] === '[') {
      const close = closingBracket(s, i + 1);
      const target = close > 0 ? linkTarget(s, close + 1) : null;
      if (target) {
        const alt = s.slice(i + 2, close);
        out += link(`${escapeHtml(`[image: ${alt || 'untitled'}]`)}`, target.url);
        i = target.end;
        continue;
      }
    }
    if (c === '[') {
      const close = closingBracket(s, i);
      const target = close > 0 ? linkTarget(s, close + 1) : null;
      if (target) {
        out += link(renderInline(s.slice(i + 1, close)), target.url);
        i = target.end;
        continue;
      }
    }
    if (c === '<') {
      const m = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/i.exec(s.slice(i));
      if (m) {
        out += link(escapeHtml(m[1]!), m[1]!);
        i += m[0].length;
        continue;
      }
    }
    if ((c === 'h' || c === 'H') && (i === 0 || /[\s(]/.test(s[i - 1]!))) {
      const m = /^https?:\/\/[^\s<>"']+[^\s<>"'.,;:!?)\]]/i.exec(s.slice(i));
      if (m) {
        out += link(escapeHtml(m[0]), m[0]);
        i += m[0].length;
        continue;
      }
    }
    const em = EMPHASIS.find((e) => s.startsWith(e.mark, i));
    if (em && s[i + em.mark.length] && !/\s/.test(s[i + em.mark.length]!)) {
      // Intra-word underscores (snake_case names, common in logs) are not emphasis.
      const intraWord = em.mark[0] === '_' && i > 0 && /[\p{L}\p{N}]/u.test(s[i - 1]!);
      const close = intraWord ? -1 : findClose(s, i + em.mark.length, em.mark);
      if (close > 0) {
        out += `<${em.tag}>${renderInline(s.slice(i + em.mark.length, close))}</${em.tag}>`;
        i = close + em.mark.length;
        continue;
      }
    }
    out += escapeHtml(c);
    i++;
  }
  return out;
}

/** The closing emphasis mark: not after a space, not escaped, not inside a code span. */
function findClose(s: string, from: number, mark: string): number {
  for (let j = from; j < s.length; j++) {
    const c = s[j];
    if (c === '\\') {
      j++;
      continue;
    }
    if (c === '`') {
      const close = s.indexOf('`', j + 1);
      if (close > 0) j = close;
      continue;
    }
    if (s.startsWith(mark, j) && !/\s/.test(s[j - 1]!) && j > from) {
      if (mark.length === 1 && s[j + 1] === mark) {
        j++; // part of a double mark
        continue;
      }
      if (mark[0] === '_' && /[\p{L}\p{N}]/u.test(s[j + mark.length] ?? '')) continue;
      return j;
    }
  }
  return -1;
}

// ---- blocks ----------------------------------------------------------------------------------------

const FENCE = /^ {0,3}(`{3,}|~{3,})\s*([\w+-]*)/;
const HEADING = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const RULE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const BULLET = /^( *)([-*+])\s+(.*)$/;
const ORDERED = /^( *)(\d{1,9})[.)]\s+(.*)$/;
const TABLE_RULE = /^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$/;

function cells(line: string): string[] {
  let t = line.trim();
  if (t.startsWith('|')) t = t.slice(1);
  if (t.endsWith('|') && !t.endsWith('\\|')) t = t.slice(0, -1);
  const out: string[] = [];
  let cur = '';
  for (let i = 0; i < t.length; i++) {
    if (t[i] === '\\' && t[i + 1] === '|') {
      cur += '\\|';
      i++;
    } else if (t[i] === '|') {
      out.push(cur.trim());
      cur = '';
    } else cur += t[i];
  }
  out.push(cur.trim());
  return out;
}

function listItem(line: string): { indent: number; ordered: boolean; start: number; text: string } | null {
  const b = BULLET.exec(line);
  if (b && !RULE.test(line)) return { indent: b[1]!.length, ordered: false, start: 1, text: b[3]! };
  const o = ORDERED.exec(line);
  if (o) return { indent: o[1]!.length, ordered: true, start: Number(o[2]), text: o[3]! };
  return null;
}

const isBlank = (l: string | undefined) => l === undefined || l.trim() === '';

/** Starts another block: a paragraph's lines stop before it. */
function startsBlock(line: string): boolean {
  return FENCE.test(line) || HEADING.test(line) || RULE.test(line) || QUOTE.test(line) || listItem(line) !== null;
}

function paragraph(lines: string[]): string {
  const parts = lines.map((l, i) => {
    const last = i === lines.length - 1;
    const hard = !last && (/ {2,}$/.test(l) || /\\$/.test(l));
    const text = hard && /\\$/.test(l) ? l.slice(0, -1) : l;
    return renderInline(text.trim()) + (hard ? '<br>' : '');
  });
  return `<p>${parts.join('\n')}</p>`;
}

function renderBlocks(lines: string[]): string {
  const out: string[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (isBlank(line)) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const mark = fence[1]!;
      const body: string[] = [];
      i++;
      while (i < lines.length && !lines[i]!.trim().startsWith(mark)) body.push(lines[i++]!);
      i++; // the closing fence (or the end)
      const lang = fence[2] ? ` data-lang="${escapeHtml(fence[2])}"` : '';
      out.push(`<pre class="md-code"${lang}><code>${escapeHtml(body.join('\n'))}</code></pre>`);
      continue;
    }
    const h = HEADING.exec(line);
    if (h) {
      const level = Math.min(6, h[1]!.length + 2);
      out.push(`<h${level}>${renderInline(h[2] ?? '')}</h${level}>`);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push('<hr>');
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const body: string[] = [];
      while (i < lines.length && !isBlank(lines[i]) && (QUOTE.test(lines[i]!) || !startsBlock(lines[i]!))) {
        const q = QUOTE.exec(lines[i]!);
        body.push(q ? q[1]! : lines[i]!);
        i++;
      }
      out.push(`<blockquote>${renderBlocks(body)}</blockquote>`);
      continue;
    }
    const item = listItem(line);
    if (item) {
      i = renderList(lines, i, item.indent, out);
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_RULE.test(lines[i + 1]!) && lines[i + 1]!.includes('-')) {
      const head = cells(line);
      const align = cells(lines[i + 1]!).map((c) => (c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : ''));
      i += 2;
      const rows: string[][] = [];
      while (i < lines.length && !isBlank(lines[i]) && lines[i]!.includes('|')) rows.push(cells(lines[i++]!));
      const td = (tag: string, text: string, k: number) => `<${tag}${align[k] ? ` style="text-align:${align[k]}"` : ''}>${renderInline(text)}</${tag}>`;
      out.push(
        `<table class="md-table"><thead><tr>${head.map((c, k) => td('th', c, k)).join('')}</tr></thead><tbody>` +
          rows.map((r) => `<tr>${head.map((_, k) => td('td', r[k] ?? '', k)).join('')}</tr>`).join('') +
          '</tbody></table>',
      );
      continue;
    }
    const para: string[] = [];
    while (i < lines.length && !isBlank(lines[i]) && (para.length === 0 || !startsBlock(lines[i]!))) para.push(lines[i++]!);
    out.push(paragraph(para));
  }
  return out.join('\n');
}

/** A list starting at lines[i] whose items are indented `indent`; returns the index after it. */
function renderList(lines: string[], i: number, indent: number, out: string[]): number {
  const first = listItem(lines[i]!)!;
  const tag = first.ordered ? 'ol' : 'ul';
  const items: string[] = [];
  while (i < lines.length) {
    const it = listItem(lines[i]!);
    if (!it || it.indent !== indent || it.ordered !== first.ordered) break;
    const body = [it.text];
    i++;
    // The item's further lines: more indented ones (nested lists, continued text) and lazy text lines.
    while (i < lines.length && !isBlank(lines[i])) {
      const next = listItem(lines[i]!);
      if (next && next.indent <= indent) break;
      if (!next && startsBlock(lines[i]!) && !/^\s/.test(lines[i]!)) break;
      body.push(lines[i]!.replace(new RegExp(`^ {0,${indent + 4}}`), ''));
      i++;
    }
    const nestedAt = body.findIndex((l, k) => k > 0 && listItem(l) !== null);
    const text = nestedAt < 0 ? body : body.slice(0, nestedAt);
    let html = text.map((l) => renderInline(l.trim())).join('\n');
    if (nestedAt >= 0) html += renderBlocks(body.slice(nestedAt));
    items.push(`<li>${html}</li>`);
    if (isBlank(lines[i]) && listItem(lines[i + 1] ?? '')?.indent === indent) i++; // a loose list
  }
  const start = first.ordered && first.start !== 1 ? ` start="${first.start}"` : '';
  out.push(`<${tag}${start}>${items.join('')}</${tag}>`);
  return i;
}

/** The HTML of a section's Markdown. */
export function renderMarkdown(src: string): string {
  return renderBlocks(src.replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n'));
}
