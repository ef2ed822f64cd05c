// Token rules of query-language.md §1.1.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { QueryParseError } from '../../service/src/query/syntax/ast.ts';
import { tokenize, type TokenType } from '../../service/src/query/syntax/lexer.ts';

/** `TYPE:text` for every token but EOF. */
const kinds = (q: string): string[] =>
  tokenize(q)
    .filter((t) => t.type !== 'EOF')
    .map((t) => `${t.type}:${t.text}`);
const types = (q: string): TokenType[] => tokenize(q).map((t) => t.type);

function assertBadCharacter(q: string, c: string, start: number): void {
  assert.throws(
    () => tokenize(q),
    (e: unknown) =>
      e instanceof QueryParseError &&
      e.message === `unexpected character "${c}" in query` &&
      e.span?.start === start &&
      e.span?.end === start + 1,
    q,
  );
}

describe('identifiers, keywords, function names', () => {
  test('-, ., * and digits continue an identifier', () => {
    assert.deepEqual(kinds('src-ip event.name bytes*2 a-b _x9'), [
      'FIELD:src-ip',
      'FIELD:event.name',
      'FIELD:bytes*2',
      'FIELD:a-b',
      'FIELD:_x9',
    ]);
  });

  test('Unicode letters start and continue identifiers', () => {
    assert.deepEqual(kinds('größe=1 日本語=x'), ['FIELD:größe', 'EQUAL:=', 'VALUE:1', 'FIELD:日本語', 'EQUAL:=', 'FIELD:x']);
  });

  test('AND, OR, NOT in any letter case are keywords, also before "("', () => {
    assert.deepEqual(kinds('and Or NOT not ('), ['AND:and', 'OR:Or', 'NOT:NOT', 'NOT:not', 'LPAREN:(']);
    // Keyword letters inside a longer identifier are not keywords.
    assert.deepEqual(types('android ORDER NOT-x'), ['FIELD', 'FIELD', 'FIELD', 'EOF']);
  });

  test('an identifier followed by "(" (whitespace allowed) is a function name', () => {
    assert.deepEqual(kinds('count() count (x) count\n\t('), [
      'FUNCTION:count',
      'LPAREN:(',
      'RPAREN:)',
      'FUNCTION:count',
      'LPAREN:(',
      'FIELD:x',
      'RPAREN:)',
      'FUNCTION:count',
      'LPAREN:(',
    ]);
  });

  test('case (and chain, join) are function names before "{"; other names are not', () => {
    assert.deepEqual(types('case { CASE{ chain { join { foo { case = 1'), [
      'FUNCTION',
      'LBRACE',
      'FUNCTION',
      'LBRACE',
      'FUNCTION',
      'LBRACE',
      'FUNCTION',
      'LBRACE',
      'FIELD',
      'LBRACE',
      'FIELD',
      'EQUAL',
      'VALUE',
      'EOF',
    ]);
  });
});

describe('values', () => {
  test('start with a digit and continue with identifier characters', () => {
    assert.deepEqual(kinds('200 1.5 1e3 10.0.0.1 5m 2026-01-01'), [
      'VALUE:200',
      'VALUE:1.5',
      'VALUE:1e3',
      'VALUE:10.0.0.1',
      'VALUE:5m',
      'VALUE:2026-01-01',
    ]);
  });

  test('a lone ":" is the value ":", ":=" assigns', () => {
    assert.deepEqual(kinds('a : b := c'), ['FIELD:a', 'VALUE::', 'FIELD:b', 'ASSIGN::=', 'FIELD:c']);
  });

  test('"*" glued to identifier characters is one value, unless it multiplies an operand', () => {
    assert.deepEqual(kinds('image=*powershell* x=*.exe'), ['FIELD:image', 'EQUAL:=', 'VALUE:*powershell*', 'FIELD:x', 'EQUAL:=', 'VALUE:*.exe']);
    assert.deepEqual(kinds('* | (a)*b'), ['MULTIPLY:*', 'PIPE:|', 'LPAREN:(', 'FIELD:a', 'RPAREN:)', 'MULTIPLY:*', 'FIELD:b']);
    assert.deepEqual(kinds('a *b 2 * 3'), ['FIELD:a', 'MULTIPLY:*', 'FIELD:b', 'VALUE:2', 'MULTIPLY:*', 'VALUE:3']);
  });
});

