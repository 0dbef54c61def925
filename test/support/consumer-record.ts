import type { ConsumerSettings } from '@exactly-once/runtime/consumer/consume-record';
import type { RecordWork } from '@exactly-once/runtime/consumer/record-work';

/**
 * A consumer's settings for a test that drives `consumeRecord` directly: its visibility changes and
 * DLQ sends go nowhere, a one-day horizon, the real clock.
 */
export const consumerSettingsFor = (consumer: string): ConsumerSettings => ({
  consumer,
  control: { changeVisibility: async () => undefined, sendToDeadLetterQueue: async () => undefined },
  backoff: { baseSeconds: 1, capSeconds: 300 },
  dedupeHorizonSeconds: 86_400,
  now: () => new Date(),
});

/** A record's work with a minute to go, its lease ten seconds past it, never aborted. */
export const aMinuteOfWork = (): RecordWork => ({
  signal: new AbortController().signal,
  deadline: Date.now() + 60_000,
  leaseUntil: Date.now() + 70_000,
  leaseHolder: 'test',
});
