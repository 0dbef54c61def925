import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { outboxEventOf } from '@exactly-once/runtime/aws/outbox-stream-record';
import {
  attemptsForBudget,
  ceilingBudgetSeconds,
  expectedBudgetSeconds,
  FIFO_CRASH_ALLOWANCE,
  fifoMaxReceiveCount,
  fullJitterBackoffSeconds,
  guaranteedBudgetSeconds,
  RETRY_BUDGET,
  retryBackoffSeconds,
} from '@exactly-once/runtime/consumer/retry-budget';
import { inConsumerOutage, parseFaultPlan } from '@exactly-once/runtime/faults/plan';

/** Pure pieces of the messaging half: retry backoff, the consumer-outage fault, the stream record reader. */

describe('the retry budget (one setting for the queues and the consumers)', () => {
  const budget = RETRY_BUDGET;

  test('the setting: base 2 s, cap 5 min, budget 15 min', () => {
    expect(budget).toEqual({ baseSeconds: 2, capSeconds: 300, budgetSeconds: 900 });
  });

  test.each([
    [1, 1, 2],
    [2, 2, 4],
    [5, 16, 32],
    [8, 128, 256],
    [9, 150, 300], // 512 capped at 300
    [40, 150, 300],
  ])('try %i waits between %i and %i s (equal jitter: half the ceiling is guaranteed)', (attempt, floor, ceiling) => {
    expect(retryBackoffSeconds(attempt, budget, () => 0)).toBe(floor);
    expect(retryBackoffSeconds(attempt, budget, () => 0.999_999_999)).toBe(ceiling);
    for (let r = 0; r < 1; r += 0.01) {
      const wait = retryBackoffSeconds(attempt, budget, () => r);
      expect(Number.isInteger(wait) && wait >= floor && wait <= ceiling).toBe(true);
    }
  });

  test('14 tries: 1005 s of backoff guaranteed before the last (>= 900 s), about 1508 s expected, 2010 s at most', () => {
    const tries = attemptsForBudget(budget);

    expect(tries).toBe(14);
    expect(guaranteedBudgetSeconds(tries, budget)).toBe(1 + 2 + 4 + 8 + 16 + 32 + 64 + 128 + 5 * 150);
    expect(guaranteedBudgetSeconds(tries, budget)).toBe(1005);
    expect(guaranteedBudgetSeconds(tries - 1, budget)).toBe(855); // 13 would fall short
    expect(expectedBudgetSeconds(tries, budget)).toBe(1507.5);
    expect(ceilingBudgetSeconds(tries, budget)).toBe(2010);
  });

  test('the guarantee holds however the jitter falls: the sum of real draws is never below it', () => {
    for (const r of [0, 0.3, 0.999_999]) {
      let waited = 0;
      for (let attempt = 1; attempt < 14; attempt++) waited += retryBackoffSeconds(attempt, budget, () => r);
      expect(waited).toBeGreaterThanOrEqual(900);
    }
  });

  test('the old settings (5 receives, base 2 s, full jitter) guaranteed nothing, and at most 30 s', () => {
    expect(ceilingBudgetSeconds(5, { baseSeconds: 2, capSeconds: 60 })).toBe(30);
    expect(guaranteedBudgetSeconds(5, { baseSeconds: 2, capSeconds: 60 })).toBeLessThan(900);
  });

  test('the FIFO backstop: tries x batch size receives + a crash allowance (150 for 14 tries of 10-record batches)', () => {
    expect(fifoMaxReceiveCount(14, 10)).toBe(14 * 10 + FIFO_CRASH_ALLOWANCE);
    expect(FIFO_CRASH_ALLOWANCE).toBe(10);
  });

  test('a backoff that guarantees no wait is refused; a 0 budget needs one try', () => {
    expect(() => attemptsForBudget({ baseSeconds: 0, capSeconds: 300, budgetSeconds: 900 })).toThrow(
      /guarantees no wait/,
    );
    expect(() => attemptsForBudget({ baseSeconds: 1, capSeconds: 1, budgetSeconds: 900 })).toThrow(
      /guarantees no wait/,
    );
    expect(attemptsForBudget({ ...budget, budgetSeconds: 0 })).toBe(1);
  });
});

describe('the consumer-outage fault', () => {
  test('is on until its ISO time, then off', () => {
    // A plan is read only before its expiry (see test/unit/faults.test.ts).
    const plan = parseFaultPlan(
      { consumerOutageUntil: '2030-01-01T00:02:00.000Z', expiresAt: '2030-01-01T01:00:00.000Z' },
      0,
      Date.parse('2030-01-01T00:00:00.000Z'),
    );

    expect(inConsumerOutage(plan, Date.parse('2030-01-01T00:01:59.999Z'))).toBe(true);
    expect(inConsumerOutage(plan, Date.parse('2030-01-01T00:02:00.000Z'))).toBe(false);
  });

  test('a value that is not a time turns it off', () => {
    for (const value of ['soon', 42, null]) {
      const plan = parseFaultPlan({ consumerOutageUntil: value, expiresAt: '1970-01-01T01:00:00.000Z' }, 0, 0);
      expect(inConsumerOutage(plan, 0)).toBe(false);
    }
  });
});

