// The rules around normalizers: unique names, valid definitions, one default, and no deleting one
// that a token or a feed applies. Routes call these; the store only reads and writes rows.
import type { Context } from '../context.ts';
import { badRequest, conflict, notFound } from '../http/errors.ts';
import { definitionProblem, type NormalizerDefinition } from './definition.ts';
import { definitionFromRules, ruleProblem, type LegacyRule } from './legacy-rules.ts';
import type { Normalizer, NormalizerInput } from './normalizers-store.ts';

export interface NormalizerBody extends Partial<NormalizerDefinition> {
  name?: string;
  description?: string;
  is_default?: boolean;
}

/** A definition from a request body, refused with 400 naming the first problem. */
export function checkedDefinition(b: Partial<NormalizerDefinition>, base?: NormalizerDefinition): NormalizerDefinition {
  const def: NormalizerDefinition = {
    transforms: b.transforms ?? base?.transforms ?? [],
    field_mappings: (b.field_mappings ?? base?.field_mappings ?? []).map((m) => ({ sources: m.sources.map((s) => s.trim()), target: m.target.trim() })),
    value_mappings: (b.value_mappings ?? base?.value_mappings ?? []).map((v) => ({
      from_field: v.from_field.trim(),
      to_field: v.to_field.trim(),
      ...(v.map && Object.keys(v.map).length > 0 ? { map: v.map } : {}),
    })),
    timestamp_fields: (b.timestamp_fields ?? base?.timestamp_fields ?? []).map((f) => f.trim()),
  };
  const problem = definitionProblem(def);
  if (problem) throw badRequest(problem);
  return def;
}

export function normalizerOr404(ctx: Context, id: string): Normalizer {
  const n = ctx.normalizers.get(id);
  if (!n) throw notFound(`Normalizer ${id} not found.`);
  return n;
}

function nameFree(ctx: Context, name: string, except?: string): void {
  const other = ctx.normalizers.byName(name);
  if (other && other.id !== except) throw conflict(`A normalizer named "${name}" already exists.`);
}

export function createNormalizer(ctx: Context, b: NormalizerBody & { name: string }, createdBy: string): Normalizer {
  const name = b.name.trim();
  nameFree(ctx, name);
  const input: NormalizerInput = { name, description: b.description ?? '', ...checkedDefinition(b) };
  const n = ctx.normalizers.create(input, createdBy);
  if (b.is_default) ctx.normalizers.makeDefault(n.id);
  return ctx.normalizers.get(n.id)!;
}

export function updateNormalizer(ctx: Context, id: string, b: NormalizerBody): Normalizer {
  const n = normalizerOr404(ctx, id);
  const name = b.name?.trim() ?? n.name;
  nameFree(ctx, name, id);
  if (b.is_default === false && n.is_default) {
    throw badRequest('The field "is_default" cannot be set to false on the default normalizer; make another normalizer the default instead.');
  }
  ctx.normalizers.update(id, { name, description: b.description ?? n.description, ...checkedDefinition(b, n) });
  if (b.is_default && !n.is_default) ctx.normalizers.makeDefault(id);
  return ctx.normalizers.get(id)!;
}

/** Who applies a normalizer: ingest tokens by id, feeds by id, and (the default) everything without one. */
export function usersOf(ctx: Context, id: string): { tokens: Array<{ id: string; name: string; fractal_id: string; fractal_name: string }>; feeds: Array<{ id: string; name: string }> } {
  return { tokens: ctx.normalizers.tokensUsing(id), feeds: ctx.normalizers.feedsUsing(id) };
}

export function deleteNormalizer(ctx: Context, id: string): void {
  const n = normalizerOr404(ctx, id);
  if (n.is_default) throw conflict(`"${n.name}" is the default normalizer; make another one the default before deleting it.`);
  const { tokens, feeds } = usersOf(ctx, id);
  if (tokens.length > 0 || feeds.length > 0) {
    const names = [
      ...tokens.map((t) => `ingest token "${t.name}" of fractal "${t.fractal_name}"`),
      ...feeds.map((f) => `feed "${f.name}"`),
    ];
    const shown = names.slice(0, 3).join(', ') + (names.length > 3 ? ` and ${names.length - 3} more` : '');
    throw conflict(`Normalizer "${n.name}" is in use by ${shown}; point them at another normalizer first.`);
  }
  ctx.normalizers.delete(id);
}

/**
 * A token edited with an old-style rule list (`normalizers`): its rules become a normalizer named
 * after the fractal and the token, made the first time and rewritten on later edits, which the
 * token then applies. Returns that normalizer's id.
 */
export function normalizerFromTokenRules(
  ctx: Context,
  token: { fractalName: string; tokenName: string; currentNormalizerId: string | null; builtin: boolean },
  rules: unknown[],
  createdBy: string,
): string {
  const problem = ruleProblem(rules);
  if (problem) throw badRequest(problem);
  const def = definitionFromRules(token.builtin, rules as LegacyRule[]);
  const wanted = `${token.fractalName} / ${token.tokenName}`;
  const description = `The rule list of ingest token "${token.tokenName}" of fractal "${token.fractalName}"${token.builtin ? ', with the built-in aliases' : ''}.`;
  const current = token.currentNormalizerId ? ctx.normalizers.get(token.currentNormalizerId) : undefined;
  if (current && current.name === wanted && !current.is_default && usersOf(ctx, current.id).tokens.length <= 1 && usersOf(ctx, current.id).feeds.length === 0) {
    return ctx.normalizers.update(current.id, { name: current.name, description, ...def }).id;
  }
  return ctx.normalizers.create({ name: ctx.normalizers.freeName(wanted), description, ...def }, createdBy).id;
}
