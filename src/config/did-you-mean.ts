import type { z } from 'zod';

/**
 * "did you mean" for a key the config file does not know: the known key at the same place that is closest in
 * spelling (at most two edits, or one for short keys), found by walking the schema to that place.
 */

type Definition = {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
};

const definition = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Definition } })._zod.def;

/** The object keys a schema takes at `path` (through optional, default, array, pipe, union and record). */
function keysAt(schema: z.ZodType | undefined, path: readonly PropertyKey[]): string[] {
  if (!schema) return [];
  const def = definition(schema);
  if (def.innerType) return keysAt(def.innerType, path);
  if (def.type === 'pipe') return [...keysAt(def.in, path), ...keysAt(def.out, path)];
  if (def.type === 'union') return (def.options ?? []).flatMap((option) => keysAt(option, path));
  const [head, ...rest] = path;
  if (def.type === 'object') {
    if (head === undefined) return Object.keys(def.shape ?? {});
    return keysAt(def.shape?.[String(head)], rest);
  }
  if (def.type === 'array' && typeof head === 'number') return keysAt(def.element, rest);
  if (def.type === 'record' && head !== undefined) return keysAt(def.valueType, rest);
  return [];
}

function distance(left: string, right: string): number {
  const row = Array.from({ length: right.length + 1 }, (_, index) => index);
  for (let i = 1; i <= left.length; i++) {
    let diagonal = row[0] ?? 0;
    row[0] = i;
    for (let j = 1; j <= right.length; j++) {
      const above = row[j] ?? 0;
      const cost = left[i - 1]?.toLowerCase() === right[j - 1]?.toLowerCase() ? 0 : 1;
      row[j] = Math.min(above + 1, (row[j - 1] ?? 0) + 1, diagonal + cost);
      diagonal = above;
    }
  }
  return row[right.length] ?? 0;
}

/** The known key `key` is most likely a misspelling of, at `path` in `schema`; undefined when none is close. */
export function didYouMean(schema: z.ZodType, path: readonly PropertyKey[], key: string): string | undefined {
  const most = key.length <= 4 ? 1 : 2;
  let best: { key: string; distance: number } | undefined;
  for (const known of new Set(keysAt(schema, path))) {
    const apart = distance(key, known);
    if (apart <= most && (!best || apart < best.distance)) best = { key: known, distance: apart };
  }
  return best?.key;
}
