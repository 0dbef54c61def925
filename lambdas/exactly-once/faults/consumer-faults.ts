import type { RecordWork } from '../consumer/record-work';
import type { ApplyOutcome } from '../inbox/ports';
import type { ExternalProvider } from '../provider/provider';
import { crashProcess } from './crash';
import { OutageProneProvider } from './outage-prone-provider';
import { inConsumerOutage, InjectedTransientError, roll } from './plan';
import { faultSourceFromEnv, planHolder, type FaultSource } from './source';

/** An event through the use case, within its record's work (deadline, lease); resolves what applying it did. */
export type Apply<E> = (event: E, work: RecordWork) => Promise<ApplyOutcome>;

/**
 * A consumer's faults, as decorators around its real parts, for the bundles
 * built with fault injection only (wiring/consumer-wiring.ts):
 * - `apply`: around the use case: a slow handler (sleeps, so the message's
 *   visibility can run out), a transient error, an outage of everything behind
 *   the consumer, and a crash after the effect committed, before the ack;
 * - `provider`: the provider-outage fault in front of an external provider;
 * `refresh()` reads the current plan once per invocation; `plan()` is the one read last.
 */
export function consumerFaults(
  consumer: string,
  options: { source?: FaultSource; sleep?: (ms: number) => Promise<void>; crash?: (where: string) => never } = {},
) {
  const current = planHolder(options.source ?? faultSourceFromEnv());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const crash = options.crash ?? crashProcess;
  return {
    refresh: current.refresh,
    apply<E extends { eventId: string }>(apply: Apply<E>): Apply<E> {
      return async (event, work) => {
        // The plan of this invocation: refresh() runs once before its records.
        const plan = current.plan();
        // Stands for a handler that outlives its visibility timeout (the fault runs shorten it). A slow
        // step past the record's deadline stops there, as an aborted call would.
        if (roll(plan.slowHandler, plan)) {
          await sleep((plan.slowHandlerSeconds ?? 0) * 1000);
          if (work.signal.aborted) throw work.signal.reason;
        }
        if (roll(plan.transientError, plan)) throw new InjectedTransientError(consumer);
        if (inConsumerOutage(plan)) throw new InjectedTransientError(`${consumer} (outage)`);
        const outcome = await apply(event, work);
        if (outcome === 'applied' && roll(plan.crashAfterEffect, plan))
          crash(`${consumer} after the effect of ${event.eventId}, before the ack`);
        return outcome;
      };
    },
    provider(inner: ExternalProvider, name: string): ExternalProvider {
      return new OutageProneProvider(inner, name, current.plan);
    },
    plan: current.plan,
  };
}

export type ConsumerFaults = ReturnType<typeof consumerFaults>;
