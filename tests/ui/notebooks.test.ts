// Pure logic of the notebook pages (renderer/src/lib/notebooks): the Markdown renderer, safe by
// construction (hostile notes, and random text through fast-check: only its own tags and attributes
// ever come out, links only to safe addresses), and how live events change the page's notebook.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { escapeHtml, renderMarkdown, safeUrl } from '../../renderer/src/lib/notebooks/markdown.ts';
import { initials, queryWindow } from '../../renderer/src/lib/documents.ts';
import { applyEvent, mergeSection, moved, type NotebookDoc, type Section } from '../../renderer/src/lib/notebooks/notebook-model.ts';

const ALLOWED_TAGS = new Set(['p', 'br', 'strong', 'em', 'del', 'code', 'pre', 'a', 'span', 'h3', 'h4', 'h5', 'h6', 'ul', 'ol', 'li', 'blockquote', 'hr', 'table', 'thead', 'tbody', 'tr', 'th', 'td']);
const ALLOWED_ATTRS = new Set(['href', 'target', 'rel', 'class', 'data-lang', 'start', 'style']);

/** Every tag and attribute of the HTML, as a browser's tokenizer would see them (the output is regular). */
function audit(html: string): string[] {
  const problems: string[] = [];
  for (const m of html.matchAll(/<\/?([a-zA-Z][\w-]*)([^>]*)>/g)) {
    const [, tag, rest] = m;
    if (!ALLOWED_TAGS.has(tag!.toLowerCase())) problems.push(`tag ${tag}`);
    // Nothing in a tag but name="value" pairs whose values hold no quote or angle bracket.
    if (!/^(\s[\w-]+="[^"<>]*")*$/.test(rest!)) problems.push(`malformed <${tag}${rest}>`);
    for (const a of rest!.matchAll(/\s([^\s=]+)(?:="([^"]*)")?/g)) {
      const [, name, value = ''] = a;
      if (!ALLOWED_ATTRS.has(name!)) problems.push(`attribute ${name}`);
      if (name === 'href' && safeUrl(value.replace(/&amp;/g, '&').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>')) === null) problems.push(`href ${value}`);
      if (name === 'style' && !/^text-align:(left|right|center)$/.test(value)) problems.push(`style ${value}`);
    }
  }
  return problems;
}

describe('renderMarkdown', () => {
  test('the Markdown an analyst writes', () => {
    assert.equal(renderMarkdown('# Findings\nweb1 is **owned**, see `ps.exe`'), '<h3>Findings</h3>\n<p>web1 is <strong>owned</strong>, see <code>ps.exe</code></p>');
    assert.equal(renderMarkdown('- a\n- b\n  - c\n\n1. one\n2. two'), '<ul><li>a</li><li>b<ul><li>c</li></ul></li></ul>\n<ol><li>one</li><li>two</li></ol>');
    assert.equal(
      renderMarkdown('| host | n |\n|---|--:|\n| web1 | 3 |'),
      '<table class="md-table"><thead><tr><th>host</th><th style="text-align:right">n</th></tr></thead><tbody><tr><td>web1</td><td style="text-align:right">3</td></tr></tbody></table>',
    );
    assert.equal(renderMarkdown('```\n<b>x</b>\n```'), '<pre class="md-code"><code>&lt;b&gt;x&lt;/b&gt;</code></pre>');
    assert.equal(renderMarkdown('> quoted\n\n---'), '<blockquote><p>quoted</p></blockquote>\n<hr>');
    assert.equal(renderMarkdown('snake_case_field and _em_'), '<p>snake_case_field and <em>em</em></p>');
    assert.equal(renderMarkdown('line  \nbreak'), '<p>line<br>\nbreak</p>');
    assert.equal(renderMarkdown('\\*not em\\*'), '<p>*not em*</p>');
  });

  test('links: safe schemes only; images never load', () => {
    assert.equal(renderMarkdown('[runbook](https://example.org/r?a=1&b=2)'), '<p><a href="https://example.org/r?a=1&amp;b=2" target="_blank" rel="noopener noreferrer">runbook</a></p>');
    assert.equal(renderMarkdown('[search](#/search?q=x)'), '<p><a href="#/search?q=x">search</a></p>');
    assert.equal(renderMarkdown('see https://example.org/x.'), '<p>see <a href="https://example.org/x" target="_blank" rel="noopener noreferrer">https://example.org/x</a>.</p>');
    for (const bad of ['javascript:alert(1)', 'JaVaScRiPt:alert(1)', ' javascript:alert(1)', 'java\tscript:alert(1)', 'java\u0000script:x', 'data:text/html,<script>x</script>', 'vbscript:x', '//evil.example/x', 'file:///etc/passwd']) {
      const html = renderMarkdown(`[x](${bad})`);
      assert.doesNotMatch(html, /<a /, bad);
      assert.deepEqual(audit(html), [], bad);
    }
    const img = renderMarkdown('![logo](https://evil.example/track.png)');
    assert.doesNotMatch(img, /<img/);
    assert.match(img, /\[image: logo\]/);
  });

  test('hostile notes come out as text', () => {
    const hostile = [
      '<script>alert(1)</script>',
      '<img src=x onerror=alert(1)>',
      '<iframe src="https://evil.example"></iframe>',
      '<a href="javascript:alert(1)">x</a>',
      '[x](https://a.example/"onmouseover="alert(1))',
      '[x](https://a.example/ onmouseover=alert(1))',
      '`</code><script>alert(1)</script>`',
      '| <b onmouseover=1>x</b> |\n|---|\n| y |',
      '<svg/onload=alert(1)>',
      '**<style>body{display:none}</style>**',
      '```"><script>x</script>\ncode\n```',
    ];
    for (const h of hostile) {
      const html = renderMarkdown(h);
      assert.deepEqual(audit(html), [], `${h} → ${html}`);
      assert.doesNotMatch(html, /<(script|img|iframe|svg|style)\b/i, h);
    }
  });

  test('whatever the text, only the renderer’s own tags, attributes and safe links come out', () => {
    const piece = fc.constantFrom('<', '>', '"', "'", '&', '[', ']', '(', ')', '`', '*', '_', '~', '#', '|', '-', '!', '\\', '\n', ' ', 'javascript:', 'https://a.b/', 'on', 'error=', 'script', 'img', ':', '=', '1.', '> ', '```', 'x');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), (parts) => {
        const html = renderMarkdown(parts.join(''));
        assert.deepEqual(audit(html), [], `${JSON.stringify(parts.join(''))} → ${html}`);
      }),
      { numRuns: 2000 },
    );
  });

  test('escapeHtml', () => {
    assert.equal(escapeHtml(`<a href="x" onclick='y'>&</a>`), '&lt;a href=&quot;x&quot; onclick=&#39;y&#39;&gt;&amp;&lt;/a&gt;');
  });
});

