import { alarmActionDelivery, type ActionDelivery } from '@exactly-once/cdk/aspects/alarm-delivery-policy';
import { referencedAttribute, referencedLogicalId, SQS_QUEUE, templateLookup } from '@exactly-once/cdk/template';
import { displayName, LOCAL_ACCOUNT_ID, resourcesOfType, type CfnTemplate } from './model';

export type SqsMetric = 'ApproximateNumberOfMessagesVisible' | 'ApproximateAgeOfOldestMessage';
const SQS_METRICS: readonly string[] = ['ApproximateNumberOfMessagesVisible', 'ApproximateAgeOfOldestMessage'];

export interface AlarmDefinition {
  logicalId: string;
  /** AlarmName if set, else the logical id (CloudFormation would generate one). */
  name: string;
  metric: SqsMetric;
  queueLogicalId: string;
  threshold: number;
  comparison: string;
  evaluationPeriods: number;
  datapointsToAlarm: number;
  periodSeconds: number;
  /** Unresolved AlarmActions (SNS topics are not emulated: the runtime says which it would notify). */
  actions: unknown[];
  /**
   * For each of `actions`, whether CloudWatch could publish to it under the template's topic and key
   * policies: the same judgement the AlarmDelivery aspect makes at synth, so a local run says what a
   * deployed alarm would do instead of promising a notification nobody would get.
   */
  deliveries: ActionDelivery[];
}

/**
 * Reads the CloudWatch alarms the runtime can evaluate: a single AWS/SQS
 * metric it can compute from the emulator (queue depth and oldest age) on a
 * queue of the stack. The rest are returned as unsupported, with the reason.
 */
export function alarmDefinitions(template: CfnTemplate): {
  alarms: AlarmDefinition[];
  unsupported: { logicalId: string; reason: string }[];
} {
  const alarms: AlarmDefinition[] = [];
  const lookup = templateLookup(template.Resources, (id) => {
    const resource = template.Resources[id];
    return resource === undefined ? id : displayName(id, resource);
  });
  // The local account and partition; the region stays symbolic on both sides of each comparison.
  const env = { pseudo: { AccountId: LOCAL_ACCOUNT_ID, Partition: 'aws' } };
  const unsupported: { logicalId: string; reason: string }[] = [];
  for (const [logicalId, alarm] of resourcesOfType(template, 'AWS::CloudWatch::Alarm')) {
    const p = alarm.Properties ?? {};
    const dimensions = (p.Dimensions ?? []) as { Name: string; Value: unknown }[];
    // The dimension is the queue's name (`Fn::GetAtt [Queue, QueueName]`); a Ref would be its URL and match no metric.
    const dimension = dimensions.find((d) => d.Name === 'QueueName')?.Value;
    const queueId = referencedAttribute(dimension) === 'QueueName' ? referencedLogicalId(dimension) : undefined;
    const queueLogicalId = queueId !== undefined && lookup.get(queueId)?.Type === SQS_QUEUE ? queueId : undefined;
    const metric = String(p.MetricName ?? '');
    if (p.Namespace !== 'AWS/SQS' || !SQS_METRICS.includes(metric) || queueLogicalId === undefined) {
      const what = p.Metrics !== undefined ? 'metric math alarms' : `alarms on ${String(p.Namespace)} metrics`;
      unsupported.push({
        logicalId,
        reason: `${what} (only SQS queue depth and oldest-message age are evaluated locally)`,
      });
      continue;
    }
    const actions = (p.AlarmActions ?? []) as unknown[];
    alarms.push({
      logicalId,
      name: typeof p.AlarmName === 'string' ? p.AlarmName : logicalId,
      metric: metric as SqsMetric,
      queueLogicalId,
      threshold: Number(p.Threshold),
      comparison: String(p.ComparisonOperator),
      evaluationPeriods: Number(p.EvaluationPeriods ?? 1),
      datapointsToAlarm: Number(p.DatapointsToAlarm ?? p.EvaluationPeriods ?? 1),
      periodSeconds: Number(p.Period ?? 60),
      actions,
      deliveries: actions.map((action) => alarmActionDelivery(lookup, logicalId, action, env)),
    });
  }
  return { alarms, unsupported };
}
