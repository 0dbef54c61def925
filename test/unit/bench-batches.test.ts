import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { driveBatches, powertoolsBatchHandler, sqsBatches } from '@exactly-once/tools/bench/batches';
import { benchEvents } from '@exactly-once/tools/bench/events';

/**
 * The bench's consumer comparison as Lambda runs it: SQS batches of 10 handed to a handler, a few
 * invocations at once, and each answer's partial batch failures collected; the plain and Powertools
 * consumers' handler runs a batch's records side by side, as the mechanism's standard consumer does.
 */
describe('bench batch driver', () => {
  it('hands every record to the handler once, 10 to a batch, and reports the records the handler failed', async () => {
    const events = benchEvents('run', 25);
    const batches = sqsBatches(events, 10, 'run');
    const seen: string[] = [];
    const sizes: number[] = [];
    // Fails every record whose message id ends in 3: a partial batch response, as a consumer gives it.
    const handler = async (event: SQSEvent) => {
      sizes.push(event.Records.length);
      seen.push(...event.Records.map((r) => r.messageId));
      return {
        batchItemFailures: event.Records.filter((r) => r.messageId.endsWith('3')).map((r) => ({
          itemIdentifier: r.messageId,
        })),
      };
    };

    const report = await driveBatches(handler, batches, { concurrency: 2, invocationMs: 10_000 });

    expect(sizes.sort((a, b) => b - a)).toEqual([10, 10, 5]);
    expect(seen.sort()).toEqual(events.map((_, n) => `run-${n}`).sort());
    expect(report).toMatchObject({ batches: 3, records: 25 });
    expect(report.failed.sort()).toEqual(['run-13', 'run-23', 'run-3']);
  });

  it('gives each invocation a Lambda context with the time it is given left', async () => {
    const remaining: number[] = [];
    const handler = async (_event: SQSEvent, context: { getRemainingTimeInMillis(): number }) => {
      remaining.push(context.getRemainingTimeInMillis());
      return { batchItemFailures: [] };
    };

    await driveBatches(handler, sqsBatches(benchEvents('ctx', 3), 10, 'ctx'), { concurrency: 1, invocationMs: 30_000 });

    expect(remaining).toHaveLength(1);
    expect(remaining[0]).toBeGreaterThan(20_000);
    expect(remaining[0]).toBeLessThanOrEqual(30_000);
  });

  it('refuses a batch size that is not a whole number of at least 1', () => {
    expect(() => sqsBatches(benchEvents('bad', 3), 0, 'bad')).toThrow('a batch size is a whole number >= 1, got 0');
  });
});

describe("the plain and Powertools consumers' batch handler", () => {
  it('runs every record of a batch side by side and reports only the failed one', async () => {
    const events = benchEvents('side', 10);
    const [batch] = sqsBatches(events, 10, 'side');
    let inFlight = 0;
    let most = 0;
    let release!: () => void;
    const allStarted = new Promise<void>((resolve) => (release = resolve));
    // Each record waits until all ten have started: run one at a time, the first would wait forever.
    const handler = powertoolsBatchHandler(async (event) => {
      inFlight++;
      most = Math.max(most, inFlight);
      if (most === 10) release();
      await allStarted;
      inFlight--;
      if (event.entityId === 'side-e4') throw new Error('this record fails');
    });

    const answer = await handler(batch, { getRemainingTimeInMillis: () => 10_000 } as never);

    expect(most).toBe(10);
    expect(answer.batchItemFailures).toEqual([{ itemIdentifier: 'side-4' }]);
  });

  it('hands the record handler the event the body carries and the record itself', async () => {
    const [event] = benchEvents('body', 1);
    const [batch] = sqsBatches([event], 10, 'body');
    const got: { eventId: string; record: SQSRecord }[] = [];
    const handler = powertoolsBatchHandler(async (e, record) => void got.push({ eventId: e.eventId, record }));

    await handler(batch, { getRemainingTimeInMillis: () => 10_000 } as never);

    expect(got).toEqual([{ eventId: event.eventId, record: batch.Records[0] }]);
  });
});
