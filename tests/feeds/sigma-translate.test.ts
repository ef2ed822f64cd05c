// The Sigma translator alone, modifier by modifier as the specification defines them, with the
// query text each gives; every translation is also parsed back by the query language's own parser
// (what the feed sync then compiles in the engine is tested with a real appliance elsewhere).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readSigmaRule, readYaml } from '../../service/src/feeds/sigma/rule.ts';
import { SigmaSkip } from '../../service/src/feeds/sigma/skip.ts';
import { translateRule } from '../../service/src/feeds/sigma/translate.ts';
import { compileNormalizer } from '../../service/src/normalizers/compile.ts';
import { parseQuery } from '../../service/src/query/syntax/parser.ts';

const same = (n: string) => n;

/** The query of a rule whose detection is `detection` (YAML, indented by 4). */
function q(detection: string, extra = '', fieldName = same): string {
  const text = `title: t\nid: 00000000-0000-4000-8000-000000000000\nlogsource:\n    product: windows\n${extra}detection:\n${detection}\nlevel: high\n`;
  const query = translateRule(readSigmaRule(readYaml(text)), fieldName).query;
  parseQuery(query); // the language reads it
  return query;
}
const sel = (body: string, condition = 'selection') => `    selection:\n${body}\n    condition: ${condition}`;

function skipOf(detection: string): SigmaSkip {
  try {
    q(detection);
  } catch (err) {
    if (err instanceof SigmaSkip) return err;
    throw err;
  }
  assert.fail('expected the rule to be skipped');
}

describe('values compare case-insensitively, as Sigma specifies', () => {
  test('a plain value: equality, a regex when letters need folding', () => {
    assert.equal(q(sel('        EventID: 4688')), 'EventID="4688"');
    assert.equal(q(sel("        Image: 'C:\\Windows\\cmd.exe'")), 'Image=/^C:\\\\Windows\\\\cmd\\.exe$/i');
    assert.equal(q(sel("        Hash: ''")), 'Hash=""');
  });
  test('wildcards: * at the ends are contains/startswith/endswith, inside a regex; ? one character', () => {
    assert.equal(q(sel("        Image: '*\\cmd.exe'")), 'Image=$"\\\\cmd.exe"');
    assert.equal(q(sel("        Image: 'C:\\Temp\\\\*'")), 'Image=^"C:\\\\Temp\\\\"', 'a backslash before a wildcard is doubled');
    assert.equal(q(sel("        Image: 'C:\\Temp\\*'")), 'Image=/^C:\\\\Temp\\*$/i', 'a single backslash makes the star literal');
    assert.equal(q(sel("        CommandLine: '*whoami*'")), 'CommandLine=~"whoami"');
    assert.equal(q(sel("        Image: 'C:\\\\*\\a?.exe'")), 'Image=/^C:\\\\.*\\\\a.\\.exe$/i');
    assert.equal(q(sel("        Image: '*'")), 'Image=*');
  });
  test('escapes: \\* and \\? are literal, \\\\ one backslash, a lone backslash stays', () => {
    assert.equal(q(sel("        CommandLine|contains: 'a\\*b'")), 'CommandLine=~"a*b"');
    assert.equal(q(sel("        CommandLine|contains: 'a\\\\*'")), 'CommandLine=~"a\\\\"');
  });
  test('null is an absent or empty field', () => {
    assert.equal(q(sel('        User: null')), 'User!=*');
  });
  test('a list is any of its values: one comparison per kind', () => {
    assert.equal(q(sel("        Image|endswith:\n            - '\\a.exe'\n            - '\\b.exe'\n        EventID:\n            - 1\n            - 2")), 'Image=$"\\\\a.exe","\\\\b.exe" AND EventID="1","2"');
    assert.equal(q(sel("        Image:\n            - 'A.exe'\n            - 'B.exe'")), 'Image=/(?:^A\\.exe$)|(?:^B\\.exe$)/i');
  });
});