describe('strings', () => {
  test('a backslash makes the next character literal and is dropped', () => {
    assert.deepEqual(kinds(String.raw`"a\"b" "C:\\x" "\d" "\n" 'a\'b'`), ['STRING:a"b', 'STRING:C:\\x', 'STRING:d', 'STRING:n', "STRING:a'b"]);
  });

  test('a doubled quote is not an escape: two strings', () => {
    assert.deepEqual(kinds("'it''s'"), ['STRING:it', 'STRING:s']);
  });

  test('the other quote character is plain text inside a string', () => {
    assert.deepEqual(kinds(`'say "hi"' "it's"`), ['STRING:say "hi"', "STRING:it's"]);
  });

  test('an unterminated string runs to the end without error', () => {
    const tokens = tokenize('x="abc | count()');
    assert.deepEqual(tokens[2], { type: 'STRING', text: 'abc | count()', span: { start: 2, end: 16 } });
    assert.equal(tokens[3].type, 'EOF');
  });

  test('the string span covers the quotes', () => {
    assert.deepEqual(tokenize('"ab"')[0].span, { start: 0, end: 4 });
  });
});

describe('regexes and division', () => {
  test('backslashes are kept; "\\/" and "/" inside [...] do not close the regex', () => {
    const [a, b, c] = tokenize(String.raw`/C:\\Windows/ /a\/b/ /[/]x/`);
    assert.equal(a.text, String.raw`C:\\Windows`);
    assert.equal(b.text, String.raw`a\/b`);
    assert.equal(c.text, '[/]x');
    assert.deepEqual(c.span, { start: 21, end: 27 });
  });

  test('a leading "]" and [:class:] are part of a class, as in RE2', () => {
    assert.equal(tokenize('/[]/]/')[0].text, '[]/]');
    assert.equal(tokenize('/[^]/]/')[0].text, '[^]/]');
    assert.equal(tokenize('/[[:alpha:]/]+/')[0].text, '[[:alpha:]/]+');
  });

  test('flags i, g, m follow the closing slash', () => {
    const [a, b, c] = tokenize('/x/i /y/gim /z/');
    assert.deepEqual([a.flags, b.flags, c.flags], ['i', 'gim', '']);
    assert.deepEqual(a.span, { start: 0, end: 4 });
  });

  test('letters other than flags after a regex begin the next token', () => {
    assert.deepEqual(kinds('/x/in(y)'), ['REGEX:x', 'FUNCTION:in', 'LPAREN:(', 'FIELD:y', 'RPAREN:)']);
  });

  test('an unterminated regex runs to the end', () => {
    const [r, eof] = tokenize('/abc | count()');
    assert.deepEqual(r, { type: 'REGEX', text: 'abc | count()', span: { start: 0, end: 14 }, flags: '' });
    assert.equal(eof.type, 'EOF');
    assert.equal(tokenize('/[a/b')[0].text, '[a/b');
  });

  test('"//" is an empty regex, not a comment', () => {
    assert.deepEqual(kinds('// x'), ['REGEX:', 'FIELD:x']);
  });

  test('"/" divides after ")", "]", an identifier or a value, and opens a regex elsewhere', () => {
    assert.deepEqual(types('a / b'), ['FIELD', 'DIVIDE', 'FIELD', 'EOF']);
    assert.deepEqual(types('(a)/2'), ['LPAREN', 'FIELD', 'RPAREN', 'DIVIDE', 'VALUE', 'EOF']);
    assert.deepEqual(types('[a] /b'), ['LBRACKET', 'FIELD', 'RBRACKET', 'DIVIDE', 'FIELD', 'EOF']);
    assert.deepEqual(types('status=200 /error/'), ['FIELD', 'EQUAL', 'VALUE', 'DIVIDE', 'FIELD', 'DIVIDE', 'EOF']);
    assert.deepEqual(types('x=/a/'), ['FIELD', 'EQUAL', 'REGEX', 'EOF']);
    assert.deepEqual(types('"s" /a/ AND /b/ NOT /c/ (/d/ | /e/ , /f/'), [
      'STRING',
      'REGEX',
      'AND',
      'REGEX',
      'NOT',
      'REGEX',
      'LPAREN',
      'REGEX',
      'PIPE',
      'REGEX',
      'COMMA',
      'REGEX',
      'EOF',
    ]);
  });
});

