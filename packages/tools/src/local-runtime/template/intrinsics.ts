import { TemplateError, type CfnTemplate } from './model';

/**
 * What `Ref` and `Fn::GetAtt` mean locally: the names, URLs and ARNs of the
 * resources the runtime created, plus the pseudo parameters.
 */
export interface ReferenceTable {
  ref(logicalId: string): string | undefined;
  getAtt(logicalId: string, attribute: string): string | undefined;
}

/**
 * Resolves CloudFormation intrinsic functions in a template value:
 * Ref, Fn::GetAtt, Fn::Join, Fn::Sub, Fn::Select, Fn::Split, Fn::If,
 * Fn::Equals/Not/And/Or (in Conditions), Fn::FindInMap and Fn::Base64.
 * Anything else (Fn::ImportValue, Fn::GetAZs...) cannot mean anything locally
 * and is reported with the path where it was found.
 */
export class IntrinsicResolver {
  constructor(
    private readonly template: CfnTemplate,
    private readonly references: ReferenceTable,
    private readonly pseudo: Record<string, string>,
  ) {}

  resolve(value: unknown, where = 'template'): unknown {
    if (Array.isArray(value)) return value.map((v, i) => this.resolve(v, `${where}[${i}]`));
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Record<string, unknown>);
    if (
      entries.length === 1 &&
      (entries[0][0] === 'Ref' || entries[0][0].startsWith('Fn::') || entries[0][0] === 'Condition')
    ) {
      return this.intrinsic(entries[0][0], entries[0][1], where);
    }
    return Object.fromEntries(entries.map(([k, v]) => [k, this.resolve(v, `${where}.${k}`)]));
  }

  /** Resolves a value that must end up a string (environment variables, names). */
  resolveString(value: unknown, where: string): string {
    const resolved = this.resolve(value, where);
    if (typeof resolved === 'string') return resolved;
    if (typeof resolved === 'number' || typeof resolved === 'boolean') return String(resolved);
    throw new TemplateError(`${where} does not resolve to a string: ${JSON.stringify(resolved)}`);
  }

  condition(name: string): boolean {
    const definition = this.template.Conditions?.[name];
    if (definition === undefined) throw new TemplateError(`Unknown condition ${name}`);
    return Boolean(this.resolve(definition, `Conditions.${name}`));
  }

  private intrinsic(fn: string, arg: unknown, where: string): unknown {
    switch (fn) {
      case 'Ref':
        return this.ref(String(arg), where);
      case 'Fn::GetAtt': {
        const [id, ...attr] = Array.isArray(arg) ? (arg as string[]) : String(arg).split('.');
        const attribute = this.resolveString(attr.join('.'), where);
        const value = this.references.getAtt(id, attribute);
        if (value === undefined)
          throw new TemplateError(`${where}: cannot resolve Fn::GetAtt ${id}.${attribute} locally`);
        return value;
      }
      case 'Fn::Join': {
        const [separator, parts] = arg as [string, unknown];
        const list = this.resolve(parts, where) as unknown[];
        return list.map((p) => String(p)).join(separator);
      }
      case 'Fn::Sub':
        return this.sub(arg, where);
      case 'Fn::Select': {
        const [index, list] = arg as [unknown, unknown];
        return (this.resolve(list, where) as unknown[])[Number(this.resolve(index, where))];
      }
      case 'Fn::Split': {
        const [separator, source] = arg as [string, unknown];
        return this.resolveString(source, where).split(separator);
      }
      case 'Fn::If': {
        const [condition, whenTrue, whenFalse] = arg as [string, unknown, unknown];
        return this.condition(condition) ? this.resolve(whenTrue, where) : this.resolve(whenFalse, where);
      }
      case 'Condition':
        return this.condition(String(arg));
      case 'Fn::Equals': {
        const [a, b] = this.resolve(arg, where) as [unknown, unknown];
        return JSON.stringify(a) === JSON.stringify(b);
      }
      case 'Fn::Not':
        return !(this.resolve(arg, where) as unknown[])[0];
      case 'Fn::And':
        return (this.resolve(arg, where) as unknown[]).every(Boolean);
      case 'Fn::Or':
        return (this.resolve(arg, where) as unknown[]).some(Boolean);
      case 'Fn::FindInMap': {
        const [map, top, second] = (this.resolve(arg, where) as string[]).map(String);
        return this.template.Mappings?.[map]?.[top]?.[second];
      }
      case 'Fn::Base64':
        return Buffer.from(this.resolveString(arg, where)).toString('base64');
      default:
        throw new TemplateError(`${where}: ${fn} is not supported by the local runtime`);
    }
  }

  private ref(id: string, where: string): unknown {
    if (id in this.pseudo) return this.pseudo[id];
    const parameter = this.template.Parameters?.[id];
    if (parameter !== undefined) return parameter.Default;
    const value = this.references.ref(id);
    if (value === undefined) throw new TemplateError(`${where}: cannot resolve Ref ${id} locally`);
    return value;
  }

  private sub(arg: unknown, where: string): string {
    const [text, variables] = Array.isArray(arg) ? (arg as [string, Record<string, unknown>]) : [String(arg), {}];
    const local = Object.fromEntries(Object.entries(variables).map(([k, v]) => [k, this.resolveString(v, where)]));
    // ${!Literal} is an escaped `${Literal}`.
    return text.replace(/\$\{([^}]+)\}/g, (_match, name: string) => {
      if (name.startsWith('!')) return `\${${name.slice(1)}}`;
      if (name in local) return local[name];
      if (name.includes('.')) {
        const [id, ...attr] = name.split('.');
        return this.resolveString({ 'Fn::GetAtt': [id, attr.join('.')] }, where);
      }
      return this.resolveString({ Ref: name }, where);
    });
  }
}
