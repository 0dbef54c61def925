import type { RecordWork } from '../consumer/record-work';
import type { EventEnvelope } from '../envelope';
import type { EntityEffectLedger, LedgerResult } from '../inbox/ports';
import { STALE } from './inbox-ledger';
import { EntityConditionFailed, SequencedLedger, sequencedEntityKey } from './sequenced-ledger';

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
 * Its item is the transactional generic effect's (DynamoDbEntityEffectLedger) for an event without a
 * tenant, and it keeps that ledger's version guard (`lastVersion < :version`) as its own condition, so a
 * consumer switched from it never applies again an event the other ledger applied: such a copy is a
 * duplicate (the same event id at that version) or stale, and owes no call here (the other ledger's
 * inbox entry held its call).
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
    try {
      return await this.claimOnEntity(event, sequencedEntityKey(this.consumer, event).pk, this.count(event), work);
    } catch (error) {
      // An absent item cannot fail a version guard: without the item the refusal is not judged, but tried again.
      if (!(error instanceof EntityConditionFailed) || error.oldItem === undefined) throw error;
      // Refused by the transactional ledger's version guard alone: an item that ledger wrote, at or past this version.
      const applied = error.oldItem?.lastEventId === event.eventId && error.oldItem.lastVersion === event.version;
      return applied ? { outcome: 'duplicate', providerCallPending: false } : STALE;
    }
  }

  /** The count, its last event, and the transactional generic effect's version guard as the effect's condition. */
  private count(event: EventEnvelope) {
    return {
      set: [
        'consumer = :consumer',
        'entityId = :entityId',
        'lastEventId = :eventId',
        'lastVersion = :version',
        ...(event.tenant === undefined ? [] : ['tenant = :tenant']),
      ],
      add: ['appliedCount :one'],
      condition: 'attribute_not_exists(lastVersion) OR lastVersion < :version',
      values: {
        ':consumer': this.consumer,
        ':entityId': event.entityId,
        ':eventId': event.eventId,
        ':version': event.version,
        ':one': 1,
        ...(event.tenant === undefined ? {} : { ':tenant': event.tenant }),
      },
    };
  }
}
