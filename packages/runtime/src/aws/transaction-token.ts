import { createHash } from 'node:crypto';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

type TransactItems = NonNullable<ConstructorParameters<typeof TransactWriteCommand>[0]['TransactItems']>;

/**
 * DynamoDB's idempotency token for one transaction (at most 36 characters): derived from the
 * delivery's try (`attempt`: the lease holder, one per try and receipt, and the transaction's own
 * attempt) and the items, so a repeat of the same request carries the same token and is answered with
 * the first one's outcome; any other transaction gets another. DynamoDB keeps a token 10 minutes, far
 * longer than one try (a try ends at the function's timeout).
 *
 * The items are hashed as the document client marshals them: a BigInt (a DynamoDB number) and a Set
 * (a DynamoDB set) by their values. Plain `JSON.stringify` throws on a BigInt, on every try, and writes
 * a Set as `{}`, so two transactions differing only in a set's members would share a token.
 *
 * @example
 * ```ts
 * new TransactWriteCommand({ TransactItems: items, ClientRequestToken: clientRequestToken(`${holder}:1`, items) });
 * ```
 */
export function clientRequestToken(attempt: string, items: readonly unknown[]): string {
  return createHash('sha256').update(attempt).update(tokenJson(items)).digest('hex').slice(0, 36);
}

/** JSON of the items with BigInt and Set written by value (see clientRequestToken). */
function tokenJson(items: readonly unknown[]): string {
  return JSON.stringify(items, (_key, value: unknown) => {
    if (typeof value === 'bigint') return { $bigint: value.toString() };
    if (value instanceof Set) return { $set: [...(value as Set<unknown>)] };
    return value;
  });
}

/**
 * How a ledger sends its transaction, retried or not: each send under a ClientRequestToken that
 * changes only after a definite cancellation (TransactionCanceledException: nothing was written, so
 * the next send is another request). Any other failure leaves the outcome unknown: a
 * TransactionInProgressException (the same request still running), a throttled or lost answer.
 * The retry of such an answer is the same request under the same token, so DynamoDB answers it
 * with the first one's outcome. Under a new token it would fail on its own claim, and an effect
 * this try committed would be reported a duplicate. (The SDK retries an in-progress answer itself,
 * within one send; the ledger's in-process retry meets the ones its attempts did not outlast.)
 *
 * @example
 * ```ts
 * await withContentionRetries(transactionSender(client, items, work.leaseHolder, work.signal), policy, work.signal);
 * ```
 */
export function transactionSender(
  client: DynamoDBDocumentClient,
  items: TransactItems,
  holder: string,
  signal: AbortSignal | undefined,
): () => Promise<unknown> {
  let attempt = 1;
  let token = clientRequestToken(`${holder}:${attempt}`, items);
  return async () => {
    try {
      return await client.send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: token }), {
        abortSignal: signal,
      });
    } catch (error) {
      if (error instanceof TransactionCanceledException) {
        attempt += 1;
        token = clientRequestToken(`${holder}:${attempt}`, items);
      }
      throw error;
    }
  };
}
