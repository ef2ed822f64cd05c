// The template engine against Go's text/template: the package documentation's own examples
// (pipelines, trimming, the letter, block, a custom function) and its documented semantics
// (variables, if/else if, range with else/break/continue, with/else with, and/or, comparisons,
// len, index, slice, printf, comments), each with the output Go gives.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GoStruct, MAX_RENDER_MS, RenderLimitError, Template, TemplateError, TemplateExecError } from '../../service/src/alerts/template/index.ts';

const render = (text: string, data: unknown = null) => Template.compile(text, 't').render(data);

test('the documentation\'s pipeline examples all print "output" in quotes', () => {
  const examples = [
    '{{"\\"output\\""}}',
    '{{`"output"`}}',
    '{{printf "%q" "output"}}',
    '{{"output" | printf "%q"}}',
    '{{printf "%q" (print "out" "put")}}',
    '{{"put" | printf "%s%s" "out" | printf "%q"}}',
    '{{"output" | printf "%s" | printf "%q"}}',
    '{{with "output"}}{{printf "%q" .}}{{end}}',
    '{{with $x := "output" | printf "%q"}}{{$x}}{{end}}',
    '{{with $x := "output"}}{{printf "%q" $x}}{{end}}',
    '{{with $x := "output"}}{{$x | printf "%q"}}{{end}}',
  ];
  for (const e of examples) assert.equal(render(e), '"output"', e);
});

test('trim markers remove the white space beside an action: "{{23 -}} < {{- 45}}" is "23<45"', () => {
  assert.equal(render('{{23 -}} < {{- 45}}'), '23<45');
  assert.equal(render('a  {{- /* a comment */ -}}  b'), 'ab');
  assert.equal(render('{{-3}}'), '-3'); // a dash without a space is a negative number
});

test('the letter example renders as Go renders it', () => {
  const letter = `
Dear {{.Name}},
{{if .Attended}}
It was a pleasure to see you at the wedding.
{{- else}}
It is a shame you couldn't make it to the wedding.
{{- end}}
{{with .Gift -}}
Thank you for the lovely {{.}}.
{{end}}
Best wishes,
Josie
`;
  const t = Template.compile(letter, 'letter');
  const recipient = (Name: string, Gift: string, Attended: boolean) => new GoStruct('main.Recipient', { Name, Gift, Attended });
  const out = [recipient('Aunt Mildred', 'bone china tea set', true), recipient('Uncle John', 'moleskin pants', false), recipient('Cousin Rodney', '', false)]
    .map((r) => t.render(r))
    .join('');
  assert.equal(
    out,
    `
Dear Aunt Mildred,

It was a pleasure to see you at the wedding.
Thank you for the lovely bone china tea set.

Best wishes,
Josie

Dear Uncle John,

It is a shame you couldn't make it to the wedding.
Thank you for the lovely moleskin pants.

Best wishes,
Josie

Dear Cousin Rodney,

It is a shame you couldn't make it to the wedding.

Best wishes,
Josie
`,
  );
});

test('the block example: a block defines a template and runs it in place', () => {
  const master = 'Names:{{block "list" .}}{{"\\n"}}{{range .}}{{println "-" .}}{{end}}{{end}}';
  assert.equal(render(master, ['Gamora', 'Groot', 'Nebula', 'Rocket', 'Star-Lord']), 'Names:\n- Gamora\n- Groot\n- Nebula\n- Rocket\n- Star-Lord\n');
  const defined = '{{define "T1"}}ONE{{end}}{{define "T2"}}TWO{{end}}{{define "T3"}}{{template "T1"}} {{template "T2"}}{{end}}{{template "T3"}}';
  assert.equal(render(defined), 'ONE TWO');
});

test('the custom function example: a function takes the piped value last', () => {
  const title = { args: 1, fn: ([s]: unknown[]) => String(s).replace(/(^|[^\p{L}\p{N}_])(\p{L})/gu, (_m, sp: string, c: string) => sp + c.toUpperCase()) };
  const t = Template.compile('\nInput: {{printf "%q" .}}\nOutput 0: {{title .}}\nOutput 1: {{title . | printf "%q"}}\nOutput 2: {{printf "%q" . | title}}\n', 'titleTest', { title });
  assert.equal(
    t.render('the go programming language'),
    '\nInput: "the go programming language"\nOutput 0: The Go Programming Language\nOutput 1: "The Go Programming Language"\nOutput 2: "The Go Programming Language"\n',
  );
});

