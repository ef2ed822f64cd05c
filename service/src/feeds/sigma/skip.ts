// Why a rule file was not imported: a code to filter by and a sentence for people. Every reason a
// feed lists in `GET /api/v1/feeds/{id}/skipped` is one of these.
export const SKIP_CODES = {
  below_min_severity: 'below the feed\'s minimum severity',
  below_min_status: 'below the feed\'s minimum status',
  bad_yaml: 'not valid YAML',
  too_large: 'too large to be a rule file',
  not_a_rule: 'neither a Sigma rule nor an alert',
  invalid_rule: 'not a valid Sigma rule',
  invalid_alert: 'not a valid alert',
  unsupported_modifier: 'uses a modifier that cannot be translated',
  unsupported_value: 'has a value that cannot be translated',
  invalid_value: 'has a value its modifier does not take',
  unsupported_condition: 'has a condition that cannot be translated',
  unknown_selection: 'its condition names no selection',
  unknown_field: 'a field has no name the query language can use under the normalizer',
  unsupported_regex: 'has a regular expression the engine (RE2) cannot run',
  query_error: 'the translation did not compile',
  query_too_long: 'the translation is longer than a query may be',
  duplicate: 'the same rule id appears in another file',
} as const;

export type SkipCode = keyof typeof SKIP_CODES;

/** Thrown while translating: the rule is skipped, with this code and sentence. */
export class SigmaSkip extends Error {
  constructor(
    readonly code: SkipCode,
    message: string,
  ) {
    super(message);
  }
}
