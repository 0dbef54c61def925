import {
  ConditionalCheckFailedException,
  GetItemCommand,
  UpdateItemCommand,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import {
  inboxKey,
  PROVIDER_CALL_DONE_ATTRIBUTE,
  PROVIDER_KEY_WINDOW_FROM_ATTRIBUTE,
} from '@exactly-once/runtime/aws/inbox-table';
import {
  owedCallAttribute,
  owedCallWindowFromAttribute,
  SEQUENCE_ATTRIBUTES,
  sequencedEntityKey,
} from '@exactly-once/runtime/aws/sequenced-ledger';

/**
 * A consumer dead-letters an event with `ProviderKeyWindowPassed` when its provider call has been
 * owed for longer than the provider remembers idempotency keys: an earlier try may have been
 * performed with its answer lost, and a repeat now would be a second effect. Only a person can
 * find out, at the provider (its dashboard, its API by key `<consumer>:<eventId>`), and then say:
 *
 * - `performed`: the call went through. Its done-mark is written where the consumer's ledger keeps
 *   the call, so the redriven message is acknowledged as a duplicate and the provider is not called.
 * - `not-performed`: it did not. The key window restarts now on that same item, so the redriven
 *   message makes the call once more.
 *
 * Where that is depends on the consumer's spec (`ConsumerSpec.ledger`): the inbox entry of the event
 * for `inbox`, the event's entity item for `sequenced` ({@link recordFindingOnLedger}).
 */
export type ProviderCallFinding = 'performed' | 'not-performed';

/** Why such a message stays in the DLQ unless a person names it. */
export const PROVIDER_KEY_WINDOW_REASON =
  'owed past the provider key window (ProviderKeyWindowPassed): check at the provider under the key <consumer>:<eventId>, ' +
  'then redrive it with --provider-performed <eventId> or --provider-not-performed <eventId>';

/** Writes a person's finding on the event's inbox entry; refuses an entry that is gone or (not performed) already done. */
export async function recordProviderCallFinding(
  dynamodb: DynamoDBClient,
  where: { table: string; consumer: string; eventId: string; tenant?: string },
  finding: ProviderCallFinding,
  now: Date,
): Promise<void> {
  const at = now.toISOString();
  const attribute = finding === 'performed' ? PROVIDER_CALL_DONE_ATTRIBUTE : PROVIDER_KEY_WINDOW_FROM_ATTRIBUTE;
  try {
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: where.table,
        Key: marshall(inboxKey(where.consumer, where.eventId, where.tenant)),
        UpdateExpression: 'SET #finding = :at, providerCallCheckedAt = :at',
        ConditionExpression:
          finding === 'performed' ? 'attribute_exists(pk)' : 'attribute_exists(pk) AND attribute_not_exists(#done)',
        ExpressionAttributeNames: {
          '#finding': attribute,
          ...(finding === 'performed' ? {} : { '#done': PROVIDER_CALL_DONE_ATTRIBUTE }),
        },
        ExpressionAttributeValues: marshall({ ':at': at }),
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException)
      throw new Error(
        `${where.consumer} ${where.eventId}: no inbox entry owes this call (gone past its TTL, or already done): nothing recorded`,
      );
    throw error;
  }
}

/**
 * Where a sequenced ledger (packages/runtime/src/aws/sequenced-ledger.ts) keeps an event's owed call: the
 * entity item (the generic effect's key, `sequencedEntityKey`) and whether its ledger's newer events
 * supersede an older one's call (one slot for the entity's last event).
 */
export interface SequencedCallWhere {
  table: string;
  consumer: string;
  eventId: string;
  entityId: string;
  tenant?: string;
  newerSupersedes?: boolean;
}

/**
 * A person's finding on an owed call of a sequenced ledger, written on the entity item: `performed`
 * removes the owed call (the redriven message is then a duplicate whose call is done, or stale), and
 * `not-performed` restarts its key window (`<slot>:providerKeyWindowFrom`), so the redrive makes the
 * call once more. Refuses an item that owes no call for the event: nothing is written.
 */