test('variables: $ is the data, := declares for the rest of the block, = assigns, range declares index and element', () => {
  assert.equal(render('{{$x := 1}}{{if true}}{{$x = 2}}{{$y := 3}}{{$y}}{{end}}{{$x}}'), '32');
  assert.equal(render('{{range $i, $e := .}}{{$i}}={{$e}};{{end}}', ['a', 'b']), '0=a;1=b;');
  assert.equal(render('{{range $k, $v := .}}{{$k}}:{{$v}} {{end}}', { b: 2, a: 1 }), 'a:1 b:2 ');
  assert.equal(render('{{with .A}}{{$.B}}{{end}}', { A: 'x', B: 'root' }), 'root');
  assert.throws(() => render('{{$nope}}'), (e) => e instanceof TemplateError && /undefined variable "\$nope"/.test(e.message));
});

test('if / else if / else, with / else with, and truth as Go defines it', () => {
  const t = '{{if eq .n 1}}one{{else if eq .n 2}}two{{else}}many{{end}}';
  assert.deepEqual([1, 2, 3].map((n) => render(t, { n })), ['one', 'two', 'many']);
  assert.equal(render('{{with .a}}a={{.}}{{else with .b}}b={{.}}{{else}}none{{end}}', { a: '', b: 'B' }), 'b=B');
  const truth = (v: unknown) => render('{{if .}}T{{else}}F{{end}}', v);
  assert.deepEqual([0, 1, '', 'x', [], [0], {}, { k: 1 }, null, false, true].map(truth), ['F', 'T', 'F', 'T', 'F', 'T', 'F', 'T', 'F', 'F', 'T']);
});

test('range: else for nothing, break and continue, over an integer, over a map in key order', () => {
  assert.equal(render('{{range .}}x{{else}}empty{{end}}', []), 'empty');
  assert.equal(render('{{range .}}{{if eq . 3}}{{break}}{{end}}{{if eq . 1}}{{continue}}{{end}}{{.}}{{end}}', [0, 1, 2, 3, 4]), '02');
  assert.equal(render('{{range 3}}{{.}}{{end}}'), '012');
  assert.equal(render('{{range .}}{{.}}{{end}}', { z: 'Z', a: 'A', m: 'M' }), 'AMZ');
  assert.throws(() => Template.compile('{{break}}'), /\{\{break\}\} outside \{\{range\}\}/);
});

test('and / or return the deciding operand and stop there; not, comparisons and their type rules', () => {
  assert.equal(render('{{and 1 0 .missing.call}}'), '0');
  assert.equal(render('{{or "" "b" "c"}}'), 'b');
  assert.equal(render('{{and "a" "b"}}'), 'b');
  assert.equal(render('{{not ""}}'), 'true');
  assert.equal(render('{{eq 1 2 3 1}} {{ne "a" "b"}} {{lt 1 2}} {{le 2 2}} {{gt "b" "a"}} {{ge 1 2}}'), 'true true true true true false');
  assert.throws(() => render('{{eq 1 "1"}}'), (e) => e instanceof TemplateExecError && /error calling eq: incompatible types for comparison/.test(e.message));
});

