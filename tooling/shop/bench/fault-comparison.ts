import { loyaltyPoints } from '../../../lambdas/shop/domain/order';
import { benchEvents, buildConsumer, CONSUMER_KINDS, type ConsumerKind } from './consumer-vs-peer';
import type { Tables } from './emulator-limit';
import {
  countDoubleEffects,
  countFaults,
  deliverAtLeastOnce,
  DEFAULT_TIMING,
  faultSchedule,
  type DeliveryReport,
  type DeliveryTiming,
  type Fault,
} from '../../../tools/bench/fault-schedule';

/**
 * The three consumers under the same seeded fault schedule (fault-schedule.ts),
 * against DynamoDB Local: each message has a customer of its own, so the points
 * on a customer's item say how many times its message was applied. The three
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
  tables: Tables;
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
    const events = benchEvents(runId, options.messages, 0, true);
    const consumer = buildConsumer(kind, { ...options, runId, invocationMs: timing.invocationMs });
    try {
      const report = await deliverAtLeastOnce(events, schedule, consumer.consume, {
        concurrency: options.concurrency,
        timing,
      });
      const applied = await consumer.pointsOf(events.map((e) => e.payload.customerId));
      const counted = countDoubleEffects(
        events.map((e) => ({ key: e.payload.customerId, amount: loyaltyPoints(e.payload.totalCents) })),
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
