import type { SQSEvent } from 'aws-lambda';
import type { ConsumerSettings } from '@exactly-once/runtime/consumer/consume-record';
import { fifoMaxReceiveCount, fullJitterBackoffSeconds } from '@exactly-once/runtime/consumer/retry-budget';

/**
 * Guard `retryBudget`: `budget` is the deployed one (RETRY_BUDGET: equal jitter, 14 tries, the FIFO
 * consumer's own try count); `seconds` is the one before it: 5 receives on both queues, full jitter
 * from 2 s capped at 60 s (FIFO) and 300 s, no try count, which a dependency outage of a minute outlasts.
 */
const OLD_MAX_RECEIVE_COUNT = 5;
const oldBackoff = (fifo: boolean) => ({ baseSeconds: 2, capSeconds: fifo ? 60 : 300 });

/** A source queue's maxReceiveCount, as packages/cdk/src/consumer-pipelines.ts derives it, or the old flat 5. */
export function maxReceiveCount(
  retryBudget: 'budget' | 'seconds',
  attempts: number,
  spec: { fifo: boolean; batchSize: number },
): number {
  if (retryBudget === 'seconds') return OLD_MAX_RECEIVE_COUNT;
  return spec.fifo ? fifoMaxReceiveCount(attempts, spec.batchSize) : attempts;
}

/**
 * The retry budget before the fix: full jitter on the receive count (which
 * may draw 0 s every time), no try count of the consumer's own.
 */
export function oldBudget(
  settings: ConsumerSettings,
  fifo: boolean,
  event: SQSEvent,
  random: () => number,
): ConsumerSettings {
  const old = oldBackoff(fifo);
  const receives = new Map(event.Records.map((r) => [r.receiptHandle, Number(r.attributes.ApproximateReceiveCount)]));
  const { control } = settings;
  return {
    ...settings,
    backoff: old,
    tryLimit: undefined,
    control: {
      changeVisibility: (handle, seconds) =>
        control.changeVisibility(
          handle,
          seconds === 0 ? 0 : fullJitterBackoffSeconds(receives.get(handle) ?? 1, old, random),
        ),
      sendToDeadLetterQueue: (message) => control.sendToDeadLetterQueue(message),
    },
  };
}
