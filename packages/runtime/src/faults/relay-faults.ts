import type { OutboxWiring } from '../outbox/ports';
import type { EventEnvelope } from '../envelope';
import type { EventPublisher } from '../outbox/ports';
import { crashProcess } from './crash';
import { roll, type FaultPlan } from './plan';
import { faultSourceFromEnv, planHolder, type FaultSource } from './source';

/**
 * The producer-resend fault around the relay's publisher: after a publish, each
 * event that went out is, by the plan's roll, published again through
 * `resender` as a brand-new message (a new message id, and a FIFO dedup id
 * other than the event id), as a producer that lost the first send's answer
 * would after FIFO's 5-minute dedup window. Consumers must apply it once.
 */
export class ResendingPublisher implements EventPublisher {
  constructor(
    private readonly inner: EventPublisher,
    private readonly resender: EventPublisher,
    private readonly plan: () => FaultPlan,
  ) {}

  async publish(events: readonly EventEnvelope[]): Promise<Set<string>> {
    const failed = await this.inner.publish(events);
    const plan = this.plan();
    const resends = events.filter((e) => !failed.has(e.eventId) && roll(plan.producerResend, plan));
    // A resend that fails changes nothing: the event already went out once.
    if (resends.length > 0) await this.resender.publish(resends);
    return failed;
  }
}

/**
 * The clock-skew fault around the relay's publisher: each event, by the plan's roll, goes out with its
 * `occurredAt` moved by `clockSkewSeconds`, as a producer whose clock is off would have stamped it.
 * Everything else (id, content, deduplication id) is the event's own.
 */
export class SkewingPublisher implements EventPublisher {
  constructor(
    private readonly inner: EventPublisher,
    private readonly plan: () => FaultPlan,
  ) {}

  publish(events: readonly EventEnvelope[]): Promise<Set<string>> {
    const plan = this.plan();
    const skewMs = (plan.clockSkewSeconds ?? 0) * 1000;
    if (skewMs === 0 || !((plan.clockSkew ?? 0) > 0)) return this.inner.publish(events);
    return this.inner.publish(
      events.map((event) =>
        roll(plan.clockSkew, plan)
          ? { ...event, occurredAt: new Date(Date.parse(event.occurredAt) + skewMs).toISOString() }
          : event,
      ),
    );
  }
}

/** The FIFO dedup id of a resent event: not the event id, so FIFO's dedup lets it through. */
export const resendDeduplicationId = (event: EventEnvelope): string => `${event.eventId}.resend`;

/**
 * The message attribute a resent event's message carries (value `true`), so the local runtime's host
 * can tell the resend fault's copies from the other ways an event arrives under a second message id
 * (the relay's retry after a crash, a redrive). Consumers ignore it.
 */
export const RESENT_BY_FAULT_ATTRIBUTE = 'resentByFault';

/**
 * The relay's faults, for the bundles built with fault injection only
 * (outbox-relay.ts): the resend decorator around its publisher, and a crash
 * after publishing and marking dispatched, before the stream checkpoint, so the
 * records are relayed again. The crash is rolled only when the invocation
 * dispatched something for the first time, so the retry goes through.
 */
export function relayFaults(options: { source?: FaultSource; crash?: (where: string) => never } = {}) {
  const current = planHolder(options.source ?? faultSourceFromEnv());
  const crash = options.crash ?? crashProcess;
  return {
    refresh: current.refresh,
    /** The relay's parts with its publisher decorated: resends go out under other FIFO dedup ids, stamps may be skewed. */
    wire<W extends OutboxWiring>(wiring: W): W {
      const resender = wiring.publisherWith({
        deduplicationId: resendDeduplicationId,
        attributes: { [RESENT_BY_FAULT_ATTRIBUTE]: 'true' },
      });
      const resending = new ResendingPublisher(wiring.publisher, resender, current.plan);
      return { ...wiring, publisher: new SkewingPublisher(resending, current.plan) };
    },
    afterRelay(firstDispatches: number): void {
      const plan = current.plan();
      if (firstDispatches > 0 && roll(plan.relayCrashAfterPublish, plan))
        crash('relay after publishing, before the checkpoint');
    },
  };
}
