import type { UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { attemptsForBudget, fifoMaxReceiveCount, RETRY_BUDGET } from '@exactly-once/runtime/consumer/retry-budget';
import { parseEnvelope, type EventEnvelope } from '@exactly-once/runtime/envelope';
import { thingHappened as happened, thingUndone as undone } from '../exactly-once/fixtures/probe-events';
import {
  deadLettered,
  deliver,
  failedIds,
  HORIZON_FOR_TESTS,
  loadProbeConsumer,
  sqsMessage as message,
  visibilityChanges,
  type ProbeConsumerName as ConsumerName,
  type ProbeHarness as Harness,
} from '../support/neutral-consumers';
import { IN_PROCESS_RETRY, withContentionRetries } from '@exactly-once/runtime/runtime/contention-retry';
import { UNBOUNDED_WORK } from '../support/record-work';
import { TEST_DEDUPE } from '../support/dedupe';

/**
 * The retry budget in the consumers, with the SDK mocked: contention retried
 * in-process, the FIFO consumer's own try count (so records skipped behind a
 * failing head cannot run out of receives untried), the all-fail batch, and
 * no visibility change while a try runs. The consumers are the neutral fixture's
 * `probe` (standard) and `probe-fifo` (FIFO), each loaded with the SDK mocked in
 * its own module registry (loadProbeConsumer).
 */

const EFFECTS_TABLE = 'effects-table';
const PROVIDER_TABLE = 'provider-log';
const TRIES = attemptsForBudget(RETRY_BUDGET); // 14
const QUEUE: Record<ConsumerName, string> = { 'probe-fifo': 'https://sqs/probe-fifo.fifo', probe: 'https://sqs/probe' };

async function load(name: ConsumerName): Promise<Harness> {
  return loadProbeConsumer(name, {
    EFFECTS_TABLE_NAME: EFFECTS_TABLE,
    PROVIDER_LOG_TABLE_NAME: PROVIDER_TABLE,
    INBOX_TTL_SECONDS: String(TEST_DEDUPE.claimTtlSeconds),
    DEDUPE_HORIZON_SECONDS: String(HORIZON_FOR_TESTS),
    QUEUE_URL: QUEUE[name],
    DEAD_LETTER_QUEUE_URL: `${QUEUE[name]}-dlq`,
    BACKOFF_BASE_SECONDS: String(RETRY_BUDGET.baseSeconds),
    BACKOFF_CAP_SECONDS: String(RETRY_BUDGET.capSeconds),
    RETRY_MAX_ATTEMPTS: String(TRIES),
  });
}

const harnesses = {} as Record<ConsumerName, Harness>;
/** The FIFO consumer's try counter, as the Effects table would keep it (TRIES#<consumer>#<messageId>). */
let tryCounts: Map<string, number>;

beforeAll(async () => {
  harnesses['probe-fifo'] = await load('probe-fifo');
  harnesses.probe = await load('probe');
});

beforeEach(() => {
  tryCounts = new Map();
  for (const h of Object.values(harnesses)) {
    h.doc.reset();
    h.sqs.reset();
    h.doc.on(h.docSdk.TransactWriteCommand).resolves({});
    h.doc.on(h.docSdk.UpdateCommand).callsFake((input: UpdateCommandInput) => {
      const pk = String(input.Key?.pk ?? '');
      if (!pk.startsWith('TRIES#')) return {}; // the provider log
      tryCounts.set(pk, (tryCounts.get(pk) ?? 0) + 1);
      return { Attributes: { tries: tryCounts.get(pk) } };
    });
    h.sqs.on(h.sqsSdk.SendMessageCommand).resolves({ MessageId: 'dlq-copy' });
    h.sqs.on(h.sqsSdk.ChangeMessageVisibilityCommand).resolves({});
  }
  // Jitter at its bottom: in-process retries wait 0 ms, queue backoffs their guaranteed floor.
  jest.spyOn(Math, 'random').mockReturnValue(0);
});

afterEach(() => jest.restoreAllMocks());

// ---------------------------------------------------------------- fixtures

const transactionCount = (h: Harness) => h.doc.commandCalls(h.docSdk.TransactWriteCommand).length;
const claimedEventIds = (h: Harness) =>
  h.doc
    .commandCalls(h.docSdk.TransactWriteCommand)
    .map((c) => String(c.args[0].input.TransactItems?.[0]?.Put?.Item?.eventId));

function cancellation(h: Harness, codes: string[]) {
  return new h.ddbSdk.TransactionCanceledException({
    message: `Transaction cancelled [${codes.join(', ')}]`,
    $metadata: { httpStatusCode: 400 },
    CancellationReasons: codes.map((Code) => ({ Code })),
  });
}

const internalError = (h: Harness) =>
  new h.ddbSdk.InternalServerError({ message: 'Internal server error', $metadata: {} });

// ---------------------------------------------------------------- in-process retries

describe.each(['probe-fifo', 'probe'] as const)('%s: contention is retried in-process first', (name) => {
  const h = () => harnesses[name];

  test('a TransactionConflict, then success: applied once, not failed, no visibility change', async () => {
    h()
      .doc.on(h().docSdk.TransactWriteCommand)
      .rejectsOnce(cancellation(h(), ['None', 'TransactionConflict']))
      .resolves({});

    const response = await deliver(h(), message(h(), happened('thing-1'), { messageId: 'm1' }));

    expect(response.batchItemFailures).toEqual([]);
    expect(transactionCount(h())).toBe(2);
    expect(claimedEventIds(h())).toEqual(['thing-1:happened', 'thing-1:happened']);
    expect(visibilityChanges(h())).toEqual([]);
    expect(deadLettered(h())).toEqual([]);
  });

  test('throttling, then success: applied once, not failed', async () => {
    h()
      .doc.on(h().docSdk.TransactWriteCommand)
      .rejectsOnce(new (h().ddbSdk.ProvisionedThroughputExceededException)({ message: 'slow down', $metadata: {} }))
      .resolves({});

    const response = await deliver(h(), message(h(), happened('thing-1'), { messageId: 'm1' }));

    expect(response.batchItemFailures).toEqual([]);
    expect(transactionCount(h())).toBe(2);
    expect(visibilityChanges(h())).toEqual([]);
  });

  test('conflicts on all 6 in-process tries: the message is failed with its queue backoff', async () => {
    h()
      .doc.on(h().docSdk.TransactWriteCommand)
      .rejects(cancellation(h(), ['TransactionConflict', 'None']));
    const record = message(h(), happened('thing-1'), { messageId: 'm1' });

    const response = await deliver(h(), record);

    expect(failedIds(response)).toEqual(['m1']);
    expect(transactionCount(h())).toBe(IN_PROCESS_RETRY.attempts);
    // First failed try: ceiling 2 s, guaranteed floor 1 s (jitter at its bottom).
    expect(visibilityChanges(h())).toEqual([
      { QueueUrl: QUEUE[name], ReceiptHandle: record.receiptHandle, VisibilityTimeout: 1 },
    ]);
    expect(deadLettered(h())).toEqual([]);
  });

  test('a ConditionalCheckFailed on the claim is a duplicate: one transaction, never retried, acked', async () => {
    h()
      .doc.on(h().docSdk.TransactWriteCommand)
      .rejects(cancellation(h(), ['ConditionalCheckFailed', 'None']));

    const response = await deliver(h(), message(h(), happened('thing-1'), { messageId: 'm1' }));

    expect(response.batchItemFailures).toEqual([]);
    expect(transactionCount(h())).toBe(1);
    expect(visibilityChanges(h())).toEqual([]);
  });

  test('a conflict next to a failed condition is not contention, and an internal error is not either: one try each', async () => {
    h()
      .doc.on(h().docSdk.TransactWriteCommand)
      .rejectsOnce(cancellation(h(), ['None', 'ConditionalCheckFailed', 'TransactionConflict']))
      .rejects(internalError(h()));

    const first = await deliver(h(), message(h(), happened('thing-1'), { messageId: 'm1' }));
    const second = await deliver(h(), message(h(), happened('thing-2'), { messageId: 'm2' }));

    expect(transactionCount(h())).toBe(2);
    expect([...failedIds(first), ...failedIds(second)]).toEqual(['m1', 'm2']);
  });
});

test('in-process waits are full jitter: at most base x 2^(try-1) ms each, capped, attempts - 1 of them', async () => {
  const waits: number[] = [];
  const top = () => 0.999_999;
  const contended = new Error('conflict');
  const policy = {
    ...IN_PROCESS_RETRY,
    attempts: 6,
    isContention: () => true,
    sleep: async (ms: number) => void waits.push(ms),
  };

  await expect(withContentionRetries(() => Promise.reject(contended), { ...policy, random: top })).rejects.toBe(
    contended,
  );
  await withContentionRetries(async () => 'done', { ...policy, random: top });

  expect(waits).toEqual([50, 100, 200, 400, 800]);
});

// ---------------------------------------------------------------- all-fail batch

describe('a batch in which every record fails', () => {
  test('probe: every id reported as a batch item failure, nothing thrown, each with its own backoff', async () => {
    const h = harnesses.probe;
    h.doc.on(h.docSdk.TransactWriteCommand).rejects(internalError(h));
    const records = [1, 2, 3].map((n) => message(h, happened(`thing-${n}`), { messageId: `m${n}`, receiveCount: n }));

    const response = await deliver(h, ...records);

    expect(failedIds(response).sort()).toEqual(['m1', 'm2', 'm3']);
    expect(visibilityChanges(h).map((v) => [v.ReceiptHandle, v.VisibilityTimeout])).toEqual(
      expect.arrayContaining([
        [records[0].receiptHandle, 1],
        [records[1].receiptHandle, 2],
        [records[2].receiptHandle, 4],
      ]),
    );
  });

  test('probe-fifo: every id reported, nothing thrown; the heads back off, the skipped records are released at once', async () => {
    const h = harnesses['probe-fifo'];
    h.doc.on(h.docSdk.TransactWriteCommand).rejects(internalError(h));
    const records = [
      message(h, happened('thing-1'), { messageId: 'a1' }),
      message(h, undone('thing-1'), { messageId: 'a2' }),
      message(h, happened('thing-2'), { messageId: 'b1' }),
      message(h, undone('thing-2'), { messageId: 'b2' }),
    ];

    const response = await deliver(h, ...records);

    expect(failedIds(response)).toEqual(['a1', 'a2', 'b1', 'b2']);
    expect(claimedEventIds(h)).toEqual(['thing-1:happened', 'thing-2:happened']); // the skipped were never tried
    const visibility = Object.fromEntries(visibilityChanges(h).map((v) => [v.ReceiptHandle, v.VisibilityTimeout]));
    expect(visibility).toEqual({
      [records[0].receiptHandle]: 1,
      [records[1].receiptHandle]: 0,
      [records[2].receiptHandle]: 1,
      [records[3].receiptHandle]: 0,
    });
  });
});

// ---------------------------------------------------------------- FIFO: own try count

describe('probe-fifo (FIFO): the retry budget counts tries, not receives', () => {
  const h = () => harnesses['probe-fifo'];

  test("the backoff follows the consumer's own try count: a record received 9 times but tried once waits as a first try", async () => {
    h().doc.on(h().docSdk.TransactWriteCommand).rejects(internalError(h()));
    const record = message(h(), happened('thing-1'), { messageId: 'm1', receiveCount: 9 });

    await deliver(h(), record);

    expect(tryCounts.get('TRIES#probe-fifo#m1')).toBe(1);
    expect(visibilityChanges(h()).map((v) => v.VisibilityTimeout)).toEqual([1]); // not the 9th try's 128 s floor
    expect(deadLettered(h())).toEqual([]);
  });

  test(`at its ${TRIES}th failed try the consumer moves the record to the DLQ with the last error, and acks it`, async () => {
    h().doc.on(h().docSdk.TransactWriteCommand).rejects(internalError(h()));
    tryCounts.set('TRIES#probe-fifo#m1', TRIES - 1);
    const record = message(h(), happened('thing-1'), { messageId: 'm1', receiveCount: 40 });

    const response = await deliver(h(), record);

    expect(response.batchItemFailures).toEqual([]);
    expect(visibilityChanges(h())).toEqual([]);
    expect(deadLettered(h())).toEqual([
      expect.objectContaining({
        QueueUrl: `${QUEUE['probe-fifo']}-dlq`,
        MessageBody: record.body,
        MessageGroupId: 'thing-1',
        MessageAttributes: expect.objectContaining({
          failureCause: { DataType: 'String', StringValue: 'RetryBudgetExhausted' },
          failureMessage: { DataType: 'String', StringValue: 'InternalServerError: Internal server error' },
          attempt: { DataType: 'String', StringValue: String(TRIES) },
        }),
      }),
    ]);
  });

  test('if the try counter cannot be written, the record backs off by its receive count and is never dead-lettered by the consumer', async () => {
    h().doc.on(h().docSdk.TransactWriteCommand).rejects(internalError(h()));
    h().doc.on(h().docSdk.UpdateCommand).rejects(internalError(h()));
    const record = message(h(), happened('thing-1'), { messageId: 'm1', receiveCount: 3 });

    const response = await deliver(h(), record);

    expect(failedIds(response)).toEqual(['m1']);
    expect(visibilityChanges(h()).map((v) => v.VisibilityTimeout)).toEqual([4]);
    expect(deadLettered(h())).toEqual([]);
  });
});

/**
 * Plays SQS FIFO for one message group: each round delivers the group's
 * pending records in order (a record's receive count goes up each time it is
 * delivered, tried or not), removes what the handler acked, and moves to the
 * DLQ whatever SQS would: a record received more than maxReceiveCount times.
 * Backoff waits are not played out; only counts matter here.
 */
async function playGroup(
  records: { body: EventEnvelope | string; messageId: string; groupId?: string }[],
  options: { rounds: number; maxReceiveCount: number },
) {
  const h = harnesses['probe-fifo'];
  const pending = records.map((r) => ({ ...r, receives: 0 }));
  const movedBySqs: string[] = [];
  for (let round = 0; round < options.rounds && pending.length > 0; round++) {
    for (const r of [...pending]) {
      if (r.receives >= options.maxReceiveCount) {
        movedBySqs.push(r.messageId);
        pending.splice(pending.indexOf(r), 1);
      }
    }
    for (const r of pending) r.receives += 1;
    const response = await deliver(
      h,
      ...pending.map((r) =>
        message(h, r.body, { messageId: r.messageId, receiveCount: r.receives, groupId: r.groupId }),
      ),
    );
    const failed = new Set(failedIds(response));
    for (const r of [...pending]) if (!failed.has(r.messageId)) pending.splice(pending.indexOf(r), 1);
  }
  return { pending, movedBySqs, receives: Object.fromEntries(pending.map((r) => [r.messageId, r.receives])) };
}

describe('probe-fifo (FIFO): records behind a failing head of group', () => {
  const h = () => harnesses['probe-fifo'];
  const maxReceiveCount = fifoMaxReceiveCount(TRIES, 10);

  test('a head failing transiently for longer than the budget: the consumer dead-letters it after its tries, then the records behind it are applied', async () => {
    h()
      .doc.on(h().docSdk.TransactWriteCommand)
      .callsFake((input) => {
        if (input.TransactItems?.[0]?.Put?.Item?.eventId === 'thing-1:happened') throw internalError(h());
        return {};
      });

    const { pending, movedBySqs } = await playGroup(
      [
        { body: happened('thing-1'), messageId: 'head' },
        { body: undone('thing-1'), messageId: 'next' },
      ],
      // Enough rounds for SQS's backstop to move both, were the consumer not counting its tries.
      { rounds: maxReceiveCount + 5, maxReceiveCount },
    );

    expect(pending).toEqual([]);
    expect(movedBySqs).toEqual([]); // nothing dead-lettered by receive count
    expect(
      deadLettered(h()).map((d) => [
        d.MessageAttributes?.failureCause?.StringValue,
        d.MessageAttributes?.originalMessageId?.StringValue,
      ]),
    ).toEqual([['RetryBudgetExhausted', 'head']]);
    expect(tryCounts.get('TRIES#probe-fifo#head')).toBe(TRIES);
    expect(tryCounts.has('TRIES#probe-fifo#next')).toBe(false); // skipped TRIES times, never counted as a try
    const claims = claimedEventIds(h());
    expect(claims.filter((e) => e === 'thing-1:happened')).toHaveLength(TRIES);
    expect(claims.at(-1)).toBe('thing-1:undone'); // tried after the head left, and applied
  });

  test('a head failing transiently for a while, then recovering: all applied in order, nothing dead-lettered', async () => {
    let headFailures = TRIES - 1;
    h()
      .doc.on(h().docSdk.TransactWriteCommand)
      .callsFake((input) => {
        if (input.TransactItems?.[0]?.Put?.Item?.eventId === 'thing-1:happened' && headFailures-- > 0)
          throw internalError(h());
        return {};
      });

    const { pending, movedBySqs } = await playGroup(
      [
        { body: happened('thing-1'), messageId: 'head' },
        { body: undone('thing-1'), messageId: 'next' },
      ],
      { rounds: 3 * TRIES, maxReceiveCount },
    );

    expect(pending).toEqual([]);
    expect(movedBySqs).toEqual([]);
    expect(deadLettered(h())).toEqual([]);
    expect(claimedEventIds(h()).slice(-2)).toEqual(['thing-1:happened', 'thing-1:undone']);
  });

  test('a permanent-poison head goes to the DLQ at once with its cause; the record behind it is applied in the same batch', async () => {
    const { pending } = await playGroup(
      [
        // In the group of the record behind it.
        { body: '{"type":"ThingHappened","entityId":"thing-1"}', messageId: 'poison', groupId: 'thing-poison' },
        { body: undone('thing-poison'), messageId: 'next' },
      ],
      { rounds: 2, maxReceiveCount },
    );

    expect(pending).toEqual([]);
    expect(deadLettered(h()).map((d) => d.MessageAttributes?.failureCause?.StringValue)).toEqual(['SchemaViolation']);
    expect(claimedEventIds(h())).toEqual(['thing-poison:undone']);
  });
});

// ---------------------------------------------------------------- no heartbeat

describe('no visibility heartbeat', () => {
  afterEach(() => jest.useRealTimers());

  test("a try that runs for Lambda's longest timeout (15 min) changes no visibility; a failure then sets only its backoff", async () => {
    jest.useFakeTimers();
    const { consumeRecord } = await import('@exactly-once/runtime/consumer/consume-record');
    const control = {
      changeVisibility: jest.fn(async () => undefined),
      sendToDeadLetterQueue: jest.fn(async () => undefined),
    };
    let fail: (error: Error) => void = () => undefined;
    const work = new Promise<'applied'>((_, reject) => (fail = reject));
    const record = message(harnesses.probe, happened('thing-1'), { messageId: 'm1', receiveCount: 2 });

    const outcome = consumeRecord(
      record,
      {
        consumer: 'probe',
        control,
        backoff: RETRY_BUDGET,
        dedupeHorizonSeconds: HORIZON_FOR_TESTS,
        now: () => new Date(),
      },
      parseEnvelope,
      () => work,
      UNBOUNDED_WORK,
    );
    await jest.advanceTimersByTimeAsync(15 * 60 * 1000);
    const duringTheTry = control.changeVisibility.mock.calls.length;
    fail(new Error('dependency down'));
    await expect(outcome).rejects.toThrow('dependency down');
    await jest.advanceTimersByTimeAsync(15 * 60 * 1000);

    expect(duringTheTry).toBe(0);
    expect(control.changeVisibility.mock.calls).toEqual([[record.receiptHandle, 2]]); // try 2: floor of 4 s
  });
});
