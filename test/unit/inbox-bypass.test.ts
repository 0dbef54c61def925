import { DynamoDBClient, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  TransactWriteCommand,
  UpdateCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { callProviderIfOwed, type ApplyOutcome } from '@exactly-once/runtime';
import { withoutInbox } from '@exactly-once/runtime/faults/inbox-bypass';
import { FAULT_FILE_ENV } from '@exactly-once/runtime/faults/names';
import { consumerWiring } from '@exactly-once/runtime/wiring/consumer-wiring';
import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws/entity-effect-ledger';
import { thingHappened, thingUndone, type ThingHappened } from '../exactly-once/fixtures/probe-events';
import { ProbeLedger } from '../exactly-once/fixtures/probe-ledger';
import { recordWork } from '../support/record-work';
import { probeConsumerConfig } from '../support/probe-consumer-config';

/**
 * The local runtime's broken consumer acts below the ledger, on the DynamoDB calls it sends
 * (faults/inbox-bypass.ts): no ledger knows of it. Shown on the neutral fixture's probe ledger and
 * the generic entity-effect ledger, with the document client mocked.
 */

type Items = NonNullable<TransactWriteCommandInput['TransactItems']>;

const NOW = new Date('2030-01-02T03:04:05.000Z');
const doc = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'us-east-1' }));
const options = { tableName: 'effects', inboxTtlSeconds: 1_000, now: () => NOW };
const happened = thingHappened('t-1', { occurredAt: NOW.toISOString() });
const undone = thingUndone('t-1', { occurredAt: NOW.toISOString() });
const { work } = recordWork({ now: NOW.getTime() });

const transactions = () => doc.commandCalls(TransactWriteCommand).map((c) => c.args[0].input.TransactItems as Items);
const keyOf = (item: Items[number]) => String(item.Put?.Item?.pk ?? item.Update?.Key?.pk);
const mailer = () => ({ send: jest.fn(async (_key: string, _body: unknown, _options: unknown) => undefined) });

/** A plain ADD to an account, then one provider call while it is owed: the effect a duplicate must not repeat. */
const addThenNotify = async (
  event: ThingHappened,
  deps: { ledger: ProbeLedger; mail: ReturnType<typeof mailer> },
): Promise<ApplyOutcome> =>
  callProviderIfOwed(
    await deps.ledger.add(event, 5, 'acct-1', work),
    event,
    deps.ledger,
    (signal, key) => deps.mail.send(key, { amount: 5 }, { signal }),
    work,
  );

beforeEach(() => {
  doc.reset();
  doc.on(TransactWriteCommand).resolves({});
  doc.on(UpdateCommand).resolves({});
});

test('switched on, a transaction goes without the inbox claim and the supersede mark; the state guard stays', async () => {
  const ledger = new ProbeLedger(
    withoutInbox(client, 'probe', () => true),
    { ...options, consumer: 'probe' },
  );

  await ledger.undo(undone, work);

  const [items] = transactions();
  expect(items.map(keyOf)).toEqual(['PROBE_STATE#t-1', 'PROBE_TALLY#t-1']);
  expect(items[0].Update?.ConditionExpression).toBe('version = :happened');
});

test.each([
  [
    "the probe ledger's happen (a put only where there is no state yet)",
    () =>
      new ProbeLedger(
        withoutInbox(client, 'probe', () => true),
        { ...options, consumer: 'probe' },
      ).happen(happened, work),
  ],
  [
    "the entity-effect ledger's version check",
    () =>
      new DynamoDbEntityEffectLedger(
        withoutInbox(client, 'audit', () => true),
        {
          ...options,
          consumer: 'audit',
        },
      ).apply(happened, work),
  ],
])('switched on, a first-write guard goes with the claim: %s', async (_what, apply) => {
  await apply();

  const [[effect]] = transactions();
  const operation = effect.Put ?? effect.Update!;
  expect(operation.ConditionExpression).toBeUndefined();
  expect(operation.ReturnValuesOnConditionCheckFailure).toBeUndefined();
});

test('switched on, names and values only the dropped guard used go with it (DynamoDB refuses unused ones)', async () => {
  const documents = withoutInbox(client, 'audit', () => true);
  const claim = { Put: { TableName: 'effects', Item: { pk: 'INBOX#audit#e-1', sk: 'INBOX' } } };
  const effect = {
    Update: {
      TableName: 'effects',
      Key: { pk: 'AUDIT#1', sk: 'AUDIT' },
      UpdateExpression: 'SET #seen = :version',
      ConditionExpression: 'attribute_not_exists(#last) OR #last < :version AND #kind = :kind',
      ExpressionAttributeNames: { '#seen': 'seen', '#last': 'last', '#kind': 'kind' },
      ExpressionAttributeValues: { ':version': 3, ':kind': 'audit' },
    },
  };

  await documents.send(new TransactWriteCommand({ TransactItems: [claim, effect] }));

  expect(transactions()[0]).toEqual([
    {
      Update: {
        TableName: 'effects',
        Key: { pk: 'AUDIT#1', sk: 'AUDIT' },
        UpdateExpression: 'SET #seen = :version',
        ExpressionAttributeNames: { '#seen': 'seen' },
        ExpressionAttributeValues: { ':version': 3 },
      },
    },
  ]);
});