describe('fullJitterBackoffSeconds', () => {
  const options = { baseSeconds: 2, capSeconds: 60 };
  const top = () => 0.999_999_999;
  const bottom = () => 0;

  test.each([
    [1, 2],
    [2, 4],
    [3, 8],
    [4, 16],
    [5, 32],
    [6, 60], // 64 capped
    [7, 60],
  ])('attempt %i: at most min(cap, base * 2^(attempt-1)) = %i', (attempt, ceiling) => {
    expect(fullJitterBackoffSeconds(attempt, options, top)).toBe(ceiling);
  });

  test('at the bottom of the jitter the wait is 0, whatever the attempt', () => {
    for (const attempt of [1, 2, 5, 100]) expect(fullJitterBackoffSeconds(attempt, options, bottom)).toBe(0);
  });

  test('the jitter spreads over the whole range [0, ceiling], in whole seconds', () => {
    const values = [0, 0.1, 0.25, 0.5, 0.75, 0.9].map((r) => fullJitterBackoffSeconds(4, options, () => r));

    expect(values).toEqual([0, 1, 4, 8, 12, 15]);
    expect(values.every(Number.isInteger)).toBe(true);
  });

  test('stays within [0, ceiling] for any random value', () => {
    for (let i = 0; i < 1_000; i++) {
      const r = i / 1_000;
      const attempt = 1 + (i % 12);
      const value = fullJitterBackoffSeconds(attempt, options, () => r);
      expect(value).toBeGreaterThanOrEqual(0);
      expect(value).toBeLessThanOrEqual(Math.min(options.capSeconds, options.baseSeconds * 2 ** (attempt - 1)));
    }
  });

  test('a huge attempt count is capped, never Infinity or NaN', () => {
    expect(fullJitterBackoffSeconds(10_000, options, top)).toBe(60);
    expect(fullJitterBackoffSeconds(Number.MAX_SAFE_INTEGER, { baseSeconds: 1, capSeconds: 43_200 }, top)).toBe(43_200);
  });

  test('an attempt of 0 or less is treated as the first', () => {
    expect(fullJitterBackoffSeconds(0, options, top)).toBe(2);
    expect(fullJitterBackoffSeconds(-3, options, top)).toBe(2);
  });

  test('a base of 0 means no backoff (used by the integration tests)', () => {
    expect(fullJitterBackoffSeconds(5, { baseSeconds: 0, capSeconds: 60 }, top)).toBe(0);
  });

  test('uses Math.random by default', () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.5);

    expect(fullJitterBackoffSeconds(3, options)).toBe(4); // floor(0.5 * 9)

    jest.restoreAllMocks();
  });
});

describe('outboxEventOf (the relay reading a stream record)', () => {
  const event = {
    eventId: 'ord_1.placed',
    type: 'OrderPlaced',
    entityId: 'ord_1',
    version: 1,
    occurredAt: 'x',
    payload: { customerId: 'c', items: [{ sku: 'S', quantity: 1, unitPriceCents: 1 }], totalCents: 1 },
  };
  const record = (eventName: string, image?: Record<string, unknown>): DynamoDBRecord => ({
    eventName: eventName as DynamoDBRecord['eventName'],
    dynamodb: { SequenceNumber: '1', ...(image ? { NewImage: marshall(image) as never } : {}) },
  });

  test('an outbox INSERT yields its event', () => {
    expect(
      outboxEventOf(record('INSERT', { pk: 'ORDER#ord_1', sk: 'OUTBOX#ord_1.placed', entity: 'OUTBOX', event })),
    ).toEqual(event);
  });

  test.each([
    ['a MODIFY of an outbox item', record('MODIFY', { entity: 'OUTBOX', event })],
    ['a REMOVE', record('REMOVE')],
    ['an INSERT of an order', record('INSERT', { entity: 'ORDER', orderId: 'ord_1' })],
    ['an INSERT with no image', record('INSERT')],
    ['a TTL deletion (DynamoDB Local names it oddly)', record('UNKNOWN', { entity: 'OUTBOX', event })],
  ])('%s is not an outbox event', (_what, r) => {
    expect(outboxEventOf(r)).toBe('not-outbox');
  });

  test.each([
    ['no event', { entity: 'OUTBOX' }],
    ['an event without eventId', { entity: 'OUTBOX', event: { ...event, eventId: undefined } }],
    ['an event without entityId', { entity: 'OUTBOX', event: { ...event, entityId: 7 } }],
  ])('an outbox INSERT with %s is malformed', (_what, image) => {
    expect(outboxEventOf(record('INSERT', JSON.parse(JSON.stringify(image))))).toBe('malformed');
  });
});
