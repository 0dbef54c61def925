import type { RecordWork } from '../consumer/record-work';
import type { EventEnvelope } from '../envelope';
import type { EntityEffectLedger, LedgerResult } from '../inbox/ports';
import { InboxLedger } from './inbox-ledger';
import { entityEffectKey } from './inbox-table';

/**
 * The effect of a consumer made by `npm run new:consumer`: one item per
 * consumer and entity (`EFFECT#<consumer>#<entityId>`), `appliedCount += 1` and
 * `lastEventId` under the inbox claim `INBOX#<consumer>#<eventId>`. The ADD is
 * deliberately not idempotent: only the claim stops a duplicate from counting
 * twice, so the proof kit can see a double when the claim is switched off.
 *
 * @example Built once per cold start from the consumer's wiring
 * ```ts
 * export function makeHandler(wiring: ConsumerWiring) {
 *   const ledger = new DynamoDbEntityEffectLedger(wiring.documents, wiring.ledgerOptions);
 *   const provider = wiring.provider(SPEC.name);
 *   return queueConsumerHandler(wiring, {
 *     fifo: SPEC.fifo,
 *     parse: parseEnvelope,
 *     apply: (event, record, work) =>
 *       applyEntityEffect(event, { consumer: SPEC.name, eventTypes: SPEC.eventTypes, ledger: wiring.ledgerFor(ledger, record), provider }, work),
 *   });
 * }
 * ```
 */
export class DynamoDbEntityEffectLedger extends InboxLedger implements EntityEffectLedger {
  async apply(event: EventEnvelope, work?: RecordWork): Promise<LedgerResult> {
    return this.transact(
      event.eventId,
      [
        {
          Update: {
            TableName: this.options.tableName,
            Key: entityEffectKey(this.consumer, event.entityId),
            UpdateExpression:
              'SET consumer = :consumer, entityId = :entityId, lastEventId = :eventId ADD appliedCount :one',
            ExpressionAttributeValues: {
              ':consumer': this.consumer,
              ':entityId': event.entityId,
              ':eventId': event.eventId,
              ':one': 1,
            },
          },
        },
      ],
      work,
    );
  }
}
