import { AsyncLocalStorage } from 'node:async_hooks';
import type { MessageControl } from '../consumer/ports';
import type { RecordWork } from '../consumer/record-work';
import type { ApplyOutcome } from '../inbox/ports';
import type { ExternalProvider } from '../provider/provider';
import { crashProcess } from './crash';
import { OutageProneProvider } from './outage-prone-provider';
import { inConsumerOutage, InjectedTransientError, roll } from './plan';
import { faultSourceFromEnv, planHolder, type FaultSource } from './source';

/** An event through the use case, within its record's work (deadline, lease); resolves what applying it did. */
export type Apply<E> = (event: E, work: RecordWork) => Promise<ApplyOutcome>;

/** What one try did that the crash fault is rolled on: whether a provider answered a call it made. */
interface TryWork {
  providerAnswered: boolean;
}

/**
 * A consumer's faults, as decorators around its real parts, for the bundles
 * built with fault injection only (wiring/consumer-wiring.ts):
 * - `apply`: around the use case: a slow handler (sleeps, so the message's
 *   visibility can run out), a transient error, an outage of everything behind
 *   the consumer, and a crash after the try that finished the event's work, before the ack;
 * - `provider`: the provider-outage fault in front of an external provider, which
 *   also tells the crash that the try's provider call was answered;
 * - `control`: the message control, with every backoff at most the plan's `backoffCapSeconds`
 *   (local fault runs), so chains of failures settle in seconds;
 * `refresh()` reads the current plan once per invocation; `plan()` is the one read last.
 */
export function consumerFaults(
  consumer: string,
  options: { source?: FaultSource; sleep?: (ms: number) => Promise<void>; crash?: (where: string) => never } = {},
) {
  const current = planHolder(options.source ?? faultSourceFromEnv());
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const crash = options.crash ?? crashProcess;
  // Per try, not per process: a batch's records run side by side, each in its own context.
  const thisTry = new AsyncLocalStorage<TryWork>();
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
        const tried: TryWork = { providerAnswered: false };
        const outcome = await thisTry.run(tried, () => apply(event, work));
        if (finishedTheWork(outcome, tried) && roll(plan.crashAfterEffect, plan))
          crash(`${consumer} after the effect of ${event.eventId}, before the ack`);
        return outcome;
      };
    },
    provider(inner: ExternalProvider, name: string): ExternalProvider {
      const outageProne = new OutageProneProvider(inner, name, current.plan);
      return {
        async send(idempotencyKey, payload, sendOptions) {
          await outageProne.send(idempotencyKey, payload, sendOptions);
          const tried = thisTry.getStore();
          if (tried !== undefined) tried.providerAnswered = true;
        },
      };
    },
    control(inner: MessageControl): MessageControl {
      return {
        changeVisibility: (receiptHandle, seconds) => {
          const cap = current.plan().backoffCapSeconds;
          return inner.changeVisibility(receiptHandle, cap === undefined ? seconds : Math.min(seconds, cap));
        },
        sendToDeadLetterQueue: (message) => inner.sendToDeadLetterQueue(message),
      };
    },
    plan: current.plan,
  };
}

export type ConsumerFaults = ReturnType<typeof consumerFaults>;

/**
 * Whether the try finished the event's work, so that a crash now is one after the effect committed and
 * before the ack: it applied the effect ('applied', its provider call included), or an earlier try
 * committed the effect and failed at the provider call, and this one made the owed call ('duplicate'
 * with an answered call). Under the provider's faults most events end the second way: rolled after
 * 'applied' alone, the crash seldom comes at all. A plain duplicate (a copy of an event already done)
 * or a stale event did no work of its own.
 */
function finishedTheWork(outcome: ApplyOutcome, tried: TryWork): boolean {
  return outcome === 'applied' || (outcome === 'duplicate' && tried.providerAnswered);
}
