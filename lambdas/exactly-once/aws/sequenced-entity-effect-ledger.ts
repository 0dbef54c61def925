import type { RecordWork } from '../consumer/record-work';
import type { EventEnvelope } from '../envelope';
import type { EntityEffectLedger, LedgerResult } from '../inbox/ports';
import { SequencedLedger, sequencedEntityKey } from './sequenced-ledger';

/**
 * The generic effect of a consumer made by `npm run new:consumer` on the sequenced ledger
 * (sequenced-ledger.ts): one item per consumer and entity (`EFFECT#<consumer>#<entityId>`, with the
 * tenant when the event has one), `appliedCount += 1`, `lastEventId` and `lastVersion` written in the
 * same conditional UpdateItem as the claim on the item's sequence, never in a transaction: 1 write
 * unit for the claim and the effect, 1 for the done-mark, where the transactional inbox
 * (DynamoDbEntityEffectLedger) spends 2 + 2 + 1. The ADD is deliberately not idempotent: a copy
 * that got past the sequence condition would count twice. Every event's provider call stays owed
 * until its done-mark: a newer version supersedes none.
 *
 * @example A generated consumer's handler on it
 * ```ts
 * export function makeHandler(wiring: ConsumerWiring) {
 *   const ledger = new DynamoDbSequencedEntityEffectLedger(wiring.documents, wiring.ledgerOptions);
 *   const provider = wiring.provider(SPEC.name);
 *   return queueConsumerHandler(wiring, {
 *     fifo: SPEC.fifo,
 *     parse: parseEnvelope,
 *     apply: (event, _record, work) =>
 *       applyEntityEffect(event, { consumer: SPEC.name, eventTypes: SPEC.eventTypes, ledger, provider }, work),
 *   });
 * }
 * ```
 */
export class DynamoDbSequencedEntityEffectLedger extends SequencedLedger implements EntityEffectLedger {
  async apply(event: EventEnvelope, work?: RecordWork): Promise<LedgerResult> {
    return this.claimOnEntity(
      event,
      sequencedEntityKey(this.consumer, event).pk,
      {
        set: [
          'consumer = :consumer',
          'entityId = :entityId',
          'lastEventId = :eventId',
          'lastVersion = :version',
          ...(event.tenant === undefined ? [] : ['tenant = :tenant']),
        ],
        add: ['appliedCount :one'],
        values: {
          ':consumer': this.consumer,
          ':entityId': event.entityId,
          ':eventId': event.eventId,
          ':version': event.version,
          ':one': 1,
          ...(event.tenant === undefined ? {} : { ':tenant': event.tenant }),
        },
      },
      work,
    );
  }
}
