import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { poisonBody } from '../../dlq/causes';
import { dlqAcceptsForger, dlqForgeries } from './dlq-forgery';
import { queueAcceptsForger } from './guards/queue-senders';
import type { SimulationOptions } from './options';
import type { EngineState } from './engine-state';
import type { World } from './world';

/**
 * The faults the engine schedules itself (the rest are rolled where they strike: the invocations'
 * crashes, hangs and conflicts, the queues' duplicates, the stream's losses, the providers' failures):
 * provider outage windows, poison messages, forged sends ahead of the relay (`forgedFirst`, refused by
 * the queues' sender policy, guard `queueSenders`), forged DLQ messages (`dlqForgeries`, refused by
 * the DLQs' sender policy, guard `dlqSenderPolicy`) and the producers' skewed clocks.
 */
export class WorldFaults {
  /** The events the relay got from the stream (kept only under the `dlqForgeries` fault, which forges them). */
  private readonly published: EventEnvelope[] = [];

  constructor(
    private readonly world: World<SimulationOptions>,
    private readonly engine: EngineState,
  ) {}

  /** Provider outage windows while the intents arrive (`providerOutages`, `longOutageChance`). */
  scheduleOutages(arrivalsMs: number): void {
    const { scheduler, options } = this.world;
    const windows = Math.floor(options.faults.providerOutages);
    const extraWindow = scheduler.chance(options.faults.providerOutages - windows) ? 1 : 0;
    for (let o = 0; o < windows + extraWindow; o++) {
      const provider = scheduler.pick(options.faults.outageProviders ?? this.providerNames());
      const start = scheduler.between(0, arrivalsMs);
      const long = scheduler.chance(options.faults.longOutageChance);
      const [min, max] = long ? options.faults.longOutageSeconds : options.faults.providerOutageSeconds;
      const end = start + scheduler.between(min * 1000, max * 1000);
      this.engine.providers.outages.push({ provider, start, end });
      const kind = long ? 'provider-outage-beyond-budget' : 'provider-outage';
      scheduler.at(start, () => scheduler.fault(kind, `${provider} until ${(end / 1000).toFixed(1)}s`));
    }
  }

  /** Every provider a consumer of this world names: where outage windows fall unless the faults say otherwise. */
  private providerNames(): string[] {
    return [...new Set([...this.world.consumers.values()].flatMap(({ spec }) => spec.providers ?? []))];
  }

  /** Malformed messages sent straight to every consumer's queue while the intents arrive (`poisonMessages`). */
  schedulePoison(arrivalsMs: number): void {
    const { scheduler, options, consumers } = this.world;
    for (let p = 0; p < options.faults.poisonMessages; p++) {
      scheduler.at(scheduler.between(0, arrivalsMs), () => {
        const body = poisonBody({ n: p });
        for (const { queue } of consumers.values())
          if (queue.options.fifo) queue.send(body, { groupId: `poison-${p}`, dedupId: `poison-${p}` });
          else queue.send(body);
        scheduler.fault('poison-message', `${body} to ${everyQueue(consumers.size)}`);
      });
    }
  }

  /** An outbox event about to reach the stream: the `forgedFirst` fault may strike first; `dlqForgeries` keeps it. */
  beforeRelay(event: EventEnvelope): void {
    const { forgedFirst = 0, dlqForgeries: forgeries = 0 } = this.world.options.faults;
    if (forgedFirst > 0 && this.world.scheduler.chance(forgedFirst)) this.forgeFirst(event);
    if (forgeries > 0) this.published.push(event);
  }

  /** The `dlqForgeries` fault, a minute before the operator's first redrive (none without a redrive). */
  scheduleDlqForgeries(redrives: readonly number[]): void {
    const { dlqForgeries: forgeries = 0 } = this.world.options.faults;
    if (forgeries > 0 && redrives.length > 0)
      this.world.scheduler.at(Math.max(0, redrives[0] - 60_000), () => this.forgeIntoDlqs(forgeries));
  }

  /**
   * The `forgedFirst` fault: before the relay publishes `event`, a copy with other content under its
   * eventId (one more of its first line) goes to every consumer queue that takes it, under a
   * deduplication id of its own; or is denied by the queues' sender policy, which lets only the
   * relay and the sweeper send. (A forger who also reused the real deduplication id would make a
   * FIFO queue drop the real message within SQS's 5-minute window: only the policy prevents that.)
   */
  private forgeFirst(event: EventEnvelope): void {
    const { world } = this;
    const forged = this.engine.domain.forge(event);
    for (const { spec, queue } of world.consumers.values()) {
      if (!spec.eventTypes.includes(event.type)) continue;
      if (!queueAcceptsForger(world.options.guards.queueSenders)) {
        world.scheduler.fault('forged-send-denied', `${event.eventId} to ${spec.name}`);
        continue;
      }
      const body = JSON.stringify(forged);
      if (queue.options.fifo) queue.send(body, { groupId: event.entityId, dedupId: `${event.eventId}.forged` });
      else queue.send(body);
      this.engine.watch.forged.add(`${spec.name}\n${event.eventId}`);
      world.scheduler.fault('forged-first', `${event.eventId} to ${spec.name}`);
    }
  }

  /**
   * The `dlqForgeries` fault: per consumer, `count` published events it takes, each forged into its DLQ
   * twice (a known eventId with other content, a new eventId), or refused by the DLQ's sender policy.
   */
  private forgeIntoDlqs(count: number): void {
    const { world } = this;
    for (const { spec, deadLetterQueue } of world.consumers.values()) {
      const taken = this.published.filter((e) => spec.eventTypes.includes(e.type));
      for (let n = 0; n < count && taken.length > 0; n++) {
        const event = world.scheduler.pick(taken);
        for (const forged of dlqForgeries(event, (e) => this.engine.domain.forge(e))) {
          if (!dlqAcceptsForger(world.options.guards.dlqSenderPolicy)) {
            world.scheduler.fault('forged-dlq-send-denied', `${forged.eventId} to ${spec.name}`);
            continue;
          }
          const body = JSON.stringify(forged);
          if (deadLetterQueue.options.fifo)
            deadLetterQueue.send(body, { groupId: forged.entityId, dedupId: `${forged.eventId}.dlq-forged-${n}` });
          else deadLetterQueue.send(body);
          world.scheduler.fault('forged-into-dlq', `${forged.eventId} to ${spec.name}`);
        }
      }
    }
  }

  /** How far off the clock of the API instance producing this client's events is (the `producerClockSkew` fault). */
  producerClockSkewMs(index: number): number {
    const { scheduler, options } = this.world;
    const { producerClockSkew = 0, producerClockSkewSeconds = [0, 0] } = options.faults;
    if (producerClockSkew <= 0 || !scheduler.chance(producerClockSkew)) return 0;
    const skewMs = scheduler.between(producerClockSkewSeconds[0] * 1000, producerClockSkewSeconds[1] * 1000);
    scheduler.fault('producer-clock-skew', `key-${index}: ${Math.round(skewMs / 1000)} s`);
    return skewMs;
  }
}

/** How the poison fault names the queues it went to. */
function everyQueue(count: number): string {
  return count === 1 ? 'the queue' : count === 2 ? 'both queues' : `all ${count} queues`;
}
