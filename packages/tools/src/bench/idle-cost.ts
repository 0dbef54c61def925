import { IDLE_UNIT_PRICES, UNIT_PRICES } from '../proof-kit/prices';
import { EVENT_SOURCE_MAPPING, eventSourceOf, templateLookup } from '@exactly-once/cdk/template';
import { resourcesOfType, type CfnTemplate } from '../local-runtime/template/model';
import { scheduleDefinitions } from '../local-runtime/template/schedules';

/**
 * What the stack costs per month with no orders, read from the synthesized
 * template: alarms (per alarm metric), dashboards, KMS keys, each scheduled
 * rule's invocations (requests, duration at the target's memory and
 * architecture, and the DynamoDB reads one invocation makes), and the log
 * groups with their retention. What the template cannot say (how long one
 * scheduled invocation runs, what it reads and logs) comes from a measurement
 * of one invocation, or is left out of the total and said so.
 */
export interface ScheduledMeasurement {
  /** Milliseconds one invocation ran (locally measured). */
  durationMs?: number;
  /** DynamoDB read request units one invocation used. */
  readUnits?: number;
  /** Bytes of log one invocation wrote. */
  logBytes?: number;
}

export interface IdleCostLine {
  item: string;
  count: number;
  dollarsPerMonth: number;
  detail: string;
}

export interface IdleCost {
  lines: IdleCostLine[];
  totalPerMonth: number;
  /** What is not in the total, and why. */
  notCounted: string[];
}

const GB = 1024 ** 3;

function alarmMetrics(properties: Record<string, unknown>): { metrics: number; highResolution: boolean } {
  const metrics = properties.Metrics as { MetricStat?: { Period?: number } }[] | undefined;
  if (Array.isArray(metrics)) {
    const stats = metrics.filter((m) => m.MetricStat !== undefined);
    return {
      metrics: Math.max(1, stats.length),
      highResolution: stats.some((m) => Number(m.MetricStat?.Period ?? 60) < 60),
    };
  }
  return { metrics: 1, highResolution: Number(properties.Period ?? 60) < 60 };
}

