import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws/entity-effect-ledger';
import { inboxKey } from '@exactly-once/runtime/aws/inbox-table';
import { DynamoDbSequencedEntityEffectLedger } from '@exactly-once/runtime/aws/sequenced-entity-effect-ledger';
import {
  SequencedLedger,
  sequencedEntityKey,
  type SequencedLedgerOptions,
} from '@exactly-once/runtime/aws/sequenced-ledger';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { RecordWork } from '@exactly-once/runtime/consumer/record-work';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { applyEntityEffect } from '@exactly-once/runtime/inbox/entity-effect';
import type { EntityEffectLedger, LedgerResult } from '@exactly-once/runtime/inbox/ports';
import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';
import { parseCommand } from '@exactly-once/tools/dlq/args';
import { runCommand, type RedriveReport } from '@exactly-once/tools/dlq/commands';
import type { DlqContext } from '@exactly-once/tools/dlq/context';
import { UsageError } from '@exactly-once/tools/dlq/queues';
import { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import { stripeLikeProvider } from '../support/providers';
import { work } from '../support/sequenced-ledger-cases';
import { exampleDomain } from '../support/example-domain';

/**
 * The DLQ tool writes a person's finding about a provider call owed past its key window where the
 * consumer reads it: the inbox entry for a consumer on the inbox ledger, the entity item for one whose
 * spec says `ledger: 'sequenced'`. Run through `runCommand` (SQS mocked, the effects table the in-memory
 * DynamoDB), then the redriven message is delivered to the consumer as its queue would deliver it.
 */

const TABLE = 'effects';
const db = new MemoryDynamoDb();
db.createTable(TABLE, { hash: 'pk', range: 'sk' });
const documents = db.asDocumentClient();
// The in-memory table serves the low-level client's GetItem and UpdateItem too (the DLQ tool's client).
const raw = documents as unknown as DynamoDBClient;

const spec = (name: string, ledger?: ConsumerSpec['ledger']): ConsumerSpec => ({
  name,
  fifo: true,
  eventTypes: ['ThingHappened', 'ThingUndone'],
  entry: 'test/exactly-once/fixtures/probe-fifo-consumer.ts',
  batchSize: 10,
  batchingWindowSeconds: 0,
  maxConcurrency: 2,
  ...(ledger === undefined ? {} : { ledger }),
});

/** Each consumer of this file: the generic effect, sequenced or inbox; `seq-single` supersedes (one owed-call slot). */
const CONSUMERS = [spec('seq-audit', 'sequenced'), spec('seq-single', 'sequenced'), spec('inbox-audit')];

/** A queue pair for each consumer of the list, and one consumer DLQ (`stray`) the list does not name. */
const OUTPUTS: Record<string, string> = {
  SeqAuditQueueUrl: 'https://sqs/1/seq-audit.fifo',
  SeqAuditDlqUrl: 'https://sqs/1/seq-audit-dlq.fifo',
  SeqSingleQueueUrl: 'https://sqs/1/seq-single.fifo',
  SeqSingleDlqUrl: 'https://sqs/1/seq-single-dlq.fifo',
  InboxAuditQueueUrl: 'https://sqs/1/inbox-audit.fifo',
  InboxAuditDlqUrl: 'https://sqs/1/inbox-audit-dlq.fifo',
  StrayQueueUrl: 'https://sqs/1/stray.fifo',
  StrayDlqUrl: 'https://sqs/1/stray-dlq.fifo',
  [STACK_OUTPUTS.effectsTableName]: TABLE,
};

/**
 * A generic effect on a sequenced ledger whose newer event supersedes the call an older one owes (as
 * fulfilment's cancel supersedes its PICK): its entity item holds one `owedCall` slot.
 */
class SupersedingLedger extends SequencedLedger implements EntityEffectLedger {
  constructor(client: DynamoDBDocumentClient, options: SequencedLedgerOptions) {
    super(client, options, true);
  }

  apply(event: EventEnvelope, w?: RecordWork): Promise<LedgerResult> {
    return this.claimOnEntity(
      event,
      sequencedEntityKey(this.consumer, event).pk,
      { add: ['appliedCount :one'], values: { ':one': 1 } },
      w,
    );
  }
}

/** The consumer `name` as its queue runs it, with a Stripe-like provider and the clock `now`. */
function consumer(name: string, now: () => Date, provider = stripeLikeProvider()) {
  const options = { consumer: name, tableName: TABLE, now };
  const ledger =
    name === 'inbox-audit'
      ? new DynamoDbEntityEffectLedger(documents, { ...options, inboxTtlSeconds: 7 * 86_400 })
      : name === 'seq-single'
        ? new SupersedingLedger(documents, options)
        : new DynamoDbSequencedEntityEffectLedger(documents, options);
  const deps = { consumer: name, eventTypes: ['ThingHappened', 'ThingUndone'], ledger, provider: provider.provider };
  return { ...provider, deliver: (event: EventEnvelope) => applyEntityEffect(event, deps, work()) };
}

const envelope = (eventId: string, entityId: string): EventEnvelope => ({
  eventId,
  type: 'ThingHappened',
  entityId,
  version: 1,
  occurredAt: new Date(Date.now() - 60_000).toISOString(),
  payload: {},
});

const CLAIMED_AT = Date.now();
const aDayLater = () => new Date(CLAIMED_AT + 86_400_000);

/**
 * The event's provider call failed at its claim (the provider down), and its redelivery a day later was
 * refused as ProviderKeyWindowPassed: what dead-letters such a message. The provider is up again after.
 */
async function owedPastItsWindow(name: string, event: EventEnvelope) {
  const claim = consumer(name, () => new Date(CLAIMED_AT));
  claim.state.down = true;
  await expect(claim.deliver(event)).rejects.toThrow('provider down');
  const later = consumer(name, aDayLater, claim);
  later.state.down = false;
  await expect(later.deliver(event)).rejects.toMatchObject({ permanentCause: 'ProviderKeyWindowPassed' });
  return later;
}

const get = async (key: { pk: string; sk: string }) =>
  (await documents.send(new GetCommand({ TableName: TABLE, Key: key, ConsistentRead: true }))).Item;

const sqsMock = mockClient(SQSClient);
const sqs = new SQSClient({ region: 'us-east-1' });
const context = {
  stack: { kind: 'local', name: 'S', outputs: OUTPUTS, endpoints: {} },
  sqs,
  dynamodb: raw,
  // The example's domain, on this test's consumer list.
  domain: { ...exampleDomain(), consumers: CONSUMERS },
  close: () => undefined,
} as unknown as DlqContext;

/** The DLQ holds `event`'s message, dead-lettered as ProviderKeyWindowPassed. */
function dlqHolds(event: EventEnvelope) {
  sqsMock
    .on(ReceiveMessageCommand)
    .resolvesOnce({
      Messages: [
        {
          MessageId: `m-${event.eventId}`,
          ReceiptHandle: `rh-${event.eventId}`,
          Body: JSON.stringify(event),
          Attributes: { MessageGroupId: event.entityId, SentTimestamp: String(CLAIMED_AT) },
          MessageAttributes: { failureCause: { DataType: 'String', StringValue: 'ProviderKeyWindowPassed' } },
        },
      ],
    })
    .resolves({ Messages: [] });
}

/** `npm run dlq -- redrive <argv>` on this file's stack, a day after the claims. */
const dlq = async (...argv: string[]) => {
  const command = parseCommand(['redrive', ...argv]);
  if (command.command !== 'redrive') throw new Error('not a redrive');
  return (await runCommand(command, context, () => undefined, aDayLater)) as RedriveReport;
};

/** What the redrive sent back to the consumer's queue: the message the consumer receives next. */
const redriven = (): EventEnvelope[] =>
  sqsMock.commandCalls(SendMessageCommand).map((c) => JSON.parse(c.args[0].input.MessageBody!) as EventEnvelope);

beforeEach(() => {
  sqsMock.reset();
  sqsMock.on(GetQueueAttributesCommand).resolves({ Attributes: { QueueArn: 'arn', ApproximateNumberOfMessages: '1' } });
  sqsMock.on(ChangeMessageVisibilityBatchCommand).resolves({});
  sqsMock.on(SendMessageCommand).resolves({});
  sqsMock.on(DeleteMessageCommand).resolves({});
});

describe("a sequenced consumer: the finding is written on the event's entity item", () => {
  test('found performed: the owed call is removed from the entity item, and the redriven event calls nothing', async () => {
    const event = envelope('evt-1', 'entity-1');
    const later = await owedPastItsWindow('seq-audit', event);
    dlqHolds(event);

    const report = await dlq('seq-audit', '--provider-performed', 'evt-1');
    const outcomes = [await later.deliver(redriven()[0]), await later.deliver(redriven()[0])];

    expect(report.result).toMatchObject({ moved: [{ eventId: 'evt-1', providerFinding: 'performed' }], failed: [] });
    const item = await get(sequencedEntityKey('seq-audit', event));
    expect(item).not.toHaveProperty(['owedCall#evt-1']);
    expect(item).toMatchObject({ appliedCount: 1, providerCallCheckedAt: aDayLater().toISOString() });
    expect(await get(inboxKey('seq-audit', 'evt-1'))).toBeUndefined();
    expect(outcomes).toEqual(['duplicate', 'duplicate']);
    expect(later.calls).toEqual([]);
  });

  test('found NOT performed: the key window restarts on the entity item, and the redriven event calls once', async () => {
    const event = envelope('evt-2', 'entity-2');
    const later = await owedPastItsWindow('seq-audit', event);
    dlqHolds(event);

    const report = await dlq('seq-audit', '--provider-not-performed', 'evt-2');
    const outcomes = [await later.deliver(redriven()[0]), await later.deliver(redriven()[0])];

    expect(report.result).toMatchObject({
      moved: [{ eventId: 'evt-2', providerFinding: 'not-performed' }],
      failed: [],
    });
    expect(await get(inboxKey('seq-audit', 'evt-2'))).toBeUndefined();
    expect(outcomes).toEqual(['duplicate', 'duplicate']);
    expect(later.calls).toEqual(['seq-audit:evt-2']);
    const item = await get(sequencedEntityKey('seq-audit', event));
    expect(item).toMatchObject({ appliedCount: 1 });
    expect(item).not.toHaveProperty(['owedCall#evt-2']);
  });

  test("a ledger whose newer event supersedes an older one's call: the finding is written on its one owed-call slot", async () => {
    const event = envelope('evt-3', 'entity-3');
    const later = await owedPastItsWindow('seq-single', event);
    dlqHolds(event);

    const report = await dlq('seq-single', '--provider-not-performed', 'evt-3');
    const outcomes = [await later.deliver(redriven()[0]), await later.deliver(redriven()[0])];

    expect(report.result).toMatchObject({ moved: [{ eventId: 'evt-3' }], failed: [] });
    expect(outcomes).toEqual(['duplicate', 'duplicate']);
    expect(later.calls).toEqual(['seq-single:evt-3']);
    expect(await get(sequencedEntityKey('seq-single', event))).not.toHaveProperty('owedCall');
  });
});

test("an inbox consumer's finding is still written on the event's inbox entry", async () => {
  const event = envelope('evt-4', 'entity-4');
  const later = await owedPastItsWindow('inbox-audit', event);
  dlqHolds(event);

  const report = await dlq('inbox-audit', '--provider-performed', 'evt-4');
  const outcome = await later.deliver(redriven()[0]);

  expect(report.result).toMatchObject({ moved: [{ eventId: 'evt-4', providerFinding: 'performed' }], failed: [] });
  expect(await get(inboxKey('inbox-audit', 'evt-4'))).toHaveProperty('providerCallDoneAt');
  expect(outcome).toBe('duplicate');
  expect(later.calls).toEqual([]);
});

describe('bad input is refused with a clear message, and nothing is written or moved', () => {
  test('a consumer DLQ whose consumer is not on the consumer list: which ledger holds its claims is unknown', async () => {
    dlqHolds(envelope('evt-5', 'entity-5'));

    const redrive = dlq('stray', '--provider-performed', 'evt-5');

    await expect(redrive).rejects.toThrow(UsageError);
    await expect(redrive).rejects.toThrow(
      /stray is not on the consumer list, so the tool cannot tell which ledger \(inbox or sequenced\) holds its claims/,
    );
    expect(sqsMock.commandCalls(ReceiveMessageCommand)).toHaveLength(0);
    expect(sqsMock.commandCalls(SendMessageCommand)).toHaveLength(0);
    expect(await get(sequencedEntityKey('stray', { entityId: 'entity-5' }))).toBeUndefined();
    expect(await get(inboxKey('stray', 'evt-5'))).toBeUndefined();
  });

  test('an event whose entity item owes no call for it: the message stays in the DLQ, the item as it was', async () => {
    const event = envelope('evt-6', 'entity-6');
    await consumer('seq-audit', () => new Date(CLAIMED_AT)).deliver(event); // applied, its call done
    const before = await get(sequencedEntityKey('seq-audit', event));
    dlqHolds(event);

    const report = await dlq('seq-audit', '--provider-not-performed', 'evt-6');

    expect(report.result).toMatchObject({
      moved: [],
      failed: [
        {
          messageId: 'm-evt-6',
          error:
            'seq-audit evt-6: its entity item entity-6 owes no call for it (already done, or superseded): nothing recorded',
        },
      ],
    });
    expect(await get(sequencedEntityKey('seq-audit', event))).toEqual(before);
    expect(await get(inboxKey('seq-audit', 'evt-6'))).toBeUndefined();
    expect(sqsMock.commandCalls(SendMessageCommand)).toHaveLength(0);
    expect(sqsMock.commandCalls(DeleteMessageCommand)).toHaveLength(0);
  });

  test('an event with no entity item at all: refused, and no item is created', async () => {
    const event = envelope('evt-7', 'entity-7');
    dlqHolds(event);

    const report = await dlq('seq-audit', '--provider-performed', 'evt-7');

    expect(report.result?.failed).toEqual([
      {
        messageId: 'm-evt-7',
        error: 'seq-audit evt-7: there is no entity item entity-7 of seq-audit: nothing recorded',
      },
    ]);
    expect(await get(sequencedEntityKey('seq-audit', event))).toBeUndefined();
    expect(sqsMock.commandCalls(SendMessageCommand)).toHaveLength(0);
  });
});
