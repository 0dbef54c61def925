import { UpdateCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { ExternalProvider } from '../ports/providers';

/**
 * Stand-in for a real provider that dedupes on idempotency keys (as Stripe or
 * most payment and logistics APIs do): it records each call under its key,
 * performs the "effect" (stores the payload) only the first time, and counts
 * repeats so the proof kit can show duplicates reaching the provider and still
 * one effect per key.
 *
 * To swap in a real provider, implement ExternalProvider and pass the key in the
 * provider's own idempotency field. For one that accepts no key (SES, SMTP),
 * keep a table like this one in front of it: claim the key with a conditional
 * put, send, then mark it sent; a crash between send and mark can still repeat
 * the send once, which for e-mail is the accepted at-least-once residue.
 */
export class RecordingProvider implements ExternalProvider {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly provider: string,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async send(idempotencyKey: string, payload: Record<string, unknown>): Promise<void> {
    await this.client.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { idempotencyKey },
        UpdateExpression:
          'SET provider = :provider, payload = if_not_exists(payload, :payload), firstCalledAt = if_not_exists(firstCalledAt, :now), lastCalledAt = :now ADD calls :one',
        ExpressionAttributeValues: { ':provider': this.provider, ':payload': payload, ':now': this.now().toISOString(), ':one': 1 },
      }),
    );
  }
}