const section = (id: string, over: Partial<Section> = {}): Section => ({
  id,
  notebook_id: 'nb',
  position: 0,
  section_type: 'markdown',
  title: '',
  content: `text of ${id}`,
  tags: [],
  version: 1,
  results_version: 0,
  created_by: 'ana',
  updated_by: 'ana',
  created_at: '2026-01-01T00:00:00.000Z',
  updated_at: '2026-01-01T00:00:00.000Z',
  results_summary: null,
  ...over,
});

const docWith = (sections: Section[], version = 3): NotebookDoc => ({
  id: 'nb',
  name: 'N',
  description: '',
  fractal_id: 'f',
  prism_id: null,
  tags: [],
  variables: [],
  time_range: '24h',
  start: null,
  end: null,
  version,
  created_by: 'ana',
  updated_by: 'ana',
  created_at: '',
  updated_at: '',
  scope: { type: 'fractal', id: 'f', name: 'f' },
  can_edit: true,
  live_event_id: 'x-1',
  sections: sections.map((s, i) => ({ ...s, position: i })),
});

describe('applyEvent', () => {
  const base = docWith([section('a'), section('b')]);
  const docOf = (r: ReturnType<typeof applyEvent>) => {
    assert.ok('doc' in r, JSON.stringify(r));
    return r.doc;
  };

  test('added, moved and deleted sections follow the service’s order', () => {
    const added = docOf(applyEvent(base, 'section_added', { section: section('c'), order: ['a', 'c', 'b'], version: 4 }));
    assert.deepEqual(added.sections.map((s) => [s.id, s.position]), [['a', 0], ['c', 1], ['b', 2]]);
    assert.equal(added.version, 4);
    assert.deepEqual(docOf(applyEvent(added, 'section_added', { section: section('c'), order: ['a', 'c', 'b'], version: 4 })).sections.length, 3, 'an echo adds nothing');
    const moved2 = docOf(applyEvent(added, 'sections_reordered', { order: ['b', 'a', 'c'], version: 5 }));
    assert.deepEqual(moved2.sections.map((s) => s.id), ['b', 'a', 'c']);
    const deleted = docOf(applyEvent(moved2, 'section_deleted', { id: 'a', order: ['b', 'c'], version: 6 }));
    assert.deepEqual(deleted.sections.map((s) => [s.id, s.position]), [['b', 0], ['c', 1]]);
    assert.deepEqual(applyEvent(base, 'section_added', { section: section('c'), order: ['a', 'zz', 'b', 'c'], version: 4 }), { reload: true }, 'an order naming an unseen section');
    assert.deepEqual(applyEvent(base, 'sections_reordered', { order: ['a'], version: 4 }), { reload: true });
  });

  test('an edit applies only when newer, and keeps the stored results', () => {
    const withResults = docWith([section('a', { section_type: 'query', results: { count: 1 } as never, results_version: 1 })]);
    const newer = docOf(applyEvent(withResults, 'section_updated', { section: { ...section('a', { section_type: 'query' }), version: 2, content: 'new' } }));
    assert.equal(newer.sections[0]!.content, 'new');
    assert.deepEqual(newer.sections[0]!.results, { count: 1 });
    assert.equal(newer.sections[0]!.results_version, 1);
    assert.equal(docOf(applyEvent(newer, 'section_updated', { section: { ...section('a'), version: 2, content: 'echo' } })).sections[0]!.content, 'new');
    assert.deepEqual(applyEvent(base, 'section_updated', { section: section('zz') }), { reload: true });
  });

  test('a write’s answer keeps the rows held only while they are of the same results_version', () => {
    const held = section('a', { section_type: 'query', results_version: 1, results_summary: { count: 1 } as never, results: { count: 1 } as never });
    const retitled = mergeSection(held, section('a', { section_type: 'query', version: 2, title: 'T', results_version: 1, results_summary: { count: 1 } as never }));
    assert.deepEqual([retitled.title, retitled.results], ['T', { count: 1 }]);
    const rerun = mergeSection(held, section('a', { section_type: 'query', results_version: 2, results_summary: { count: 7 } as never }));
    assert.equal('results' in rerun, false, 'rows of version 1 are not shown as version 2');
    const withRows = mergeSection(held, section('a', { section_type: 'query', results_version: 2, results: { count: 7 } as never }));
    assert.deepEqual(withRows.results, { count: 7 });
    assert.equal(mergeSection(retitled, held), retitled, 'an older answer changes nothing');
  });

  test('results, variables, the notebook’s fields, replacement and deletion', () => {
    const r = docOf(applyEvent(base, 'results_stored', { section_id: 'b', results_version: 1, results: { count: 2 }, results_summary: { count: 2 }, updated_by: 'ben', updated_at: 't' }));
    assert.deepEqual(r.sections[1]!.results, { count: 2 });
    assert.deepEqual(r.sections[1]!.results_summary, { count: 2 });
    assert.equal(docOf(applyEvent(r, 'results_stored', { section_id: 'b', results_version: 1, results: { count: 9 } })).sections[1]!.results!.count, 2);
    // Rows too large for the event: the summary changes and the rows held are dropped (the section reads the new ones).
    const big = docOf(applyEvent(r, 'results_stored', { section_id: 'b', results_version: 2, results_omitted: true, results_summary: { count: 5000 } }));
    assert.equal(big.sections[1]!.results_version, 2);
    assert.deepEqual(big.sections[1]!.results_summary, { count: 5000 });
    assert.equal('results' in big.sections[1]!, false);
    const cleared = docOf(applyEvent(r, 'results_stored', { section_id: 'b', results_version: 2, results: null, results_summary: null }));
    assert.deepEqual([cleared.sections[1]!.results, cleared.sections[1]!.results_summary], [null, null]);
    const v = docOf(applyEvent(base, 'variables_updated', { variables: [{ name: 'h', value: 'x' }], version: 4 }));
    assert.deepEqual(v.variables, [{ name: 'h', value: 'x' }]);
    assert.deepEqual(docOf(applyEvent(v, 'variables_updated', { variables: [], version: 4 })).variables, [{ name: 'h', value: 'x' }], 'not older');
    const n = docOf(applyEvent(base, 'notebook_updated', { id: 'nb', name: 'Renamed', version: 4 }));
    assert.equal(n.name, 'Renamed');
    assert.deepEqual(n.sections, base.sections);
    assert.deepEqual(applyEvent(base, 'notebook_replaced', {}), { reload: true });
    assert.deepEqual(applyEvent(base, 'notebook_deleted', { id: 'nb', by: 'ben' }), { deleted: true, by: 'ben' });
  });

  test('helpers: moving ids, initials, the editor’s window', () => {
    assert.deepEqual(moved(['a', 'b', 'c'], 2, 0), ['c', 'a', 'b']);
    assert.deepEqual(moved(['a', 'b', 'c'], 0, 2), ['b', 'c', 'a']);
    assert.equal(initials('ana'), 'AN');
    assert.equal(initials('Jane Doe'), 'JD');
    assert.equal(initials('soar-bot (API key)'), 'SB');
    const now = new Date('2026-03-01T12:00:00Z');
    assert.deepEqual(queryWindow({ time_range: '1h', start: null, end: null }, now), { start: '2026-03-01T11:00:00.000Z', end: '2026-03-01T12:00:00.000Z' });
    assert.deepEqual(queryWindow({ time_range: 'custom', start: 'a', end: 'b' }, now), { start: 'a', end: 'b' });
    assert.equal(queryWindow({ time_range: 'all', start: null, end: null }, now).start, '2026-01-30T12:00:00.000Z');
  });
});
