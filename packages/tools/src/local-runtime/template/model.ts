import { readNumber } from '@exactly-once/cdk/template';

/**
 * The slice of the CloudFormation template format the local runtime reads.
 * Values stay `unknown` until an interpreter module has checked their shape.
 */
export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  Metadata?: Record<string, unknown>;
  Condition?: string;
  DependsOn?: string | string[];
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown; Description?: string }>;
  Parameters?: Record<string, { Type: string; Default?: unknown }>;
  Conditions?: Record<string, unknown>;
  Mappings?: Record<string, Record<string, Record<string, unknown>>>;
}

/** A template that cannot be run locally; the message is shown to the user as is. */
export class TemplateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateError';
  }
}

/** The account id fauxqs puts in queue ARNs; used for every local ARN so they agree. */
export const LOCAL_ACCOUNT_ID = '000000000000';

export function resourcesOfType(template: CfnTemplate, type: string): [string, CfnResource][] {
  return Object.entries(template.Resources).filter(([, r]) => r.Type === type);
}

/** The readable construct path CDK records, e.g. `OrdersApi/CreateOrder` for `Stack/OrdersApi/CreateOrder/Fn/Resource`. */
export function displayName(logicalId: string, resource: CfnResource): string {
  const cdkPath = resource.Metadata?.['aws:cdk:path'];
  if (typeof cdkPath !== 'string') return logicalId;
  const parts = cdkPath.split('/').slice(1);
  while (parts.length > 1 && ['Resource', 'Fn', 'Default'].includes(parts[parts.length - 1])) parts.pop();
  return parts.join('/') || logicalId;
}

/**
 * A numeric property read as the correctness aspects read one (a number, or an integer as a string), its
 * documented default when unset; a value the template leaves to deploy time (a parameter, an intrinsic)
 * is refused rather than run as NaN.
 */
export function numberProperty(
  properties: Record<string, unknown>,
  key: string,
  fallback: number,
  where: string,
): number {
  if (properties[key] === undefined) return fallback;
  const value = readNumber(properties[key]);
  if (value === undefined) throw new TemplateError(`${where}: ${key} is not a number known at synth time`);
  return value;
}
