import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { withoutInbox } from '@exactly-once/runtime/faults/inbox-bypass';

/**
 * Guard `inboxClaim`: a consumer's ledger writes its inbox claim in the effect's transaction. Off: the
 * local runtime's broken build (faults/inbox-bypass.ts) on the same calls, every claim left out.
 */
export function inboxClaimUnderGuard(
  on: boolean,
  documents: DynamoDBDocumentClient,
  consumer: string,
): DynamoDBDocumentClient {
  return on ? documents : withoutInbox(documents, consumer, () => true);
}
