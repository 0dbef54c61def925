import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ExternalProvider } from '../provider/provider';
import { inChildSpan } from '../trace/spans';

/**
 * Stand-in for a real provider that dedupes on idempotency keys (as Stripe or
 * most payment and logistics APIs do): it records each call that reached it
 * (each one it accepted) under its key, performs the "effect" (stores the
 * payload) only the first time, and counts repeats, so the proof kit can show
 * one effect per key. The first and last call times let it check that no call
 * for an order's event came after a later event of that order reached the
 * provider (no PICK after CANCEL_PICK).
 *
 * To swap in a real provider, implement ExternalProvider and pass the key in the
 * provider's own idempotency field. The consumer's inbox records the call done,
 * so a duplicate after that never calls again and the provider's own key memory
 * only has to cover the short window between the call and that record. For one
 * that accepts no key (SES, SMTP), that window is the at-least-once residue: a
 * crash between the send and the record repeats the send once.
 * `provider` names it in the log (`mail`, `warehouse`); `tableName` is the provider log table.
 *
 * @example What a consumer's wiring gives it unless told otherwise
 * ```ts
 * import { providerKey } from '..';
 * import { dynamoDbDocumentClient, RecordingProvider } from '.';
 * import { ENV, requireEnv } from '../runtime';
 *
 * const mail = new RecordingProvider(dynamoDbDocumentClient(), requireEnv(ENV.providerLogTable), 'mail');
 * await mail.send(providerKey('loyalty', event), { template: 'order-confirmation' }, { signal: work.signal });
 * ```
 */
export class RecordingProvider implements ExternalProvider {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly provider: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Records the call, in a `provider-call` span of the active trace. */
  send(idempotencyKey: string, payload: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<void> {
    return inChildSpan('provider-call', () => this.record(idempotencyKey, payload, options?.signal), {
      provider: this.provider,
      idempotencyKey,
    });
  }

  private async record(idempotencyKey: string, payload: Record<string, unknown>, signal?: AbortSignal): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { idempotencyKey },
        UpdateExpression:
          'SET provider = :provider, payload = if_not_exists(payload, :payload), firstCalledAt = if_not_exists(firstCalledAt, :now), lastCalledAt = :now ADD calls :one',
        ExpressionAttributeValues: {
          ':provider': this.provider,
          ':payload': payload,
          ':now': this.now().toISOString(),
          ':one': 1,
        },
      }),
      { abortSignal: signal },
    );
  }
}