describe('modifiers', () => {
  test('contains, startswith, endswith', () => {
    assert.equal(q(sel("        CommandLine|contains: ' -enc '")), 'CommandLine=~" -enc "');
    assert.equal(q(sel("        Image|startswith: 'C:\\Users\\'")), 'Image=^"C:\\\\Users\\\\"');
    assert.equal(q(sel("        Image|endswith: '.ps1'")), 'Image=$".ps1"');
  });
  test('all: every value must match', () => {
    assert.equal(q(sel("        CommandLine|contains|all:\n            - 'net'\n            - 'user'")), 'CommandLine=~"net" AND CommandLine=~"user"');
  });
  test('windash: every flag dash in each of its five forms', () => {
    assert.equal(q(sel("        CommandLine|windash|contains: ' -s '")), 'CommandLine=~" -s "," /s "," \u2013s "," \u2014s "," \u2015s "');
  });
  test('re with i, m, s; case-sensitive without i; a / escaped for the literal', () => {
    assert.equal(q(sel("        CommandLine|re: 'a.*b/c'")), 'CommandLine=/a.*b\\/c/');
    assert.equal(q(sel("        CommandLine|re|i: 'ab'")), 'CommandLine=/ab/i');
    assert.equal(q(sel("        CommandLine|re|m|s: '^a.b$'")), 'CommandLine=/(?ms)^a.b$/');
    assert.equal(skipOf(sel("        CommandLine|re: '(?<=x)y'")).code, 'unsupported_regex');
  });
  test('cidr: an address range, ORed over values', () => {
    assert.equal(q(sel("        DestinationIp|cidr:\n            - '10.0.0.0/8'\n            - 'fe80::/10'")), 'cidr(DestinationIp, "10.0.0.0/8") OR cidr(DestinationIp, "fe80::/10")');
    assert.equal(skipOf(sel("        DestinationIp|cidr: 'not-a-range'")).code, 'invalid_value');
  });
  test('base64 and base64offset: exact, case-sensitive comparisons of the encoded text', () => {
    assert.equal(q(sel("        CommandLine|base64: 'http://'")), 'CommandLine="aHR0cDovLw=="');
    // The three offsets of "http://" in a Base64 text (as pySigma and the specification make them).
    assert.equal(q(sel("        CommandLine|base64offset|contains: 'http://'")), 'CommandLine=/(?:aHR0cDovL)|(?:h0dHA6Ly)|(?:odHRwOi8v)/');
  });
  test('utf16le (wide) before base64offset: the encoding of a PowerShell -EncodedCommand', () => {
    const query = q(sel("        CommandLine|wide|base64offset|contains: 'ping'"));
    const encoded = Buffer.from('ping', 'utf16le').toString('base64');
    assert.ok(query.includes(encoded.slice(0, 8)), `${query} holds ${encoded}`);
  });
  test('exists, gt/gte/lt/lte, neq, cased', () => {
    assert.equal(q(sel('        User|exists: true')), 'User=*');
    assert.equal(q(sel('        User|exists: false')), 'User!=*');
    assert.equal(q(sel('        Port|gt: 1024')), 'Port>1024');
    assert.equal(q(sel('        Port|lte: 10')), 'Port<=10');
    assert.equal(q(sel("        User|neq: 'SYSTEM'")), 'NOT User=/^SYSTEM$/i');
    assert.equal(q(sel("        User|cased: 'Admin'")), 'User="Admin"');
    assert.equal(q(sel("        User|contains|cased: 'Adm'")), 'User=/Adm/');
    assert.equal(skipOf(sel("        Port|gt: 'many'")).code, 'invalid_value');
  });
  test('fieldref: the fields compared by their distance, computed first', () => {
    assert.equal(q(sel('        TargetFilename|fieldref: Image')), 'levenshtein(TargetFilename, Image) | _distance="0" AND TargetFilename=*');
  });
  test('expand, time modifiers and unknown ones are skipped with the reason', () => {
    assert.equal(skipOf(sel("        Host|expand: '%Servers%'")).code, 'unsupported_modifier');
    assert.equal(skipOf(sel("        Time|hour: 3")).code, 'unsupported_modifier');
    assert.match(skipOf(sel("        Image|sideways: 'x'")).message, /unknown modifier "sideways"/);
  });
});

