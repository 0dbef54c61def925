import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { withoutSequenceCondition } from '@exactly-once/runtime/faults/inbox-bypass';

/**
 * Guard `sequenceCondition`: a sequenced ledger's claim (aws/sequenced-ledger.ts) is one update conditioned
 * on the entity's sequence (`seq < :v`, not the last event's id, no call of this event owed). Off: the
 * same update without its condition (faults/inbox-bypass.ts `withoutSequenceCondition`), so a redelivered
 * event is claimed and applied again, and a redriven stale version is applied over the newer one. Only a
 * consumer on the sequenced ledger sends such a claim: the others are unchanged.
 */
export function sequenceConditionUnderGuard(on: boolean, documents: DynamoDBDocumentClient): DynamoDBDocumentClient {
  return on ? documents : withoutSequenceCondition(documents, () => true);
}