export async function recordSequencedProviderCallFinding(
  dynamodb: DynamoDBClient,
  where: SequencedCallWhere,
  finding: ProviderCallFinding,
  now: Date,
): Promise<void> {
  const slot = owedCallAttribute(where.newerSupersedes === true, where.eventId);
  const owedByThisEvent = where.newerSupersedes === true ? ' AND #last = :id' : '';
  const names = {
    '#call': slot,
    ...(where.newerSupersedes === true ? { '#last': SEQUENCE_ATTRIBUTES.eventId } : {}),
  };
  const values = { ':at': now.toISOString(), ...(where.newerSupersedes === true ? { ':id': where.eventId } : {}) };
  try {
    await dynamodb.send(
      new UpdateItemCommand({
        TableName: where.table,
        Key: marshall(sequencedEntityKey(where.consumer, where)),
        UpdateExpression:
          finding === 'performed'
            ? 'SET providerCallCheckedAt = :at REMOVE #call, #lease, #holder, #from'
            : 'SET #from = :at, providerCallCheckedAt = :at',
        ConditionExpression: `attribute_exists(#call)${owedByThisEvent}`,
        ExpressionAttributeNames:
          finding === 'performed'
            ? {
                ...names,
                '#lease': `${slot}:leaseUntil`,
                '#holder': `${slot}:leaseHolder`,
                '#from': owedCallWindowFromAttribute(slot),
              }
            : { ...names, '#from': owedCallWindowFromAttribute(slot) },
        ExpressionAttributeValues: marshall(values),
      }),
    );
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException)
      throw new Error(
        `${where.consumer} ${where.eventId}: its entity item ${where.entityId} owes no call for it (already done, or superseded): nothing recorded`,
      );
    throw error;
  }
}

/** Where a finding is written: the consumer's DLQ says whose event it is, its spec which ledger holds its claim. */
export interface FindingWhere {
  table: string;
  consumer: string;
  /** The consumer's ledger (`ledgerOf(spec)`); undefined for a DLQ whose consumer is not on the consumer list. */
  ledger: ConsumerSpec['ledger'];
  eventId: string;
  tenant?: string;
  /** The envelope's entityId: the sequenced ledger's item is the event's entity's. */
  entityId?: string;
}

/**
 * A person's finding written where the consumer reads it: its inbox entry (`ledger: 'inbox'`), or its
 * entity item (`ledger: 'sequenced'`). Written anywhere else, the consumer would not see it and the
 * redriven message would be refused again, or (an inbox entry beside a sequenced consumer) never read.
 * On the entity item the owed call's slot is read from the item, so a ledger whose newer event supersedes
 * the older one's call (one `owedCall` slot) and one that keeps a slot per event are both found. Refuses,
 * writing nothing, a consumer whose ledger is unknown, a message without an entityId, and an item that
 * owes no call for the event.
 *
 * @example The DLQ tool, for the consumer of the DLQ it redrives
 * ```ts
 * await recordFindingOnLedger(dynamodb, { table, consumer: 'fulfilment', ledger: 'sequenced', eventId, entityId: 'order-1' }, 'performed', new Date());
 * ```
 */
export async function recordFindingOnLedger(
  dynamodb: DynamoDBClient,
  where: FindingWhere,
  finding: ProviderCallFinding,
  now: Date,
): Promise<void> {
  const { consumer, eventId } = where;
  if (where.ledger === undefined)
    throw new Error(
      `${consumer} ${eventId}: ${consumer} is not on the consumer list, so which ledger holds its claims is unknown: nothing recorded`,
    );
  if (where.ledger === 'inbox') return recordProviderCallFinding(dynamodb, where, finding, now);
  if (where.entityId === undefined)
    throw new Error(
      `${consumer} ${eventId}: the message names no entityId, so the entity item that owes its call is unknown: nothing recorded`,
    );
  const entityId = where.entityId;
  const { Item } = await dynamodb.send(
    new GetItemCommand({
      TableName: where.table,
      Key: marshall(sequencedEntityKey(consumer, { entityId, tenant: where.tenant })),
      ConsistentRead: true,
    }),
  );
  const item = Item === undefined ? undefined : unmarshall(Item);
  if (item === undefined)
    throw new Error(`${consumer} ${eventId}: there is no entity item ${entityId} of ${consumer}: nothing recorded`);
  const ownSlot = item[owedCallAttribute(false, eventId)] !== undefined;
  const sharedSlot = (item[owedCallAttribute(true, eventId)] as { eventId?: unknown } | undefined)?.eventId === eventId;
  if (!ownSlot && !sharedSlot)
    throw new Error(
      `${consumer} ${eventId}: its entity item ${entityId} owes no call for it (already done, or superseded): nothing recorded`,
    );
  // The write itself is conditioned on the call still being owed: a call done since the read is refused there.
  await recordSequencedProviderCallFinding(
    dynamodb,
    { table: where.table, consumer, eventId, entityId, tenant: where.tenant, newerSupersedes: !ownSlot },
    finding,
    now,
  );
}
