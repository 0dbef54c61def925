import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { LedgerKeyOptions } from '@exactly-once/runtime/aws/inbox-claim-keys';
import { inboxPk } from '@exactly-once/runtime/inbox/keys';
import { DynamoDbFulfilmentLedger } from '../../lambdas/shop/aws/ledgers';
import { fulfilOrderEvent } from '../../lambdas/shop/use-cases/apply-order-events';
import { useEmulatedEffects } from '../support/emulated-effects';
import { stripeLikeProvider } from '../support/providers';
import { ALICE, cancelledEvent, placedEvent } from '../support/orders';

/**
 * The shop's cancel supersedes its OrderPlaced under every inbox key shape (keys are a migration:
 * test/integration/key-shapes.test.ts), on DynamoDB Local: an OrderPlaced claimed by an older release
 * whose PICK is owed sends no PICK after the CANCEL_PICK, whichever release gets it redriven.
 */

const RELEASE_1: LedgerKeyOptions = { write: 1, find: [1] };
const CURRENT: LedgerKeyOptions | undefined = undefined;

let documents: DynamoDBDocumentClient;
let effectsTable: string;
useEmulatedEffects((db) => ({ documents, effectsTable } = db));

const get = async (pk: string) =>
  (await documents.send(new GetCommand({ TableName: effectsTable, Key: { pk, sk: 'INBOX' }, ConsistentRead: true })))
    .Item;

describe('a supersede marks every key shape', () => {
  const fulfilment = (keys: LedgerKeyOptions | undefined) =>
    new DynamoDbFulfilmentLedger(documents, {
      consumer: 'fulfilment',
      tableName: effectsTable,
      inboxTtlSeconds: 3600,
      keys,
    });

  test.each([
    ['this release', CURRENT],
    ['release 1, after a rollback', RELEASE_1],
  ])(
    'an OrderPlaced claimed by release 1 with its PICK owed, cancelled by this release, then redriven to %s: no PICK after CANCEL_PICK',
    async (_, redrivenTo) => {
      const { provider: warehouse, performed, state } = stripeLikeProvider();
      const orderId = `ord-k9-${redrivenTo === CURRENT ? 'a' : 'b'}`;
      const [placed, cancelled] = [
        { ...placedEvent(orderId), tenant: ALICE },
        { ...cancelledEvent(orderId), tenant: ALICE },
      ];
      state.down = true;
      await expect(fulfilOrderEvent(placed, { ledger: fulfilment(RELEASE_1), warehouse })).rejects.toThrow();
      state.down = false;

      const outcomes = [
        await fulfilOrderEvent(cancelled, { ledger: fulfilment(CURRENT), warehouse }),
        await fulfilOrderEvent(placed, { ledger: fulfilment(redrivenTo), warehouse }),
      ];

      expect(outcomes).toEqual(['applied', 'duplicate']);
      expect(performed.map((p) => p.body.instruction)).toEqual(['CANCEL_PICK']);
      expect(await get(inboxPk('fulfilment', placed, 1))).toMatchObject({ supersededBy: cancelled.eventId });
    },
  );
});
