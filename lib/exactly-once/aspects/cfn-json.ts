/**
 * Reading CloudFormation JSON: no CDK import, so the alarm-delivery judgement
 * (shared with the local runtime) and the stack model use the same helpers.
 */

/** `{ Ref: id }`, `{ 'Fn::GetAtt': [id, attr] }` or `{ 'Fn::GetAtt': 'id.attr' }` → id; a pseudo parameter is none. */
export function referencedLogicalId(value: unknown): string | undefined {
  if (!isRecord(value)) return undefined;
  if (typeof value.Ref === 'string') return value.Ref.startsWith('AWS::') ? undefined : value.Ref;
  const getAtt = value['Fn::GetAtt'];
  if (Array.isArray(getAtt) && typeof getAtt[0] === 'string') return getAtt[0];
  if (typeof getAtt === 'string') return getAtt.split('.')[0];
  return undefined;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