describe('conditions', () => {
  const two = "    selection_a:\n        A: '1'\n    selection_b:\n        B: '2'\n    filter_x:\n        C: '3'\n    _hidden:\n        D: '4'\n";
  test('and, or, not, parentheses and their precedence', () => {
    assert.equal(q(`${two}    condition: selection_a or selection_b and not filter_x`), 'A="1" OR B="2" AND NOT C="3"');
    assert.equal(q(`${two}    condition: (selection_a or selection_b) and not filter_x`), '(A="1" OR B="2") AND NOT C="3"');
  });
  test('1 of / all of over a pattern and over them (identifiers starting with _ left out)', () => {
    assert.equal(q(`${two}    condition: 1 of selection_* and not 1 of filter_*`), '(A="1" OR B="2") AND NOT C="3"');
    assert.equal(q(`${two}    condition: all of selection_*`), 'A="1" AND B="2"');
    assert.equal(q(`${two}    condition: 1 of them`), 'A="1" OR B="2" OR C="3"');
  });
  test('a list of conditions is their OR; a selection that is a list of maps is any of them', () => {
    assert.equal(q(`${two}    condition:\n        - selection_a\n        - selection_b`), 'A="1" OR B="2"');
    assert.equal(q("    selection:\n        - A: '1'\n        - B: '2'\n          C: '3'\n    condition: selection"), 'A="1" OR B="2" AND C="3"');
  });
  test('keywords search the whole event; |all ANDs them', () => {
    assert.equal(q("    keywords:\n        - 'event::clear'\n        - 'event::drop'\n    condition: keywords"), '"event::clear" OR "event::drop"');
    assert.equal(q("    keywords:\n        '|all':\n            - 'Oab'\n            - ' -ExternalUrl '\n    condition: keywords"), '"Oab" AND " -ExternalUrl "');
  });
  test('a condition naming no selection, aggregations and near are skipped with the reason', () => {
    assert.equal(skipOf(`${two}    condition: selection_a and nope`).code, 'unknown_selection');
    assert.equal(skipOf(`${two}    condition: 1 of nothing_*`).code, 'unknown_selection');
    assert.equal(skipOf(`${two}    condition: selection_a | count() > 5`).code, 'unsupported_condition');
    assert.equal(skipOf(`${two}    condition: selection_a near selection_b`).code, 'unsupported_condition');
  });
});

describe('the category prefilter and field names', () => {
  test('logsource.category becomes sigma_category, with the registry and file_create aliases', () => {
    assert.equal(q(sel("        A: '1'"), ''), 'A="1"', 'no category, no prefilter');
    for (const [category, value] of [['process_creation', 'process_creation'], ['registry_set', 'registry_event'], ['registry_add', 'registry_event'], ['registry_delete', 'registry_event'], ['registry_rename', 'registry_event'], ['registry_event', 'registry_event'], ['file_create', 'file_event'], ['file_event', 'file_event']]) {
      const text = `title: t\nlogsource:\n    product: windows\n    category: ${category}\ndetection:\n${sel("        A: '1'")}\n`;
      assert.equal(translateRule(readSigmaRule(readYaml(text)), same).query, `sigma_category="${value}" AND A="1"`);
    }
  });
  test("field names go through the feed's normalizer", () => {
    const n = compileNormalizer({ transforms: ['snake_case'], field_mappings: [{ sources: ['Computer'], target: 'host' }], value_mappings: [], timestamp_fields: [] });
    assert.equal(q(sel("        CommandLine|contains: 'x'\n        Computer: dc1\n        EventID: 1"), '', n.fieldName), 'command_line=~"x" AND host=/^dc1$/i AND event_id="1"');
  });
  test('a field the query language cannot name is skipped as unknown under the normalizer', () => {
    const n = compileNormalizer({ transforms: [], field_mappings: [{ sources: ['Image'], target: 'image path' }], value_mappings: [], timestamp_fields: [] });
    let err: unknown;
    try {
      q(sel("        Image: x"), '', n.fieldName);
    } catch (e) {
      err = e;
    }
    assert.ok(err instanceof SigmaSkip && err.code === 'unknown_field', String(err));
    assert.match((err as Error).message, /the normalizer makes it "image path"/);
  });
});

test('a file that is not YAML, or not a rule', () => {
  assert.throws(() => readYaml('a: [1,\n'), (e: unknown) => e instanceof SigmaSkip && e.code === 'bad_yaml');
  assert.throws(() => readSigmaRule(readYaml('title: x\n')), (e: unknown) => e instanceof SigmaSkip && e.code === 'invalid_rule');
});
