import { ConditionalCheckFailedException, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { PermanentCause } from '@exactly-once/runtime/errors';
import {
  inboxKey,
  PROVIDER_CALL_DONE_ATTRIBUTE,
  PROVIDER_KEY_WINDOW_FROM_ATTRIBUTE,
} from '@exactly-once/runtime/aws/inbox-table';

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

/** The consumer's cause for such a message (packages/runtime/src/errors.ts). */
export const PROVIDER_KEY_WINDOW_CAUSE: PermanentCause = 'ProviderKeyWindowPassed';

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
