import { DynamoDbSequencedEntityEffectLedger } from '@exactly-once/runtime/aws/sequenced-entity-effect-ledger';
import { sequencedEntityKey } from '@exactly-once/runtime/aws/sequenced-ledger';
import type { EventEnvelope } from '@exactly-once/runtime/envelope';
import { withoutInbox } from '@exactly-once/runtime/faults/inbox-bypass';
import { applyEntityEffect } from '@exactly-once/runtime/inbox/entity-effect';
import { MemoryDynamoDb } from '@exactly-once/tools/simulation/memory-dynamodb';
import { work } from '../support/sequenced-ledger-cases';

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
