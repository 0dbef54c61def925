/**
 * Lambda event filtering (FilterCriteria): a record is delivered when any
 * pattern matches it. Patterns use the EventBridge grammar: nested objects
 * mirror the record, leaves are arrays of alternatives, each a literal or one
 * of prefix, suffix, equals-ignore-case, anything-but, numeric, exists.
 */
export function matchesAnyFilter(filters: unknown[], record: unknown): boolean {
  return filters.length === 0 || filters.some((pattern) => matchesPattern(pattern, record));
}

export function matchesPattern(pattern: unknown, value: unknown): boolean {
  if (pattern === null || typeof pattern !== 'object' || Array.isArray(pattern)) return false;
  return Object.entries(pattern as Record<string, unknown>).every(([key, rule]) => {
    const field = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[key] : undefined;
    if (Array.isArray(rule)) return matchesAlternatives(rule, field);
    return matchesPattern(rule, field);
  });
}

function matchesAlternatives(alternatives: unknown[], field: unknown): boolean {
  // An array field matches when any of its elements does.
  const values = Array.isArray(field) ? field : [field];
  return alternatives.some((alternative) => {
    if (alternative !== null && typeof alternative === 'object') {
      const [[operator, operand]] = Object.entries(alternative as Record<string, unknown>);
      if (operator === 'exists') return (field !== undefined) === operand;
      return values.some((v) => v !== undefined && matchesOperator(operator, operand, v));
    }
    return values.some((v) => v === alternative || (alternative === null && v === null));
  });
}

function matchesOperator(operator: string, operand: unknown, value: unknown): boolean {
  switch (operator) {
    case 'prefix':
      return typeof value === 'string' && typeof operand === 'string' && value.startsWith(operand);
    case 'suffix':
      return typeof value === 'string' && typeof operand === 'string' && value.endsWith(operand);
    case 'equals-ignore-case':
      return typeof value === 'string' && typeof operand === 'string' && value.toLowerCase() === operand.toLowerCase();
    case 'anything-but': {
      if (operand !== null && typeof operand === 'object' && !Array.isArray(operand)) {
        const [[nested, nestedOperand]] = Object.entries(operand as Record<string, unknown>);
        return !matchesOperator(nested, nestedOperand, value);
      }
      const excluded = Array.isArray(operand) ? operand : [operand];
      return !excluded.includes(value);
    }
    case 'numeric':
      return typeof value === 'number' && matchesNumeric(operand as unknown[], value);
    default:
      throw new Error(`Filter operator "${operator}" is not supported by the local runtime`);
  }
}

function matchesNumeric(conditions: unknown[], value: number): boolean {
  for (let i = 0; i + 1 < conditions.length; i += 2) {
    const bound = Number(conditions[i + 1]);
    const ok = {
      '=': value === bound,
      '<': value < bound,
      '<=': value <= bound,
      '>': value > bound,
      '>=': value >= bound,
    }[String(conditions[i])];
    if (!ok) return false;
  }
  return true;
}
