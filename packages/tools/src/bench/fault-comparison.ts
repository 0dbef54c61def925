import { buildConsumer, CONSUMER_KINDS, type ConsumerKind } from './consumers';
import { benchEvents } from './events';
import type { BenchTables } from './tables';
import {
  countDoubleEffects,
  countFaults,
  deliverAtLeastOnce,
  DEFAULT_TIMING,
  faultSchedule,
  type DeliveryReport,
  type DeliveryTiming,
  type Fault,
} from './fault-schedule';

/**
 * The three consumers under the same seeded fault schedule (fault-schedule.ts),
 * against DynamoDB Local: each message has an entity of its own, so the count
 * on the entity's effect item says how many times its message was applied. The three
 * run one after the other on new events, so none sees another's records.
 */
export interface FaultSide extends DeliveryReport {
  double: number;
  missing: number;
}

export interface FaultComparison {
  messages: number;
  seed: number;
  faultShare: number;
  faults: Record<Fault, number>;
  timing: DeliveryTiming;
  sides: Record<ConsumerKind, FaultSide>;
}

export async function compareUnderFaults(options: {
  endpoint: string;
  region: string;
  tables: BenchTables;
  messages: number;
  concurrency: number;
  seed: number;
  faultShare?: number;
  timing?: DeliveryTiming;
  /** Only these consumers (tests); default all three. */
  kinds?: readonly ConsumerKind[];
}): Promise<FaultComparison> {
  const faultShare = options.faultShare ?? 0.2;
  const timing = options.timing ?? DEFAULT_TIMING;
  const schedule = faultSchedule(options.seed, options.messages, faultShare);
  const sides = {} as Record<ConsumerKind, FaultSide>;
  for (const kind of options.kinds ?? CONSUMER_KINDS) {
    const runId = `bf${Date.now().toString(36)}${kind}`;
    const events = benchEvents(runId, options.messages);
    const consumer = buildConsumer(kind, { ...options, runId, invocationMs: timing.invocationMs });
    try {
      const report = await deliverAtLeastOnce(events, schedule, consumer.consume, {
        concurrency: options.concurrency,
        timing,
      });
      const applied = await consumer.countsOf(events.map((e) => e.entityId));
      const counted = countDoubleEffects(
        events.map((e) => ({ key: e.entityId, amount: 1 })),
        applied,
      );
      sides[kind] = { ...report, ...counted };
    } finally {
      consumer.destroy();
    }
  }
  return {
    messages: options.messages,
    seed: options.seed,
    faultShare,
    faults: countFaults(schedule),
    timing,
    sides,
  };
}
