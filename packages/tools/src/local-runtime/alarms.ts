import type { ActionDelivery } from '@exactly-once/cdk/aspects/alarm-delivery-policy';
import type { AlarmDefinition } from './template/alarms';

export type AlarmState = 'INSUFFICIENT_DATA' | 'OK' | 'ALARM';

export interface QueueMetrics {
  ApproximateNumberOfMessagesVisible: number;
  ApproximateAgeOfOldestMessage: number;
}

const COMPARE: Record<string, (value: number, threshold: number) => boolean> = {
  GreaterThanThreshold: (v, t) => v > t,
  GreaterThanOrEqualToThreshold: (v, t) => v >= t,
  LessThanThreshold: (v, t) => v < t,
  LessThanOrEqualToThreshold: (v, t) => v <= t,
};

/**
 * Evaluates the template's SQS alarms locally. CloudWatch aggregates one
 * datapoint per Period; here a datapoint is sampled every `intervalMs` (5 s by
 * default) so a local run shows alarms within seconds. The alarm is in ALARM
 * when at least DatapointsToAlarm of the last EvaluationPeriods samples breach.
 * Only state changes are printed.
 */
export class AlarmEvaluator {
  private readonly samples = new Map<string, boolean[]>();
  private readonly states = new Map<string, AlarmState>();
  private timer?: NodeJS.Timeout;
  private evaluating?: Promise<void>;

  constructor(
    private readonly alarms: { definition: AlarmDefinition; queueName: string; actions: string[] }[],
    private readonly metricsOf: (queueName: string) => Promise<QueueMetrics>,
    private readonly log: (line: string) => void,
    private readonly intervalMs = 5_000,
  ) {}

  start(): void {
    if (this.alarms.length === 0) return;
    this.timer = setInterval(() => {
      this.evaluating ??= this.evaluate().finally(() => (this.evaluating = undefined));
    }, this.intervalMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.evaluating;
  }

  state(alarmName: string): AlarmState {
    return this.states.get(alarmName) ?? 'INSUFFICIENT_DATA';
  }

  async evaluate(): Promise<void> {
    const metrics = new Map<string, QueueMetrics>();
    for (const { definition, queueName, actions } of this.alarms) {
      let m = metrics.get(queueName);
      if (m === undefined) {
        try {
          m = await this.metricsOf(queueName);
        } catch {
          continue; // Emulator gone (stopping): no datapoint.
        }
        metrics.set(queueName, m);
      }
      const value = m[definition.metric];
      const compare = COMPARE[definition.comparison] ?? COMPARE.GreaterThanOrEqualToThreshold;
      const window = [...(this.samples.get(definition.name) ?? []), compare(value, definition.threshold)].slice(
        -definition.evaluationPeriods,
      );
      this.samples.set(definition.name, window);
      const breaching = window.filter(Boolean).length;
      const previous = this.state(definition.name);
      const next: AlarmState = breaching >= definition.datapointsToAlarm ? 'ALARM' : 'OK';
      this.states.set(definition.name, next);
      if (next === previous || (previous === 'INSUFFICIENT_DATA' && next === 'OK')) continue;
      const notify = next === 'ALARM' && actions.length > 0 ? `; ${notifications(actions, definition.deliveries)}` : '';
      this.log(
        `${next.padEnd(5)} ${definition.name}: ${definition.metric} of ${queueName} = ${value} (${definition.comparison} ${definition.threshold})${notify}`,
      );
    }
  }
}

/**
 * What CloudWatch would do with each action of an alarm that fires: notify the
 * topic, or be refused by its topic or key policy (said plainly, with why).
 */
export function notifications(actions: string[], deliveries: ActionDelivery[]): string {
  const notified: string[] = [];
  const refused: string[] = [];
  actions.forEach((action, i) => {
    const delivery = deliveries[i];
    if (delivery?.kind === 'blocked') {
      refused.push(
        `CloudWatch could not publish to ${action}, so nobody would be told: ${delivery.reasons.join('; ')}`,
      );
    } else if (delivery?.kind === 'unverifiable') {
      refused.push(`cannot tell whether CloudWatch could publish to ${action}: ${delivery.reason}`);
    } else {
      notified.push(action);
    }
  });
  return [...(notified.length > 0 ? [`would notify ${notified.join(', ')}`] : []), ...refused].join('; ');
}

/** Queue depth and oldest age from fauxqs's inspection endpoint (it has no ApproximateAgeOfOldestMessage attribute). */
export async function fauxqsQueueMetrics(fauxqsEndpoint: string, queueName: string): Promise<QueueMetrics> {
  const response = await fetch(`${fauxqsEndpoint}/_fauxqs/queues/${encodeURIComponent(queueName)}`);
  if (!response.ok) throw new Error(`fauxqs inspection of ${queueName} failed: ${response.status}`);
  const queue = (await response.json()) as {
    messages: { ready: { sentTimestamp: number }[]; inflight: { message: { sentTimestamp: number } }[] };
  };
  const sent = [
    ...queue.messages.ready.map((m) => m.sentTimestamp),
    ...queue.messages.inflight.map((m) => m.message.sentTimestamp),
  ];
  const oldest = sent.length === 0 ? 0 : Math.floor((Date.now() - Math.min(...sent)) / 1000);
  return { ApproximateNumberOfMessagesVisible: queue.messages.ready.length, ApproximateAgeOfOldestMessage: oldest };
}
