/** Small readers for the SDK's loosely typed payloads: everything from the wire starts as `unknown`. */

export type JsonRecord = Record<string, unknown>;

export function asRecord(value: unknown): JsonRecord | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as JsonRecord)
    : undefined;
}

export function stringField(record: JsonRecord | undefined, key: string): string | undefined {
  const value = record?.[key];
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

export function recordField(record: JsonRecord | undefined, key: string): JsonRecord | undefined {
  return asRecord(record?.[key]);
}

export function arrayField(record: JsonRecord | undefined, key: string): unknown[] {
  const value = record?.[key];
  return Array.isArray(value) ? value : [];
}

/** The objects in an array field, skipping anything else it holds. */
export function recordsField(record: JsonRecord | undefined, key: string): JsonRecord[] {
  return arrayField(record, key).flatMap((value): JsonRecord[] => {
    const item = asRecord(value);
    return item ? [item] : [];
  });
}
