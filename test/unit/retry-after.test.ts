import { createServer, type ServerResponse, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SQSRecord } from 'aws-lambda';
import { HttpProvider } from '@exactly-once/runtime/aws/http-provider';
import {
  attemptsForBudget,
  guaranteedBudgetSeconds,
  honourRetryHint,
  RETRY_BUDGET,
  retryBackoffSeconds,
} from '@exactly-once/runtime/consumer/retry-budget';
import { retryAfterSecondsOf, RetryLater } from '@exactly-once/runtime/errors';
import { DeadlineExceeded, type RecordWork } from '@exactly-once/runtime/consumer/record-work';
import type { ConsumerSettings } from '@exactly-once/runtime/consumer/consume-record';
import { parseEnvelope, type EventEnvelope } from '@exactly-once/runtime/envelope';
import type { ApplyOutcome } from '@exactly-once/runtime/inbox/ports';
import { HORIZON_FOR_TESTS, sqsMessage } from '../support/neutral-consumers';
import { useUnitEnvironment } from '../support/handlers';
import { thingHappened } from '../exactly-once/fixtures/probe-events';
import { recordWork, UNBOUNDED_WORK } from '../support/record-work';

/**
 * A transient error's backoff hint (RetryLater: a provider's Retry-After, or
 * its 409 "still running that key") in the consumer's backoff: the wait is the
 * longer of the drawn backoff and the hint, never above the cap, so the retry
 * budget is neither shortened nor stretched past one cap per wait. The
 * consumer is called directly (consumeRecord) with a mocked message control;
 * the last tests put the HTTP provider, against a local server, in front of it.
 */

let consumeRecord: typeof import('@exactly-once/runtime/consumer/consume-record').consumeRecord;

beforeAll(async () => {
  useUnitEnvironment(); // before the logger and metrics load
  ({ consumeRecord } = await import('@exactly-once/runtime/consumer/consume-record'));
});

beforeEach(() => jest.spyOn(Math, 'random').mockReturnValue(0)); // every draw at its guaranteed floor
afterEach(() => jest.restoreAllMocks());

// ---------------------------------------------------------------- fixtures

const STANDARD = { name: 'probe', fifo: false };
const FIFO = { name: 'probe-fifo', fifo: true };
const TRIES = attemptsForBudget(RETRY_BUDGET); // 14

function settings(overrides: Partial<ConsumerSettings> = {}) {
  const control = {
    changeVisibility: jest.fn(async (_receiptHandle: string, _seconds: number) => undefined),
    sendToDeadLetterQueue: jest.fn(async (_message: { attributes: Record<string, string> }) => undefined),
  };
  const consumer: ConsumerSettings = {
    consumer: 'probe',
    control,
    backoff: RETRY_BUDGET,
    dedupeHorizonSeconds: HORIZON_FOR_TESTS,
    now: () => new Date(),
    ...overrides,
  };
  return { consumer, control };
}

function failingWith(error: unknown) {
  return async (): Promise<ApplyOutcome> => {
    throw error;
  };
}

function consume(
  record: SQSRecord,
  consumer: ConsumerSettings,
  apply: (event: EventEnvelope, work: RecordWork) => Promise<ApplyOutcome>,
  work: RecordWork = UNBOUNDED_WORK,
) {
  return consumeRecord(record, consumer, parseEnvelope, apply, work).then(
    (outcome) => ({ outcome, error: undefined }),
    (error: unknown) => ({ outcome: undefined, error }),
  );
}

// ---------------------------------------------------------------- the rule

