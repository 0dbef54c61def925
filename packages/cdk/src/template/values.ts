/**
 * Reading CloudFormation values as a synthesized template spells them, with
 * intrinsics left unresolved. No CDK import: the correctness aspects read the
 * stack they check with these, and the local runtime reads the template it
 * runs with the same functions, so a reference, a redrive policy or a FIFO flag
 * cannot mean one thing at synth and another under `npm start`.
 */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{ Ref: id }`, `{ 'Fn::GetAtt': [id, attr] }` or `{ 'Fn::GetAtt': 'id.attr' }` → id; a pseudo parameter is none. */
export function referencedLogicalId(value: unknown): string | undefined {
  if (!isRecord(value)) return undefined;
  if (typeof value.Ref === 'string') return value.Ref.startsWith('AWS::') ? undefined : value.Ref;
  const getAtt = value['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return getAtt[0];
  if (typeof getAtt === 'string') return getAtt.split('.')[0];
  return undefined;
}

/** The attribute of an `Fn::GetAtt` (`StreamArn` of `[Table, StreamArn]`); undefined for anything else. */
export function referencedAttribute(value: unknown): string | undefined {
  if (!isRecord(value)) return undefined;
  const getAtt = value['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[1] === 'string') return getAtt[1];
  if (typeof getAtt === 'string') return getAtt.split('.').slice(1).join('.');
  return undefined;
}

/**
 * Every logical id a value refers to, wherever it sits: a `Ref` or `Fn::GetAtt`
 * at any depth (inside an `Fn::Join`, `Fn::Select`...), and the `${Id}` or
 * `${Id.Attr}` names of an `Fn::Sub` text that are not its own variables or
 * pseudo parameters. In the order met, without repeats.
 */
export function referencedLogicalIds(value: unknown): string[] {
  const found = new Set<string>();
  const visit = (v: unknown): void => {
    const direct = referencedLogicalId(v);
    if (direct !== undefined) {
      found.add(direct);
      return;
    }
    if (Array.isArray(v)) v.forEach(visit);
    else if (isRecord(v)) {
      if ('Fn::Sub' in v) {
        const sub = v['Fn::Sub'];
        const [text, variables] = Array.isArray(sub) ? [sub[0], sub[1]] : [sub, undefined];
        const own = isRecord(variables) ? variables : {};
        if (typeof text === 'string') for (const id of subNames(text)) if (!(id in own)) found.add(id);
        Object.values(own).forEach(visit);
        return;
      }
      Object.values(v).forEach(visit);
    }
  };
  visit(value);
  return [...found];
}

/** The resource names an `Fn::Sub` text interpolates: `${Fn.Arn}` → Fn; `${!Literal}` and `${AWS::Region}` are none. */
function subNames(text: string): string[] {
  return [...text.matchAll(/\$\{([^}!][^}]*)\}/g)]
    .map((match) => match[1].split('.')[0])
    .filter((name) => !name.startsWith('AWS::'));
}

/** Redrive and redrive-allow policies may be an object or, in raw CloudFormation, a JSON string. */
export function parseJson(value: unknown): Record<string, unknown> | undefined {
  if (typeof value === 'string') {
    try {
      const parsed: unknown = JSON.parse(value);
      return isRecord(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  return isRecord(value) ? value : undefined;
}

/** The value at a path of keys, or undefined where the path stops. */
export function get(value: unknown, ...keys: string[]): unknown {
  let current = value;
  for (const key of keys) {
    if (!isRecord(current)) return undefined;
    current = current[key];
  }
  return current;
}

/** A number as CloudFormation accepts it (a number, or an integer as a string); undefined for anything else. */
export function readNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && /^-?\d+$/.test(value.trim())) return Number(value);
  return undefined;
}

/** A boolean as CloudFormation accepts it (`true`, `'true'`...); undefined for anything else (a token). */
export function readBoolean(value: unknown): boolean | undefined {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  return undefined;
}

/** The text of an ARN, with `*` for the parts an `Fn::Join` fills in at deploy time. */
export function arnTemplate(value: unknown): string {
  if (typeof value === 'string') return value;
  const join = isRecord(value) ? value['Fn::Join'] : undefined;
  if (Array.isArray(join) && typeof join[0] === 'string' && Array.isArray(join[1])) {
    return join[1].map((part: unknown) => (typeof part === 'string' ? part : '*')).join(join[0]);
  }
  return '';
}

/** A short rendering of a CloudFormation value for messages. */
export function show(value: unknown): string {
  if (value === undefined) return 'unset';
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
