import {
  TransactionCanceledException,
  TransactionInProgressException,
  ThrottlingException,
} from '@aws-sdk/client-dynamodb';
import { GetCommand, TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws/entity-effect-ledger';
import { InboxLedger, type TransactItem } from '@exactly-once/runtime/aws/inbox-ledger';
import { inboxKey } from '@exactly-once/runtime/aws/inbox-table';
import { clientRequestToken, transactionSender } from '@exactly-once/runtime/aws/transaction-token';
import { isContention } from '@exactly-once/runtime/aws/transient-errors';
import type { RecordWork } from '@exactly-once/runtime/consumer/record-work';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { applyEntityEffect } from '@exactly-once/runtime/inbox/entity-effect';
import { IN_PROCESS_RETRY } from '@exactly-once/runtime/runtime/contention-retry';
import type { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import { recordWork } from '../support/record-work';
import { CONSUMER, memoryEntityConsumer, TABLE, thing } from '../support/memory-entity-consumer';

/**
 * A ledger transaction's ClientRequestToken changes only after a definite cancellation: an answer
 * that leaves the outcome unknown (TransactionInProgressException: the same request still running)
 * is retried under the same token, so an effect this try committed is reported applied, not a
 * duplicate of itself; and a failed claim whose lease holder is this try's own is that commit.
 * On the in-memory DynamoDB, which keeps tokens as DynamoDB does (its contract suites hold it to
 * DynamoDB Local).
 */

const IN_PROCESS = { ...IN_PROCESS_RETRY, isContention, sleep: async () => undefined };

/** A client that commits the first transaction and answers it TransactionInProgressException, as a retry of a lost answer meets. */
function inProgressOnce(db: MemoryDynamoDb): DynamoDBDocumentClient & { answered: number } {
  const client = {
    answered: 0,
    send: async (command: unknown) => {
      const answer = await db.send(command);
      if (command instanceof TransactWriteCommand && client.answered === 0) {
        client.answered += 1;
        throw new TransactionInProgressException({ message: 'Transaction is in progress', $metadata: {} });
      }
      return answer;
    },
  };
  return client as unknown as DynamoDBDocumentClient & { answered: number };
}

describe('TransactionInProgressException, then the retry', () => {
  test('in a consumer (its record work, in-process retries): reported applied, counted once, and the provider called once', async () => {
    const c = memoryEntityConsumer();
    const client = inProgressOnce(c.db);
    const ledger = new DynamoDbEntityEffectLedger(client, {
      consumer: CONSUMER,
      tableName: TABLE,
      inboxTtlSeconds: 86_400,
      contention: IN_PROCESS,
    });
    const tally = { committed: false, owedCallCompleted: false };
    const work: RecordWork = { ...recordWork().work, tally };
    const event = thing('thing-1');

    const outcome = await applyEntityEffect(event, { ...c.deps, ledger }, work);

    expect(client.answered).toBe(1);
    expect(outcome).toBe('applied');
    expect(tally.committed).toBe(true);
    expect(c.appliedCount('thing-1')).toBe(1);
    expect(c.provider.performed).toEqual([`probe:${event.eventId}`]);
  });

  test('without a record (no lease holder stored): the retry under the same token is answered as the commit it was', async () => {
    const c = memoryEntityConsumer();
    const client = inProgressOnce(c.db);
    const ledger = new DynamoDbEntityEffectLedger(client, {
      consumer: CONSUMER,
      tableName: TABLE,
      inboxTtlSeconds: 86_400,
      contention: IN_PROCESS,
    });

    const result = await ledger.apply(thing('thing-2'));

    expect(client.answered).toBe(1);
    expect(result.outcome).toBe('applied');
    expect(c.appliedCount('thing-2')).toBe(1);
  });

  test("a use case that runs the whole ledger call again (a new transaction, a new token): the claim holds this try's lease holder, so it is applied, not a duplicate", async () => {
    const c = memoryEntityConsumer();
    let tick = 0;
    // A clock that moves between the two calls, so the second transaction's items (claimedAt) differ.
    const ledger = new DynamoDbEntityEffectLedger(inProgressOnce(c.db), {
      consumer: CONSUMER,
      tableName: TABLE,
      inboxTtlSeconds: 86_400,
      now: () => new Date(Date.parse('2030-01-01T00:00:00Z') + (tick += 1_000)),
    });
    const tally = { committed: false, owedCallCompleted: false };
    const work: RecordWork = { ...recordWork().work, tally };
    const event = thing('thing-3');
    const first = ledger.apply(event, work);
    await expect(first).rejects.toBeInstanceOf(TransactionInProgressException);

    const again = await ledger.apply(event, work);

    expect(again).toMatchObject({ outcome: 'applied', providerCallPending: true });
    expect(tally.committed).toBe(true);
    expect(c.appliedCount('thing-3')).toBe(1);
  });

  test("another try's claim (another holder) is still a duplicate", async () => {
    const c = memoryEntityConsumer();
    const event = thing('thing-4');
    await c.ledger.apply(event, recordWork({ leaseHolder: 'first-try' }).work);

    const copy = await c.ledger.apply(event, recordWork({ leaseHolder: 'second-try' }).work);

    expect(copy.outcome).toBe('duplicate');
    expect(c.appliedCount('thing-4')).toBe(1);
  });
});

describe('the token: the same until a definite cancellation', () => {
  /** A client that answers each send with the next of `answers` (an error is thrown) and keeps each send's token. */
  function scripted(answers: unknown[]) {
    const tokens: (string | undefined)[] = [];
    const client = {
      send: async (command: TransactWriteCommand) => {
        tokens.push(command.input.ClientRequestToken);
        const answer = answers.shift();
        if (answer instanceof Error) throw answer;
        return answer;
      },
    } as unknown as DynamoDBDocumentClient;
    return { client, tokens };
  }
  const items: TransactItem[] = [{ Put: { TableName: TABLE, Item: { pk: 'a', sk: 'a' } } }];
  const cancelled = new TransactionCanceledException({
    message: 'cancelled',
    $metadata: {},
    CancellationReasons: [{ Code: 'TransactionConflict' }],
  });

  test.each([
    ['TransactionInProgressException', new TransactionInProgressException({ message: 'in progress', $metadata: {} })],
    ['a throttled answer', new ThrottlingException({ message: 'slow down', $metadata: {} })],
    ['a lost answer', Object.assign(new Error('socket hang up'), { name: 'TimeoutError' })],
  ])('after %s the retry carries the same token', async (_what, unknownOutcome) => {
    const { client, tokens } = scripted([unknownOutcome, {}]);
    const send = transactionSender(client, items, 'holder', undefined);

    await expect(send()).rejects.toBe(unknownOutcome);
    await send();

    expect(tokens[1]).toBe(tokens[0]);
  });

  test('after a cancellation (nothing was written) the next send is another request, under another token', async () => {
    const { client, tokens } = scripted([cancelled, {}]);
    const send = transactionSender(client, items, 'holder', undefined);

    await expect(send()).rejects.toBe(cancelled);
    await send();

    expect(tokens[1]).not.toBe(tokens[0]);
    expect(tokens.every((t) => t !== undefined && t.length <= 36)).toBe(true);
  });
});

describe('the claim is read before the rest of a cancellation', () => {
  test('a duplicate whose effect item is refused as invalid (ValidationError beside the claim ConditionalCheckFailed) is the duplicate it is, not WriteRejected', async () => {
    const event = thing('thing-5');
    const entry = {
      ...inboxKey(CONSUMER, event.eventId),
      eventId: event.eventId,
      claimedAt: new Date().toISOString(),
      providerCallDoneAt: new Date().toISOString(),
    };
    const client = {
      send: async () => {
        throw new TransactionCanceledException({
          message: 'Transaction cancelled [ConditionalCheckFailed, ValidationError]',
          $metadata: {},
          CancellationReasons: [
            { Code: 'ConditionalCheckFailed', Item: marshall(entry) },
            { Code: 'ValidationError', Message: 'Item size has exceeded the maximum allowed size' },
          ],
        });
      },
    } as unknown as DynamoDBDocumentClient;
    const ledger = new DynamoDbEntityEffectLedger(client, {
      consumer: CONSUMER,
      tableName: TABLE,
      inboxTtlSeconds: 60,
    });

    const result = await ledger.apply(event, recordWork().work);

    expect(result).toMatchObject({ outcome: 'duplicate', providerCallPending: false });
  });

  test('a ValidationError with the claim free is still WriteRejected, at once', async () => {
    const client = {
      send: async () => {
        throw new TransactionCanceledException({
          message: 'Transaction cancelled [None, ValidationError]',
          $metadata: {},
          CancellationReasons: [{ Code: 'None' }, { Code: 'ValidationError' }],
        });
      },
    } as unknown as DynamoDBDocumentClient;
    const ledger = new DynamoDbEntityEffectLedger(client, {
      consumer: CONSUMER,
      tableName: TABLE,
      inboxTtlSeconds: 60,
    });

    await expect(ledger.apply(thing('thing-6'), recordWork().work)).rejects.toMatchObject({
      permanentCause: 'WriteRejected',
    });
  });
});

/** A ledger whose effect item holds a BigInt: a DynamoDB number the document client marshals as it is. */
class AmountLedger extends InboxLedger {
  credit(event: EventEnvelope, amount: bigint, work?: RecordWork) {
    return this.transact(
      event,
      [{ Put: { TableName: TABLE, Item: { pk: `AMOUNT#${event.entityId}`, sk: 'AMOUNT', amount } } }],
      work,
    );
  }
}

test('an effect item holding a BigInt is applied once on its first try, and its copy is a duplicate: the token hashes it by value', async () => {
  const c = memoryEntityConsumer();
  const ledger = new AmountLedger(c.documents, { consumer: CONSUMER, tableName: TABLE, inboxTtlSeconds: 60 });
  const event = thing('thing-7');
  const amount = 2n ** 64n + 1n;

  const outcomes = [
    (await ledger.credit(event, amount, recordWork({ leaseHolder: 'a' }).work)).outcome,
    (await ledger.credit(event, amount, recordWork({ leaseHolder: 'b' }).work)).outcome,
  ];

  expect(outcomes).toEqual(['applied', 'duplicate']);
  const stored = await c.documents.send(
    new GetCommand({ TableName: TABLE, Key: { pk: 'AMOUNT#thing-7', sk: 'AMOUNT' } }),
  );
  expect(stored.Item?.amount).toBe(amount);
  expect(clientRequestToken('x', [{ n: 1n }])).not.toBe(clientRequestToken('x', [{ n: 2n }]));
  expect(clientRequestToken('x', [{ s: new Set(['a']) }])).not.toBe(clientRequestToken('x', [{ s: new Set(['b']) }]));
});
