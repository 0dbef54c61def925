import { DynamoDbSequencedEntityEffectLedger } from '@exactly-once/runtime/aws/sequenced-entity-effect-ledger';
import { sequencedEntityKey } from '@exactly-once/runtime/aws/sequenced-ledger';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { withoutInbox, withoutSequenceCondition } from '@exactly-once/runtime/faults/inbox-bypass';
import { applyEntityEffect } from '@exactly-once/runtime/inbox/entity-effect';
import { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import { StockLedger, work } from '../support/sequenced-ledger-cases';

type DocumentClient = ReturnType<MemoryDynamoDb['asDocumentClient']>;

/**
 * The local runtime's broken consumer (faults/inbox-bypass.ts, the plan's `disableInboxClaim`) on a
 * consumer whose ledger is the sequenced one: its claim is the sequence condition on the entity item,
 * and the bypass drops it, so a duplicate is applied and called twice; the lease, the release and
 * the done-mark on the same item go through as the ledger sent them.
 */

const CONSUMER = 'audit';
const event: EventEnvelope = {
  eventId: 'evt-1',
  type: 'ThingHappened',
  entityId: 'entity-1',
  version: 1,
  occurredAt: new Date(Date.now() - 60_000).toISOString(),
  payload: {},
};

function consumer(bypassed: boolean) {
  const db = new MemoryDynamoDb();
  db.createTable('effects', { hash: 'pk', range: 'sk' });
  const documents = withoutInbox(db.asDocumentClient(), CONSUMER, () => bypassed);
  const ledger = new DynamoDbSequencedEntityEffectLedger(documents, { consumer: CONSUMER, tableName: 'effects' });
  const calls: string[] = [];
  const deps = {
    consumer: CONSUMER,
    eventTypes: ['ThingHappened'],
    ledger,
    provider: { send: async (key: string) => void calls.push(key) },
  };
  const item = () => db.items('effects').find((i) => i.pk === sequencedEntityKey(CONSUMER, event).pk);
  return { deps, calls, item };
}

test('switched on, the sequence condition is dropped: the same event twice is applied twice and calls twice', async () => {
  const broken = consumer(true);

  const outcomes = [
    await applyEntityEffect(event, broken.deps, work()),
    await applyEntityEffect(event, broken.deps, work()),
  ];

  expect(outcomes).toEqual(['applied', 'applied']);
  expect(broken.item()).toMatchObject({ appliedCount: 2 });
  expect(broken.calls).toEqual(['audit:evt-1', 'audit:evt-1']);
});

test('switched off, the same deliveries are one effect and one call', async () => {
  const guarded = consumer(false);

  const outcomes = [
    await applyEntityEffect(event, guarded.deps, work()),
    await applyEntityEffect(event, guarded.deps, work()),
  ];

  expect(outcomes).toEqual(['applied', 'duplicate']);
  expect(guarded.item()).toMatchObject({ appliedCount: 1 });
  expect(guarded.calls).toEqual(['audit:evt-1']);
});

/** A stock-keeping consumer whose claim goes in one transaction with its stock item (claimOnEntity's alsoWrite). */
function stockConsumer(documentsOf: (documents: DocumentClient) => DocumentClient) {
  const db = new MemoryDynamoDb();
  db.createTable('effects', { hash: 'pk', range: 'sk' });
  const ledger = new StockLedger(documentsOf(db.asDocumentClient()), { consumer: CONSUMER, tableName: 'effects' });
  const stock = () => db.items('effects').find((i) => i.pk === ledger.stockKey().pk)?.reserved;
  return { ledger, stock };
}

test.each([
  ['the broken build (disableInboxClaim)', (d: DocumentClient) => withoutInbox(d, CONSUMER, () => true)],
  ["the simulation's sequenceCondition guard off", (d: DocumentClient) => withoutSequenceCondition(d, () => true)],
])(
  '%s drops the condition of a claim sent in a transaction too: the same place twice reserves twice',
  async (_what, broken) => {
    const { ledger, stock } = stockConsumer(broken);

    const outcomes = [await ledger.place(event, work()), await ledger.place(event, work())];

    expect(outcomes.map((o) => o.outcome)).toEqual(['applied', 'applied']);
    expect(stock()).toBe(2);
  },
);

test('withoutSequenceCondition switched off: the same place twice reserves once', async () => {
  const { ledger, stock } = stockConsumer((d) => withoutSequenceCondition(d, () => false));

  const outcomes = [await ledger.place(event, work()), await ledger.place(event, work())];

  expect(outcomes.map((o) => o.outcome)).toEqual(['applied', 'duplicate']);
  expect(stock()).toBe(1);
});