test('len, index, slice, print, println and printf verbs as Go formats them', () => {
  assert.equal(render('{{len .}}', 'héllo'), '6'); // bytes, as Go counts a string
  assert.equal(render('{{len .}} {{index . 1}}', ['a', 'b']), '2 b');
  assert.equal(render('{{index . "k" 1}}', { k: ['x', 'y'] }), 'y');
  assert.equal(render('{{index . "none"}}', {}), '<no value>');
  assert.equal(render('{{slice . 1 3}}', ['a', 'b', 'c', 'd']), '[b c]');
  assert.equal(render('{{print 1 2 "a" "b" 3}}'), '1 2ab3'); // a space only between two operands that are not strings
  assert.equal(render('{{println "a" 1}}'), 'a 1\n');
  assert.equal(
    render('{{printf "%5d|%-5s|%05.1f|%x|%X|%o|%b|%c|%U|%t|%e|%g|%v" 42 "ab" 3.14159 255 "hi" 8 5 65 9731 true 1234.5678 0.000012 .}}', { b: [1, 2], a: 'x' }),
    '   42|ab   |003.1|ff|6869|10|101|A|U+2603|true|1.234568e+03|1.2e-05|map[a:x b:[1 2]]',
  );
  assert.equal(render('{{printf "%d %s"  "x"}}'), '%!d(string=x) %!s(MISSING)');
  assert.equal(render('{{printf "%d" 1 2}}'), '1%!(EXTRA int=2)');
  assert.equal(render('{{printf "%v %v %v" 1.0 1e6 100000.0}}'), '1 1e+06 100000');
  assert.equal(render('{{printf "%q" "a\\"b\\n"}}'), '"a\\"b\\n"');
  assert.equal(render('{{3.0}} {{1e6}} {{0x1F}} {{\'a\'}} {{1_000}}'), '3 1e+06 31 97 1000');
});

test('a missing map key prints <no value>; an unknown struct field or a call on a string is an execution error with its place', () => {
  assert.equal(render('{{.a.b.c}}', {}), '<no value>');
  const s = new GoStruct('alerts.TemplateData', { AlertName: 'x' });
  assert.throws(
    () => Template.compile('line one\n  {{.Nope}}', 'body').render(s),
    (e) => e instanceof TemplateExecError && e.message === 'template: body:2:5: executing "body" at <.Nope>: can\'t evaluate field Nope in type alerts.TemplateData',
  );
  assert.throws(() => render('{{.a.b}}', { a: 'text' }), /can't evaluate field b in type string/);
});

test('a template that does not compile names the line and column', () => {
  const cases: Array<[string, number, number, RegExp]> = [
    ['{{if .x}}never ends', 1, 20, /unexpected EOF/],
    ['ok\n{{ .a | nosuchfunc }}', 2, 9, /function "nosuchfunc" not defined/],
    ['{{end}}', 1, 3, /unexpected \{\{end\}\}/],
    ['a\nb {{ "x" 1 }}', 2, 6, /can't give argument to non-function "x"/],
    ['{{ .a', 1, 1, /unclosed action/],
    ['{{/* open', 1, 1, /unclosed comment/],
    ['{{ printf "%d" (len .x }}', 1, 16, /unclosed left paren/],
  ];
  for (const [text, line, column, why] of cases) {
    assert.throws(
      () => Template.compile(text, 'body'),
      (e) => e instanceof TemplateError && e.line === line && e.column === column && why.test(e.message) && e.message.startsWith(`template: body:${line}:${column}: `),
      text,
    );
  }
});

test('html, js and urlquery escape as Go does', () => {
  assert.equal(render('{{html .}}', '<a href="x">&\'</a>'), '&lt;a href=&#34;x&#34;&gt;&amp;&#39;&lt;/a&gt;');
  assert.equal(render('{{js .}}', `it's "<b>"`), `it\\'s \\"\\u003Cb\\u003E\\"`);
  assert.equal(render('{{urlquery .}}', 'a b&c=d/é'), 'a+b%26c%3Dd%2F%C3%A9');
});

test('a render that holds the service\'s thread past its time budget is stopped, saying why; a normal one is not', () => {
  // The clock moves 1 ms each time the renderer looks at it, so the budget is reached after a known
  // amount of work, whatever the machine's speed.
  const tickingClock = () => {
    let t = 0;
    return () => t++;
  };
  const rows = Array.from({ length: 200_000 }, (_, i) => ({ host: `h${i}`, n: i }));
  const heavy = Template.compile('{{range .}}{{printf "%s=%d;" .host .n}}{{end}}');
  assert.throws(() => heavy.render(rows, undefined, tickingClock()), (err: unknown) => err instanceof RenderLimitError && new RegExp(`took longer than ${MAX_RENDER_MS} ms`).test(err.message));
  const light = Template.compile('{{range .}}{{.host}} {{end}}');
  assert.equal(light.render(rows.slice(0, 3), undefined, tickingClock()), 'h0 h1 h2 ');
  // The real clock: the same heavy template on a short list renders.
  assert.equal(heavy.render(rows.slice(0, 2)), 'h0=0;h1=1;');
});
