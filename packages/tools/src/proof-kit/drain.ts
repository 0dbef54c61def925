import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { PENDING_OUTBOX_INDEX, PENDING_SHARDS } from '@exactly-once/runtime/aws/outbox-table';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { consumerQueueUrls, requiredOutput } from '../stack';
import type { Target } from './target';

/**
 * Waits (bounded) until nothing is in flight: no undispatched outbox item, and
 * no message visible or in flight on any consumer's source queue (every
 * consumer of the list), twice in a row. Returns whether it drained, and what
 * was left if not. With `onProgress`, says what is left every `progressEveryMs`
 * (default 10 s), so a long drain under faults is not a silent terminal.
 */
export async function waitForDrain(
  target: Target,
  options: {
    timeoutMs: number;
    pollMs?: number;
    onPoll?: (state: DrainState) => void;
    onProgress?: (line: string) => void;
    progressEveryMs?: number;
    consumers?: readonly ConsumerSpec[];
  },
): Promise<{ drained: boolean; state: DrainState; waitedMs: number }> {
  const started = Date.now();
  let quietPolls = 0;
  const queues = consumerQueueUrls(target.outputs, options.consumers ?? target.domain.consumers);
  const queueUrls = queues.map((q) => q.queueUrl);
  const deadLetterUrls = queues.map((q) => q.deadLetterQueueUrl);
  const progressEveryMs = options.progressEveryMs ?? 10_000;
  let lastProgress = started;
  let state = await drainState(target, queueUrls);
  while (Date.now() - started < options.timeoutMs) {
    state = await drainState(target, queueUrls);
    options.onPoll?.(state);
    if (options.onProgress !== undefined && Date.now() - lastProgress >= progressEveryMs) {
      lastProgress = Date.now();
      const inDeadLetterQueues = await Promise.all(deadLetterUrls.map((url) => queueDepth(target, url))).then(
        (depths) => depths.reduce((sum, n) => sum + n, 0),
        () => undefined,
      );
      options.onProgress(drainProgressLine(state, Date.now() - started, options.timeoutMs, inDeadLetterQueues));
    }
    quietPolls = state.pendingOutbox === 0 && state.inFlightMessages === 0 ? quietPolls + 1 : 0;
    if (quietPolls >= 2) return { drained: true, state, waitedMs: Date.now() - started };
    await new Promise((r) => setTimeout(r, options.pollMs ?? 1_000));
  }
  return { drained: false, state, waitedMs: Date.now() - started };
}

export interface DrainState {
  pendingOutbox: number;
  /** Every message the source queues hold: `queued` and `received` together. */
  inFlightMessages: number;
  /** Waiting in the source queues (visible or delayed: a retry backing off). */
  queued?: number;
  /** Received and not yet deleted: being processed, or backing off after a failed try (its visibility pushed out). */
  received?: number;
}

async function drainState(target: Target, queueUrls: readonly string[]): Promise<DrainState> {
  const [pendingOutbox, ...counts] = await Promise.all([
    pendingOutboxCount(target),
    ...queueUrls.map((url) => queueCounts(target, url)),
  ]);
  const queued = counts.reduce((sum, c) => sum + c.visible + c.delayed, 0);
  const received = counts.reduce((sum, c) => sum + c.inFlight, 0);
  return { pendingOutbox, inFlightMessages: queued + received, queued, received };
}

/**
 * `draining: 12 queued, 3 in flight (being processed or backing off), 2 in DLQs, 0 outbox pending; 40 s of at most 180 s`: what the
 * drain still waits for, printed while it waits.
 */
export function drainProgressLine(
  state: DrainState,
  elapsedMs: number,
  timeoutMs: number,
  inDeadLetterQueues?: number,
): string {
  const queues =
    state.queued === undefined || state.received === undefined
      ? `${state.inFlightMessages} in the queues`
      : `${state.queued} queued, ${state.received} in flight (being processed or backing off)`;
  const dlq = inDeadLetterQueues === undefined ? '' : `, ${inDeadLetterQueues} in DLQs`;
  return `  draining: ${queues}${dlq}, ${state.pendingOutbox} outbox pending; ${Math.round(elapsedMs / 1000)} s of at most ${Math.round(timeoutMs / 1000)} s`;
}

/** Every message a queue still holds: visible, in flight or delayed. */
export async function queueDepth(target: Target, queueUrl: string): Promise<number> {
  const { visible, inFlight, delayed } = await queueCounts(target, queueUrl);
  return visible + inFlight + delayed;
}

export interface QueueCounts {
  visible: number;
  inFlight: number;
  delayed: number;
}

/** A queue's approximate message counts, from GetQueueAttributes. */
export async function queueCounts(target: Target, queueUrl: string): Promise<QueueCounts> {
  const { Attributes = {} } = await target.sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return {
    visible: Number(Attributes.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/** Outbox items not yet dispatched, from the sweeper's sparse index. */
export async function pendingOutboxCount(target: Target): Promise<number> {
  let total = 0;
  for (let shard = 0; shard < PENDING_SHARDS; shard++) {
    let startKey: Record<string, never> | undefined;
    do {
      const page = await target.dynamodb.send(
        new QueryCommand({
          TableName: requiredOutput(target.outputs, target.domain.outboxTableOutput),
          IndexName: PENDING_OUTBOX_INDEX,
          KeyConditionExpression: 'pendingShard = :s',
          ExpressionAttributeValues: { ':s': { S: String(shard) } },
          Select: 'COUNT',
          ExclusiveStartKey: startKey,
        }),
      );
      total += page.Count ?? 0;
      startKey = page.LastEvaluatedKey as Record<string, never> | undefined;
    } while (startKey !== undefined);
  }
  return total;
}
