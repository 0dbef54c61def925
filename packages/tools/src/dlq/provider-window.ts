import { ConditionalCheckFailedException, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
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
 * - `performed`: the call went through. Its done-mark is written on the inbox entry, so the
 *   redriven message is acknowledged as a duplicate and the provider is not called.
 * - `not-performed`: it did not. The key window restarts now on the inbox entry
 *   (`providerKeyWindowFrom`), so the redriven message makes the call once more.
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
