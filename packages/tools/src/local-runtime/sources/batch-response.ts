/**
 * Reads a partial batch response (`{ batchItemFailures: [{ itemIdentifier }] }`)
 * the way Lambda does: no response, no list or an empty list is complete
 * success; an item with an empty, missing or unknown identifier makes the
 * whole batch a failure ('invalid').
 */
export function parseBatchItemFailures(payload: unknown, identifiers: Set<string>): string[] | 'invalid' {
  if (payload === null || payload === undefined) return [];
  if (typeof payload !== 'object') return 'invalid';
  const failures = (payload as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === null || failures === undefined) return [];
  if (!Array.isArray(failures)) return 'invalid';
  const ids: string[] = [];
  for (const failure of failures) {
    const id = (failure as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (typeof id !== 'string' || id === '' || !identifiers.has(id)) return 'invalid';
    ids.push(id);
  }
  return ids;
}
