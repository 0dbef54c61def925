import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { isReservedWord } from './reserved-words';

/** An item as the in-memory DynamoDB stores it (memory-dynamodb.ts's `Item`). */
type Item = Record<string, unknown>;

/**
 * The in-memory DynamoDB's expressions (memory-dynamodb.ts): condition and key-condition expressions
 * parsed and evaluated on an item, update expressions parsed and applied, attribute names resolved
 * (a reserved word named bare is a ValidationException, as on DynamoDB). Top-level attributes only,
 * what the adapters use; anything else throws, so a new expression shape fails loudly.
 */

/** Deep copy of plain item data (what the DocumentClient carries); much cheaper than structuredClone. */
export function clone<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(clone) as T;
  const copy: Record<string, unknown> = {};
  for (const key in value) {
    const field = (value as Record<string, unknown>)[key];
    copy[key] = field === null || typeof field !== 'object' ? field : clone(field);
  }
  return copy as T;
}

export function compare(a: unknown, b: unknown): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

// ---- expressions ----------------------------------------------------------

type Operand = { path: string } | { value: string };
export type Condition =
  | { op: 'and' | 'or'; left: Condition; right: Condition }
  | { op: 'not'; inner: Condition }
  | { op: 'exists' | 'not_exists'; path: string }
  | { op: 'compare'; comparator: string; left: Operand; right: Operand };

const conditionCache = new Map<string, Condition>();

