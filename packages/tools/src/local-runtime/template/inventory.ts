import type { CfnTemplate } from './model';

/** Resource types the runtime reproduces (possibly in part: see the partial list). */
export const EMULATED_TYPES = new Set([
  'AWS::DynamoDB::Table',
  'AWS::SQS::Queue',
  'AWS::Lambda::Function',
  'AWS::Lambda::EventSourceMapping',
  'AWS::Lambda::EventInvokeConfig',
  'AWS::ApiGateway::RestApi',
  'AWS::ApiGateway::Resource',
  'AWS::ApiGateway::Method',
  'AWS::ApiGateway::Stage',
  'AWS::ApiGateway::Deployment',
  'AWS::ApiGateway::GatewayResponse',
  'AWS::ApiGateway::RequestValidator',
  'AWS::Events::Rule',
  'AWS::CloudWatch::Alarm',
]);

/** Why a type has no local counterpart, where that is by design rather than a gap. */
const REASONS: Record<string, string> = {
  'AWS::IAM::Role': 'permissions are not enforced locally',
  'AWS::IAM::Policy': 'permissions are not enforced locally',
  'AWS::IAM::ManagedPolicy': 'permissions are not enforced locally',
  'AWS::Lambda::Permission': 'permissions are not enforced locally',
  'AWS::SQS::QueuePolicy': 'permissions are not enforced locally',
  'AWS::SNS::TopicPolicy': 'permissions are not enforced locally',
  'AWS::Logs::LogGroup': 'function logs are printed to this terminal instead',
  'AWS::ApiGateway::Account': 'API Gateway logging role',
  'AWS::ApiGateway::Model': 'request bodies are not validated against models (the handlers validate)',
  'AWS::SNS::Topic': 'alarm notifications are printed instead',
  'AWS::SNS::Subscription': 'alarm notifications are printed instead',
  'AWS::CloudWatch::Dashboard': 'no local metrics store',
  'AWS::CDK::Metadata': 'CDK bookkeeping',
  'AWS::KMS::Key': "the alarm topic's encryption key: nothing is encrypted locally, and alarms are printed",
  'AWS::KMS::Alias': "the alarm topic's encryption key: nothing is encrypted locally, and alarms are printed",
  'AWS::SSM::Parameter':
    'the fault switch and provider API keys come from files under .local/ instead (the proof kit writes them)',
};

export interface NotEmulated {
  type: string;
  count: number;
  reason?: string;
}

/** Every resource type of the template the runtime does not emulate, with a count and the reason when known. */
export function notEmulatedTypes(template: CfnTemplate): NotEmulated[] {
  const counts = new Map<string, number>();
  for (const resource of Object.values(template.Resources)) {
    if (!EMULATED_TYPES.has(resource.Type)) counts.set(resource.Type, (counts.get(resource.Type) ?? 0) + 1);
  }
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([type, count]) => ({ type, count, reason: REASONS[type] }));
}

/** The report printed once at start: types not emulated, then resources of emulated types the runtime skips. */
export function formatInventory(
  notEmulated: NotEmulated[],
  partial: { logicalId: string; reason: string }[],
): string[] {
  const lines: string[] = [];
  if (notEmulated.length > 0) {
    lines.push('Not emulated locally:');
    for (const t of notEmulated) lines.push(`  ${t.type} x${t.count}${t.reason ? ` (${t.reason})` : ''}`);
  }
  if (partial.length > 0) {
    lines.push('Skipped (not supported locally):');
    const byReason = new Map<string, string[]>();
    for (const p of partial) byReason.set(p.reason, [...(byReason.get(p.reason) ?? []), p.logicalId]);
    for (const [reason, ids] of byReason) lines.push(`  ${reason}: ${ids.join(', ')}`);
  }
  return lines;
}

/**
 * The inventory in one line, as `npm start` prints it by default: counts, not the logical ids (those are a
 * few kilobytes on the example's stack, scrolling past before `Ready`; `--details` prints them).
 *
 * @example
 *   inventorySummary([{ type: 'AWS::SNS::Topic', count: 1 }], [{ logicalId: 'A', reason: 'r' }]);
 *   // 'Not emulated locally: 1 resource of 1 type; skipped: 1 resource for 1 reason (npm start -- --details lists them)'
 */
export function inventorySummary(
  notEmulated: NotEmulated[],
  partial: { logicalId: string; reason: string }[],
): string | undefined {
  if (notEmulated.length === 0 && partial.length === 0) return undefined;
  const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;
  const resources = notEmulated.reduce((n, t) => n + t.count, 0);
  const reasons = new Set(partial.map((p) => p.reason)).size;
  return (
    `Not emulated locally: ${plural(resources, 'resource', 'resources')} of ${plural(notEmulated.length, 'type', 'types')}; ` +
    `skipped: ${plural(partial.length, 'resource', 'resources')} for ${plural(reasons, 'reason', 'reasons')} ` +
    '(npm start -- --details lists them)'
  );
}