describe('honourRetryHint: max(draw, hint), at most the cap', () => {
  test.each([
    [1, 30, 30], // a hint longer than the draw lengthens the wait
    [16, 3, 16], // a shorter one never shortens it
    [1, 3_600, 300], // a hint above the cap gets the cap
    [150, 3_600, 300],
    [1, 2.2, 3], // rounded up to whole seconds
    [1, 0, 1],
    [1, undefined, 1],
    [1, Number.NaN, 1],
    [1, Number.POSITIVE_INFINITY, 1],
  ])('draw %p s, hint %p s: waits %p s', (draw, hint, wait) => {
    const cap = { capSeconds: RETRY_BUDGET.capSeconds };

    const seconds = honourRetryHint(draw, hint, cap);

    expect(seconds).toBe(wait);
  });

  test('whatever the hints, every wait stays between its floor and the cap, and the guaranteed budget holds', () => {
    const hints = [undefined, 0, 5, 45, 299, 301, 86_400, 2.5, undefined, 7, 1_000, 3, 120];
    const draws = hints.map((_, n) => retryBackoffSeconds(n + 1, RETRY_BUDGET, () => 0));

    const waits = draws.map((draw, n) => honourRetryHint(draw, hints[n], RETRY_BUDGET));

    waits.forEach((wait, n) => {
      expect(wait).toBeGreaterThanOrEqual(draws[n]);
      expect(wait).toBeLessThanOrEqual(RETRY_BUDGET.capSeconds);
    });
    expect(waits.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(guaranteedBudgetSeconds(TRIES, RETRY_BUDGET));
    expect(waits.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual((TRIES - 1) * RETRY_BUDGET.capSeconds);
  });

  test('retryAfterSecondsOf: the RetryLater itself or on the cause chain; nothing else carries a hint', () => {
    const direct = new RetryLater(30, 'busy');
    const wrapped = new Error('use case failed', { cause: new Error('adapter', { cause: new RetryLater(7, 'busy') }) });

    const hints = [direct, wrapped, new Error('plain'), 'a string', new RetryLater(-1, 'bad'), undefined].map(
      retryAfterSecondsOf,
    );

    expect(hints).toEqual([30, 7, undefined, undefined, undefined, undefined]);
  });
});

// ---------------------------------------------------------------- in the consumer

describe('the consumer backs a failed record off by the hint', () => {
  test('a RetryLater of 30 s on try 1 (floor 1 s): visibility 30 s, the error rethrown', async () => {
    const { consumer, control } = settings();
    const record = sqsMessage(STANDARD, thingHappened('thing-1'), { receiveCount: 1 });
    const busy = new RetryLater(30, 'provider answered 429');

    const { error } = await consume(record, consumer, failingWith(busy));

    expect(error).toBe(busy);
    expect(control.changeVisibility.mock.calls).toEqual([[record.receiptHandle, 30]]);
    expect(control.sendToDeadLetterQueue).not.toHaveBeenCalled();
  });

  test('a hint shorter than the backoff of the try (try 5, floor 16 s, hint 3 s): the backoff', async () => {
    const { consumer, control } = settings();
    const record = sqsMessage(STANDARD, thingHappened('thing-1'), { receiveCount: 5 });

    await consume(record, consumer, failingWith(new RetryLater(3, 'provider answered 409')));

    expect(control.changeVisibility.mock.calls).toEqual([[record.receiptHandle, 16]]);
  });

  test('a hint of an hour: the cap (300 s), not the hint', async () => {
    const { consumer, control } = settings();
    const record = sqsMessage(STANDARD, thingHappened('thing-1'), { receiveCount: 1 });

    await consume(record, consumer, failingWith(new RetryLater(3_600, 'provider answered 503')));

    expect(control.changeVisibility.mock.calls).toEqual([[record.receiptHandle, 300]]);
  });

  test('a hint wrapped in another error is still honoured', async () => {
    const { consumer, control } = settings();
    const record = sqsMessage(STANDARD, thingHappened('thing-1'), { receiveCount: 1 });
    const wrapped = new Error('provider call failed', { cause: new RetryLater(45, 'provider answered 429') });

    await consume(record, consumer, failingWith(wrapped));

    expect(control.changeVisibility.mock.calls).toEqual([[record.receiptHandle, 45]]);
  });

  test('FIFO, at its last try: a hint extends no budget, the record is dead-lettered as RetryBudgetExhausted', async () => {
    const counter = { recordFailedTry: jest.fn(async () => TRIES) };
    const { consumer, control } = settings({
      consumer: 'probe-fifo',
      tryLimit: { maxAttempts: TRIES, counter },
    });
    const record = sqsMessage(FIFO, thingHappened('thing-1'), { receiveCount: 20 });

    const { outcome } = await consume(record, consumer, failingWith(new RetryLater(60, 'provider answered 429')));

    expect(outcome).toBe('dead-lettered');
    expect(control.changeVisibility).not.toHaveBeenCalled();
    expect(control.sendToDeadLetterQueue.mock.calls[0][0].attributes).toMatchObject({
      failureCause: 'RetryBudgetExhausted',
      attempt: String(TRIES),
    });
  });
});

// ---------------------------------------------------------------- the HTTP provider in front of the consumer

describe('the HTTP provider through the consumer', () => {
  let server: Server;
  let endpoint: string;
  let answer: (response: ServerResponse) => void;

  beforeAll(async () => {
    server = createServer((request, response) => {
      request.resume();
      request.on('end', () => answer(response.setHeader('Connection', 'close')));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => setTimeout(resolve, 20)); // the client sees its sockets closed
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const providerCall = (event: EventEnvelope, work: RecordWork) =>
    new HttpProvider({ name: 'probe', endpoint, apiKey: () => 'k' })
      .send(`probe:${event.eventId}`, { eventId: event.eventId }, { signal: work.signal })
      .then((): ApplyOutcome => 'applied');

  test("a 429 with Retry-After: 45 sets the record's visibility to 45 s", async () => {
    answer = (response) => response.writeHead(429, { 'Retry-After': '45' }).end();
    const { consumer, control } = settings();
    const record = sqsMessage(STANDARD, thingHappened('thing-1'), { receiveCount: 1 });

    const { error } = await consume(record, consumer, providerCall);

    expect(error).toBeInstanceOf(RetryLater);
    expect(control.changeVisibility.mock.calls).toEqual([[record.receiptHandle, 45]]);
  });

  test('a 422 dead-letters the record at once with the cause ProviderRejected', async () => {
    answer = (response) => response.writeHead(422).end('{"error":"key reused with another payload"}');
    const { consumer, control } = settings();
    const record = sqsMessage(STANDARD, thingHappened('thing-1'), { receiveCount: 1 });

    const { outcome } = await consume(record, consumer, providerCall);

    expect(outcome).toBe('dead-lettered');
    expect(control.changeVisibility).not.toHaveBeenCalled();
    expect(control.sendToDeadLetterQueue.mock.calls[0][0].attributes).toMatchObject({
      failureCause: 'ProviderRejected',
      failureMessage: expect.stringContaining('422'),
    });
  });

  test("a provider that never answers, cut by the record's deadline: DeadlineExceeded, the try's own backoff", async () => {
    answer = () => undefined;
    const { consumer, control } = settings();
    const record = sqsMessage(STANDARD, thingHappened('thing-1'), { receiveCount: 2 });
    const { work, controller } = recordWork({ deadlineMs: 100 });
    setTimeout(() => controller.abort(new DeadlineExceeded(work.deadline)), 100);

    const { error } = await consume(record, consumer, providerCall, work);

    expect(error).toBeInstanceOf(DeadlineExceeded);
    expect(control.changeVisibility.mock.calls).toEqual([[record.receiptHandle, 2]]); // try 2: floor of 4 s
  });
});