test('switched on, the done-mark is answered without being sent, so a duplicate effect calls the provider again', async () => {
  const ledger = new ProbeLedger(
    withoutInbox(client, 'probe', () => true),
    { ...options, consumer: 'probe' },
  );
  const mail = mailer();

  const outcomes = [await addThenNotify(happened, { ledger, mail }), await addThenNotify(happened, { ledger, mail })];

  expect(outcomes).toEqual(['applied', 'applied']);
  expect(transactions().map((items) => items.map(keyOf))).toEqual([['PROBE_TOTAL#acct-1'], ['PROBE_TOTAL#acct-1']]);
  expect(doc.commandCalls(UpdateCommand)).toEqual([]);
  expect(mail.send).toHaveBeenCalledTimes(2);
});

test('switched on, a read of an inbox entry and the writes of another consumer go through', async () => {
  doc.on(GetCommand).resolves({});
  const documents = withoutInbox(client, 'probe', () => true);
  const other = new ProbeLedger(documents, { ...options, consumer: 'probe-archive' });

  await documents.send(new GetCommand({ TableName: 'effects', Key: { pk: 'INBOX#probe#e-1', sk: 'INBOX' } }));
  await other.add(happened, 5, 'acct-1', work);

  expect(doc.commandCalls(GetCommand)).toHaveLength(1);
  expect(transactions()[0].map(keyOf)).toEqual([`INBOX#probe-archive#${happened.eventId}`, 'PROBE_TOTAL#acct-1']);
});

test("switched on, a cancelled transaction answers for the items the ledger built: an effect's reason where it put it", async () => {
  doc.on(TransactWriteCommand).rejects(
    new TransactionCanceledException({
      message: 'Transaction cancelled [ConditionalCheckFailed, None]',
      $metadata: {},
      // As sent: the undo's state update first, then the tally delta (the claim and the mark were dropped).
      CancellationReasons: [{ Code: 'ConditionalCheckFailed', Item: { version: { N: '2' } } }, { Code: 'None' }],
    }),
  );
  const ledger = new ProbeLedger(
    withoutInbox(client, 'probe', () => true),
    { ...options, consumer: 'probe' },
  );

  const result = await ledger.undo(undone, work);

  // Read as the claim's reason, it would have been a duplicate that owes the ThingUndone's provider call.
  expect(result.outcome).toBe('stale');
});

test('switched off, every call goes through as the ledger sent it', async () => {
  let disabled = false;
  const ledger = new ProbeLedger(
    withoutInbox(client, 'probe', () => disabled),
    { ...options, consumer: 'probe' },
  );

  await addThenNotify(happened, { ledger, mail: mailer() });
  disabled = true;
  await ledger.add(happened, 5, 'acct-1', work);

  expect(transactions().map((items) => items.map(keyOf))).toEqual([
    [`INBOX#probe#${happened.eventId}`, 'PROBE_TOTAL#acct-1'],
    ['PROBE_TOTAL#acct-1'],
  ]);
  expect(doc.commandCalls(UpdateCommand)).toHaveLength(1); // the first add's done-mark
});

describe("the consumer's wiring switches it on in the local runtime's build only", () => {
  const config = probeConsumerConfig({ backoff: { baseSeconds: 1, capSeconds: 10 } });
  const saved = { ...process.env };
  let folder: string;

  beforeEach(() => {
    folder = mkdtempSync(join(tmpdir(), 'inbox-bypass-'));
    const plan = join(folder, 'plan.json');
    writeFileSync(plan, JSON.stringify({ disableInboxClaim: ['probe'], expiresAt: new Date(Date.now() + 60_000) }));
    process.env[FAULT_FILE_ENV] = plan;
    process.env.FAULT_INJECTION_BUILD = 'true';
  });
  afterEach(() => {
    process.env = { ...saved };
    rmSync(folder, { recursive: true, force: true });
  });

  const addThroughTheWiring = async () => {
    const wiring = consumerWiring(config, { documents: client, sqs: new SQSClient({ region: 'us-east-1' }) });
    await wiring.refreshFaults();
    await new ProbeLedger(wiring.documents, wiring.ledgerOptions).add(happened, 5, 'acct-1', work);
    return transactions()[0].map(keyOf);
  };

  test('the local runtime build, its plan naming the consumer: no claim', async () => {
    process.env.INBOX_BYPASS_BUILD = 'true';

    expect(await addThroughTheWiring()).toEqual(['PROBE_TOTAL#acct-1']);
  });

  test('a fault-injection build that is not the local runtime: the same plan changes nothing', async () => {
    expect(await addThroughTheWiring()).toEqual([`INBOX#probe#${happened.eventId}`, 'PROBE_TOTAL#acct-1']);
  });
});
