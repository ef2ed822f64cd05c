// The query language in the editor (renderer/src/lib/search/language.ts): the highlighting tokenizer and
// the completion source, run on CodeMirror's own StringStream and CompletionContext (no DOM needed).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StringStream } from '@codemirror/language';
import { EditorState } from '@codemirror/state';
import { CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { parenDepth, queryCompletionSource, queryStreamParser, type CompletionData } from '../../renderer/src/lib/search/language.ts';

/** [text, style] for every token of the query (whitespace skipped). */
function tokens(query: string): Array<[string, string | null]> {
  const out: Array<[string, string | null]> = [];
  const state = queryStreamParser.startState!(2);
  for (const line of query.split('\n')) {
    const stream = new StringStream(line, 2, 2);
    while (!stream.eol()) {
      const style = queryStreamParser.token(stream, state);
      const text = stream.current();
      if (text.trim() !== '') out.push([text, style]);
      stream.start = stream.pos;
    }
  }
  return out;
}

const styleOf = (query: string, text: string) => tokens(query).find(([t]) => t === text)?.[1];

test('highlighting: fields, operators, values, keywords, commands, pipes', () => {
  assert.deepEqual(tokens('status>=500 AND user!=alice | groupBy(host, limit=5)'), [
    ['status', 'propertyName'],
    ['>=', 'compareOperator'],
    ['500', 'number'],
    ['AND', 'keyword'],
    ['user', 'propertyName'],
    ['!=', 'compareOperator'],
    ['alice', 'atom'],
    ['|', 'separator'],
    ['groupBy', 'variableName.function'],
    ['(', 'bracket'],
    ['host', 'variableName'],
    [',', 'punctuation'],
    ['limit', 'propertyName'],
    ['=', 'compareOperator'],
    ['5', 'number'],
    [')', 'bracket'],
  ]);
  assert.equal(styleOf('not a=1', 'not'), 'keyword', 'keywords in any case');
  assert.equal(styleOf('a=or', 'or'), 'atom', 'after an operator a word is a value');
  assert.equal(styleOf('* | count()', '*'), 'operator');
  assert.equal(styleOf('f=*', '*'), 'atom', 'the wildcard value');
  assert.equal(styleOf('x := bytes * 2', 'x'), 'variableName.definition');
  assert.equal(styleOf('case { a=1 | x:="y" }', 'case'), 'variableName.function');
  assert.equal(styleOf('status=200,301', '301'), 'number', 'a comma list continues the values');
  assert.equal(styleOf('user=@who', '@who'), 'variableName.special');
  assert.equal(styleOf('a=1 # no comments', '#'), 'invalid');
});

test('highlighting: strings with escapes, regexes, regex versus division', () => {
  assert.deepEqual(tokens('msg="say \\"hi\\"" OR \'x\''), [
    ['msg', 'propertyName'],
    ['=', 'compareOperator'],
    ['"say \\"hi\\""', 'string'],
    ['OR', 'keyword'],
    ["'x'", 'string'],
  ]);
  assert.deepEqual(tokens('image=/C:\\\\Win[/]dows\\/x/i'), [
    ['image', 'propertyName'],
    ['=', 'compareOperator'],
    ['/C:\\\\Win[/]dows\\/x/i', 'regexp'],
  ]);
  // After a value, an identifier or ")" a slash divides.
  assert.deepEqual(
    tokens('r := (a + b) / 2 / c').filter(([t]) => t === '/'),
    [
      ['/', 'arithmeticOperator'],
      ['/', 'arithmeticOperator'],
    ],
  );
  assert.equal(styleOf('/error/ OR x=1', '/error/'), 'regexp');
  // An unterminated string runs on to the next line.
  const t = tokens('a="one\ntwo" b=1');
  assert.deepEqual(t.slice(0, 4), [
    ['a', 'propertyName'],
    ['=', 'compareOperator'],
    ['"one', 'string'],
    ['two"', 'string'],
  ]);
  assert.equal(t[4]![1], 'propertyName');
});

function data(over: Partial<CompletionData> = {}): CompletionData & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    commands: async () => [
      { name: 'groupBy', aliases: [], signature: 'groupBy(field, …, function=count(), limit=N)', description: 'Groups rows.', example: '* | groupBy(host)' },
      { name: 'count', aliases: [], signature: 'count([field], unique=false)', description: 'Counts rows.' },
      { name: 'graphWorld', aliases: ['worldmap'], signature: 'graphWorld(lat, lon)', description: 'Map.' },
    ],
    fields: async () => [
      { name: 'host', type: 'String', count: 8 },
      { name: 'status', type: 'Int64', count: 8 },
    ],
    topValues: async (field) => {
      asked.push(field);
      return [
        { value: 'web1', count: 4 },
        { value: 'login ok', count: 2 },
      ];
    },
    ...over,
  };
}

async function complete(doc: string, d: CompletionData, explicit = false): Promise<CompletionResult | null> {
  const state = EditorState.create({ doc });
  return queryCompletionSource(d)(new CompletionContext(state, doc.length, explicit));
}

test('completion: commands with signatures, fields, keywords at a stage start', async () => {
  const r = (await complete('status=500 | gro', data()))!;
  assert.equal(r.from, 13);
  const g = r.options.find((o) => o.label === 'groupBy')!;
  assert.equal(g.detail, 'groupBy(field, …, function=count(), limit=N)');
  assert.match(String(g.info), /Groups rows\.[\s\S]*Example: \* \| groupBy\(host\)/);
  assert.ok(r.options.some((o) => o.label === 'worldmap'), 'aliases complete too');
  assert.ok(r.options.some((o) => o.label === 'host' && o.type === 'property'));
  assert.ok(r.options.some((o) => o.label === 'AND' && o.type === 'keyword'));
  // Right after a pipe, the list comes without typing.
  assert.ok(await complete('a=1 | ', data()));
  assert.equal(await complete('a=1 ', data()), null, 'not on every space');
});

test('completion: inside a call only fields; no completion inside strings or variables', async () => {
  const r = (await complete('* | groupBy(ho', data()))!;
  assert.deepEqual(
    r.options.map((o) => o.label),
    ['host', 'status'],
  );
  assert.equal(await complete('a=1 "ho', data()), null, 'a bare search string');
  assert.equal(await complete('x=@ho', data()), null);
  assert.equal(parenDepth('a(")(" , b(c)'), 1);
});

test('completion: top values after field= and field!=, quoted as the language needs', async () => {
  const d = data();
  const r = (await complete('status=500 host=', d))!;
  assert.deepEqual(d.asked, ['host']);
  assert.equal(r.from, 16);
  assert.deepEqual(
    r.options.map((o) => o.label),
    ['web1', '"login ok"'],
  );
  const partial = (await complete('host!="lo', d))!;
  assert.equal(partial.from, 6, 'replaces the quoted text typed so far');
  // key=value arguments of a call are not field filters.
  assert.equal((await complete('* | groupBy(host, limit=', d))?.options.some((o) => o.label === 'web1') ?? false, false);
  // A failing fieldstats call means no value list, not an error.
  assert.equal(await complete('host=', data({ topValues: async () => Promise.reject(new Error('down')) })), null);
});
