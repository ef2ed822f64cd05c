// Schema pieces shared by routes. Strings validated as UUIDs give a clear 400 before any lookup.
import { Type, type TSchema } from 'typebox';

export const Uuid = Type.String({ format: 'uuid' });
export const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
export const Description = Type.String({ maxLength: 2000 });
export const IdParams = Type.Object({ id: Uuid });
export const StringEnum = <T extends string>(values: readonly T[]) => Type.Unsafe<T>({ type: 'string', enum: [...values] });
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);
export const DateTime = Type.String({ format: 'date-time' });

/** A UUID in text, for ids checked by hand: before schema validation (the access hook) or in a body or query left free. */
export const isUuid = (text: string): boolean => /^[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i.test(text);
