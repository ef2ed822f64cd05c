// The name transforms of a normalizer, one function each. Names arrive flattened with dots
// (`Event.System.EventID`); the case transforms restyle each dot-separated level on its own and
// keep the dots, so `a.b` stays two levels unless `flatten_leaf` or `dedot` removes them.
import type { Transform } from './definition.ts';

/** The words of one level: `UserID` → user id, `src-ip` → src ip, `HTTPStatus` → http status. */
function words(level: string): string[] {
  return level
    .replace(/([\p{Ll}\p{Nd}])(\p{Lu})/gu, '$1 $2')
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, '$1 $2')
    .split(/[\s_-]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
}

const capitalised = (w: string) => w.charAt(0).toUpperCase() + w.slice(1);

/** Applies `style` to each level; leading underscores (`_time`) are kept; a level without words is left as it is. */
function restyle(name: string, style: (ws: string[]) => string): string {
  return name
    .split('.')
    .map((level) => {
      const ws = words(level);
      if (ws.length === 0) return level;
      const lead = /^_+/.exec(level)?.[0] ?? '';
      return lead + style(ws);
    })
    .join('.');
}

/** `Event.EventData.Image` → `Image` (collisions are settled per record, in compile.ts). */
export const flattenLeaf = (name: string): string => name.slice(name.lastIndexOf('.') + 1);
/** `a.b` → `a_b`. */
export const dedot = (name: string): string => name.replaceAll('.', '_');
/** `UserID` → `user_id`. */
export const snakeCase = (name: string): string => restyle(name, (ws) => ws.join('_'));
/** `user_id` → `userId`. */
export const camelCase = (name: string): string => restyle(name, (ws) => ws[0] + ws.slice(1).map(capitalised).join(''));
/** `user_id` → `UserId`. */
export const pascalCase = (name: string): string => restyle(name, (ws) => ws.map(capitalised).join(''));
/** `UserID` → `user-id` (kept for token rule lists written before normalizers existed). */
export const kebabCase = (name: string): string => restyle(name, (ws) => ws.join('-'));
export const lowercase = (name: string): string => name.toLowerCase();
export const uppercase = (name: string): string => name.toUpperCase();

export const NAME_TRANSFORMS: Record<Transform, (name: string) => string> = {
  flatten_leaf: flattenLeaf,
  dedot,
  snake_case: snakeCase,
  camel_case: camelCase,
  pascal_case: pascalCase,
  kebab_case: kebabCase,
  lowercase,
  uppercase,
};