describe('operators and punctuation', () => {
  test('every operator', () => {
    assert.deepEqual(types('= != =~ =^ =$ > >= < <= := ! + - * /x/ a /'), [
      'EQUAL',
      'NOTEQUAL',
      'CONTAINSANY',
      'STARTSWITHANY',
      'ENDSWITHANY',
      'GREATER',
      'GREATEREQUAL',
      'LESS',
      'LESSEQUAL',
      'ASSIGN',
      'NOT',
      'PLUS',
      'MINUS',
      'MULTIPLY',
      'REGEX',
      'FIELD',
      'DIVIDE',
      'EOF',
    ]);
  });

  test('every punctuation mark', () => {
    assert.deepEqual(types('| ( ) [ ] { } , ;'), [
      'PIPE',
      'LPAREN',
      'RPAREN',
      'LBRACKET',
      'RBRACKET',
      'LBRACE',
      'RBRACE',
      'COMMA',
      'SEMICOLON',
      'EOF',
    ]);
  });

  test('operators need no surrounding spaces', () => {
    assert.deepEqual(kinds('a>=-5'), ['FIELD:a', 'GREATEREQUAL:>=', 'MINUS:-', 'VALUE:5']);
    assert.deepEqual(kinds('!in(x)'), ['NOT:!', 'FUNCTION:in', 'LPAREN:(', 'FIELD:x', 'RPAREN:)']);
  });

  test('any Unicode whitespace separates tokens', () => {
    assert.deepEqual(types('a\t=\n1\u00a0b\u3000=\r\n2'), ['FIELD', 'EQUAL', 'VALUE', 'FIELD', 'EQUAL', 'VALUE', 'EOF']);
  });
});

describe('unexpected characters', () => {
  test('# (no comment syntax), @, and lone ~ & % ^ $ ? ` \\', () => {
    for (const c of ['#', '@', '~', '&', '%', '^', '$', '?', '`', '\\']) assertBadCharacter(`a=1 ${c} b`, c, 4);
  });

  test('&& and a dot that starts nothing are errors too', () => {
    assertBadCharacter('a=1 && b=2', '&', 4);
    assertBadCharacter('x=.exe', '.', 2);
  });

  test('the span is one code point, counted in code points', () => {
    assertBadCharacter('tag="🔥" | #', '#', 10);
    assertBadCharacter('x="🔥🔥" 🔥', '🔥', 7);
  });

  test('characters inside strings and regexes are never errors', () => {
    assert.deepEqual(types('"#@~&%^$?`" /#@~&%^$?`/'), ['STRING', 'REGEX', 'EOF']);
  });
});

describe('spans', () => {
  test('spans are Unicode code point indices, EOF is zero-width at the end', () => {
    const tokens = tokenize('message="日本語🔥" | count()');
    assert.deepEqual(
      tokens.map((t) => [t.type, t.span.start, t.span.end]),
      [
        ['FIELD', 0, 7],
        ['EQUAL', 7, 8],
        ['STRING', 8, 14],
        ['PIPE', 15, 16],
        ['FUNCTION', 17, 22],
        ['LPAREN', 22, 23],
        ['RPAREN', 23, 24],
        ['EOF', 24, 24],
      ],
    );
  });

  test('an empty query is just EOF', () => {
    assert.deepEqual(tokenize(''), [{ type: 'EOF', text: '', span: { start: 0, end: 0 } }]);
    assert.deepEqual(tokenize('  \n'), [{ type: 'EOF', text: '', span: { start: 3, end: 3 } }]);
  });
});