export function idleCost(template: CfnTemplate, measured: Record<string, ScheduledMeasurement> = {}): IdleCost {
  const prices = IDLE_UNIT_PRICES;
  const lines: IdleCostLine[] = [];
  const notCounted: string[] = [];

  const alarms = resourcesOfType(template, 'AWS::CloudWatch::Alarm').map(([, r]) => alarmMetrics(r.Properties ?? {}));
  const standard = alarms.filter((a) => !a.highResolution).reduce((n, a) => n + a.metrics, 0);
  const high = alarms.filter((a) => a.highResolution).reduce((n, a) => n + a.metrics, 0);
  lines.push({
    item: 'alarms',
    count: alarms.length,
    dollarsPerMonth: standard * prices.cloudWatchAlarmPerMonth + high * prices.cloudWatchHighResolutionAlarmPerMonth,
    detail: `${standard} standard alarm metrics x $${prices.cloudWatchAlarmPerMonth.toFixed(2)}${high > 0 ? ` + ${high} high-resolution x $${prices.cloudWatchHighResolutionAlarmPerMonth.toFixed(2)}` : ''}`,
  });

  const dashboards = resourcesOfType(template, 'AWS::CloudWatch::Dashboard').length;
  lines.push({
    item: 'dashboards',
    count: dashboards,
    dollarsPerMonth: dashboards * prices.cloudWatchDashboardPerMonth,
    detail: `$${prices.cloudWatchDashboardPerMonth.toFixed(2)} each, free if among the account's first three`,
  });

  const keys = resourcesOfType(template, 'AWS::KMS::Key');
  const rotated = keys.filter(([, r]) => r.Properties?.EnableKeyRotation === true).length;
  lines.push({
    item: 'KMS keys',
    count: keys.length,
    dollarsPerMonth: keys.length * prices.kmsKeyPerMonth,
    detail: `$${prices.kmsKeyPerMonth.toFixed(2)} each${rotated > 0 ? `; ${rotated} rotated yearly: +$1 after each of the first two rotations` : ''}`,
  });

  const functions = template.Resources;
  for (const schedule of scheduleDefinitions(template).schedules) {
    const invocations = (prices.hoursPerMonth * 3_600_000) / schedule.periodMs;
    for (const target of schedule.targets) {
      const fn = functions[target.functionLogicalId]?.Properties ?? {};
      const memoryMb = Number(fn.MemorySize ?? 128);
      const arm = ((fn.Architectures as string[] | undefined) ?? []).includes('arm64');
      const m = measured[target.functionLogicalId] ?? {};
      const requests = (invocations / 1e6) * UNIT_PRICES.lambdaRequestsPerMillion;
      const parts = [
        `${schedule.expression}: ${Math.round(invocations).toLocaleString('en-US')} invocations/month, requests $${requests.toFixed(3)}`,
      ];
      let dollars = requests + (invocations / 1e6) * prices.eventBridgeScheduledEventPerMillion;
      if (m.durationMs !== undefined && arm) {
        const duration = invocations * (m.durationMs / 1000) * (memoryMb / 1024) * UNIT_PRICES.lambdaArmGbSecond;
        dollars += duration;
        parts.push(`duration ${Math.round(m.durationMs)} ms x ${memoryMb} MB $${duration.toFixed(3)}`);
      } else {
        notCounted.push(
          `${target.functionLogicalId} duration (${arm ? 'one invocation not measured' : 'only arm64 is priced'}; at most its timeout, ${Number(fn.Timeout ?? 3)} s)`,
        );
      }
      if (m.readUnits !== undefined) {
        const reads = ((invocations * m.readUnits) / 1e6) * UNIT_PRICES.dynamoDbReadsPerMillion;
        dollars += reads;
        parts.push(`${m.readUnits} RRU each $${reads.toFixed(3)}`);
      } else notCounted.push(`${target.functionLogicalId} DynamoDB reads (not measured)`);
      if (m.logBytes !== undefined) {
        const gb = (invocations * m.logBytes) / GB;
        const logs = gb * prices.cloudWatchLogsIngestionPerGb;
        dollars += logs;
        parts.push(`${m.logBytes} B of log each $${logs.toFixed(3)}`);
      } else notCounted.push(`${target.functionLogicalId} log ingestion (not measured)`);
      lines.push({ item: 'scheduled invocations', count: 1, dollarsPerMonth: dollars, detail: parts.join(', ') });
    }
  }

  const groups = resourcesOfType(template, 'AWS::Logs::LogGroup');
  const retention = new Map<string, number>();
  for (const [, g] of groups) {
    const days = g.Properties?.RetentionInDays === undefined ? 'never expire' : `${g.Properties.RetentionInDays} days`;
    retention.set(days, (retention.get(days) ?? 0) + 1);
  }
  lines.push({
    item: 'log groups',
    count: groups.length,
    dollarsPerMonth: 0,
    detail: `retention ${[...retention].map(([d, n]) => `${d} (${n})`).join(', ')}; nothing stored idle but what the scheduled invocations write, at $${prices.cloudWatchLogsIngestionPerGb.toFixed(2)}/GB ingested, $${prices.cloudWatchLogsStoragePerGbMonth.toFixed(2)}/GB-month kept`,
  });

  const lookup = templateLookup(template.Resources);
  const mappings = resourcesOfType(template, EVENT_SOURCE_MAPPING).filter(
    ([, r]) => eventSourceOf(r.Properties ?? {}, lookup).kind === 'sqs',
  ).length;
  if (mappings > 0) {
    // One empty 20 s long poll per poller is three requests a minute; AWS chooses the poller count.
    const perPoller = ((prices.hoursPerMonth * 3600) / 20 / 1e6) * UNIT_PRICES.sqsStandardPerMillion;
    notCounted.push(
      `the long polls of ${mappings} SQS event source mappings (AWS runs the pollers, their number is not in the template; $${perPoller.toFixed(3)}/month per poller at one empty 20 s poll each)`,
    );
  }
  return { lines, totalPerMonth: lines.reduce((s, l) => s + l.dollarsPerMonth, 0), notCounted };
}

export function idleCostLine(cost: IdleCost): string {
  const parts = cost.lines.map((l) => `${l.item} ${l.count} = $${l.dollarsPerMonth.toFixed(2)} (${l.detail})`);
  return `bench: idle cost $${cost.totalPerMonth.toFixed(2)} per month from the template = ${parts.join('; ')}${cost.notCounted.length > 0 ? `; not counted: ${cost.notCounted.join('; ')}` : ''}`;
}