function tokenize(expression: string): string[] {
  const tokens = expression.match(/<>|<=|>=|[=<>(),+-]|[#:]?[A-Za-z0-9_]+/g);
  if (tokens === null || tokens.join('').length !== expression.replace(/\s+/g, '').length)
    throw new Error(`MemoryDynamoDb: cannot parse expression "${expression}"`);
  return tokens;
}

export function parseCondition(expression: string): Condition {
  const cached = conditionCache.get(expression);
  if (cached !== undefined) return cached;
  const tokens = tokenize(expression);
  let at = 0;
  const peek = () => tokens[at];
  const take = (expected?: string) => {
    const token = tokens[at++];
    if (expected !== undefined && token?.toUpperCase() !== expected)
      throw new Error(`MemoryDynamoDb: expected ${expected} in "${expression}"`);
    return token;
  };
  const operand = (): Operand => {
    const token = take();
    return token.startsWith(':') ? { value: token } : { path: token };
  };
  const primary = (): Condition => {
    const token = peek();
    if (token?.toUpperCase() === 'NOT') {
      take();
      return { op: 'not', inner: primary() };
    }
    if (token === '(') {
      take();
      const inner = or();
      take(')');
      return inner;
    }
    if (token === 'attribute_exists' || token === 'attribute_not_exists') {
      take();
      take('(');
      const path = take();
      take(')');
      return { op: token === 'attribute_exists' ? 'exists' : 'not_exists', path };
    }
    const left = operand();
    const comparator = take();
    if (!['=', '<>', '<', '<=', '>', '>='].includes(comparator))
      throw new Error(`MemoryDynamoDb: unsupported comparator ${comparator} in "${expression}"`);
    return { op: 'compare', comparator, left, right: operand() };
  };
  const and = (): Condition => {
    let left = primary();
    while (peek()?.toUpperCase() === 'AND') {
      take();
      left = { op: 'and', left, right: primary() };
    }
    return left;
  };
  const or = (): Condition => {
    let left = and();
    while (peek()?.toUpperCase() === 'OR') {
      take();
      left = { op: 'or', left, right: and() };
    }
    return left;
  };
  const parsed = or();
  if (at !== tokens.length) throw new Error(`MemoryDynamoDb: trailing tokens in "${expression}"`);
  conditionCache.set(expression, parsed);
  return parsed;
}

/** The error DynamoDB answers a malformed request with (the SDK's ServiceException named ValidationException). */
export function validationException(message: string): DynamoDBServiceException {
  return new DynamoDBServiceException({ name: 'ValidationException', $fault: 'client', $metadata: {}, message });
}

export function attributeName(path: string, names: Record<string, string>): string {
  if (!path.startsWith('#')) {
    // DynamoDB refuses a reserved word named bare (`ADD total :n`); accepting it here would let an
    // adapter pass every simulated test and fail on the real service.
    if (isReservedWord(path))
      throw validationException(`Attribute name is a reserved keyword; reserved keyword: ${path}`);
    return path;
  }
  const name = names[path];
  if (name === undefined) throw new Error(`MemoryDynamoDb: ExpressionAttributeNames has no ${path}`);
  return name;
}

function valueOf(token: string, values: Record<string, unknown>): unknown {
  if (!(token in values)) throw new Error(`MemoryDynamoDb: ExpressionAttributeValues has no ${token}`);
  return values[token];
}

export function evaluate(
  condition: Condition,
  item: Item,
  names: Record<string, string>,
  values: Record<string, unknown>,
  absent: boolean,
): boolean {
  switch (condition.op) {
    case 'and':
      return (
        evaluate(condition.left, item, names, values, absent) && evaluate(condition.right, item, names, values, absent)
      );
    case 'or':
      return (
        evaluate(condition.left, item, names, values, absent) || evaluate(condition.right, item, names, values, absent)
      );
    case 'not':
      return !evaluate(condition.inner, item, names, values, absent);
    case 'exists':
      return item[attributeName(condition.path, names)] !== undefined;
    case 'not_exists':
      return item[attributeName(condition.path, names)] === undefined;
    case 'compare': {
      const left = operandValue(condition.left, item, names, values);
      const right = operandValue(condition.right, item, names, values);
      // A comparison with a missing attribute is false in DynamoDB, even <>.
      if (left === undefined || right === undefined) return false;
      if (condition.comparator === '=') return same(left, right);
      if (condition.comparator === '<>') return !same(left, right);
      const order = compare(left, right);
      return condition.comparator === '<'
        ? order < 0
        : condition.comparator === '<='
          ? order <= 0
          : condition.comparator === '>'
            ? order > 0
            : order >= 0;
    }
  }
}

function operandValue(
  operand: Operand,
  item: Item,
  names: Record<string, string>,
  values: Record<string, unknown>,
): unknown {
  return 'path' in operand ? item[attributeName(operand.path, names)] : valueOf(operand.value, values);
}

function same(left: unknown, right: unknown): boolean {
  return left === right || (typeof left === 'object' && JSON.stringify(left) === JSON.stringify(right));
}

export type UpdateAction =
  | { action: 'set'; path: string; value: string[] }
  | { action: 'add'; path: string; value: string }
  | { action: 'remove'; path: string };

const updateCache = new Map<string, UpdateAction[]>();

export function parseUpdate(expression: string): UpdateAction[] {
  const cached = updateCache.get(expression);
  if (cached !== undefined) return cached;
  const tokens = tokenize(expression);
  const actions: UpdateAction[] = [];
  let clause = '';
  let at = 0;
  while (at < tokens.length) {
    const upper = tokens[at].toUpperCase();
    if (['SET', 'ADD', 'REMOVE', 'DELETE'].includes(upper)) {
      // Right after a clause keyword comes a path: another keyword there (`SET add = :v`) is DynamoDB's
      // syntax error, not a new clause.
      if (at > 0 && ['SET', 'ADD', 'REMOVE', 'DELETE'].includes(tokens[at - 1].toUpperCase()))
        throw validationException(`Invalid UpdateExpression: Syntax error; token: "${tokens[at]}"`);
      clause = upper;
      at++;
      continue;
    }
    if (tokens[at] === ',') {
      at++;
      continue;
    }
    const path = tokens[at++];
    if (clause === 'REMOVE') actions.push({ action: 'remove', path });
    else if (clause === 'ADD') actions.push({ action: 'add', path, value: tokens[at++] });
    else if (clause === 'SET') {
      if (tokens[at++] !== '=') throw new Error(`MemoryDynamoDb: expected = in "${expression}"`);
      // The value runs to the next top-level comma or clause keyword.
      const value: string[] = [];
      let depth = 0;
      while (at < tokens.length) {
        const token = tokens[at];
        if (depth === 0 && (token === ',' || ['SET', 'ADD', 'REMOVE', 'DELETE'].includes(token.toUpperCase()))) break;
        if (token === '(') depth++;
        if (token === ')') depth--;
        value.push(token);
        at++;
      }
      actions.push({ action: 'set', path, value });
    } else throw new Error(`MemoryDynamoDb: unsupported update clause in "${expression}"`);
  }
  updateCache.set(expression, actions);
  return actions;
}

function setValue(
  tokens: string[],
  item: Item,
  names: Record<string, string>,
  values: Record<string, unknown>,
): unknown {
  let [result, at] = setTerm(tokens, 0, item, names, values);
  while (at < tokens.length) {
    const operator = tokens[at];
    const [right, next] = setTerm(tokens, at + 1, item, names, values);
    if (operator === '+') result = Number(result) + Number(right);
    else if (operator === '-') result = Number(result) - Number(right);
    else throw new Error(`MemoryDynamoDb: unsupported SET value ${tokens.join(' ')}`);
    at = next;
  }
  return result;
}

/** One term of a SET value starting at `at`: its value and the index after it. */
function setTerm(
  tokens: string[],
  at: number,
  item: Item,
  names: Record<string, string>,
  values: Record<string, unknown>,
): [unknown, number] {
  const token = tokens[at];
  if (token === 'if_not_exists') {
    // if_not_exists ( path , operand )
    const existing = item[attributeName(tokens[at + 2], names)];
    const [fallback, end] = setTerm(tokens, at + 4, item, names, values);
    return [existing !== undefined ? existing : fallback, end + 1];
  }
  if (token.startsWith(':')) return [valueOf(token, values), at + 1];
  return [item[attributeName(token, names)], at + 1];
}

export function applyUpdate(
  expression: string,
  old: Item | undefined,
  key: Item,
  names: Record<string, string>,
  values: Record<string, unknown>,
): Item {
  // Every value is read from the item as it was before this update, as DynamoDB does.
  const before = old ?? {};
  const next: Item = { ...before, ...key };
  for (const action of parseUpdate(expression)) {
    const name = attributeName(action.path, names);
    if (action.action === 'remove') delete next[name];
    else if (action.action === 'set') next[name] = clone(setValue(action.value, before, names, values));
    else {
      const delta = valueOf(action.value, values);
      if (typeof delta !== 'number') throw new Error('MemoryDynamoDb: ADD supports numbers only');
      next[name] = Number(before[name] ?? 0) + delta;
    }
  }
  return next;
}
