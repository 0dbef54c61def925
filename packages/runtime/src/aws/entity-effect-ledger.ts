import type { RecordWork } from '../consumer/record-work';
import type { EventEnvelope } from '../envelope';
import type { EntityEffectLedger, LedgerResult } from '../inbox/ports';
import { EffectConditionFailed, InboxLedger, STALE } from './inbox-ledger';
import { entityEffectKey } from './inbox-table';

/**
 * The effect of a consumer made by `npm run new:consumer`: one item per
 * consumer and entity (`EFFECT#<consumer>#<entityId>`), `appliedCount += 1` and
 * `lastEventId` under the inbox claim `INBOX#<consumer>#<eventId>`, only while the event's `version`
 * is newer than the entity's `lastVersion` (an older one is stale: never applied after a newer; its inbox
 * entry is then marked superseded by the entity's last event, so the proof finds it judged, not lost,
 * and a copy of it later owes no provider call). The ADD is
 * deliberately not idempotent: a duplicate that got past the claim would count
 * twice, which is what the proof kit's broken build shows (faults/inbox-bypass.ts drops the claim
 * and this version check, a first-write guard, together).
 *
 * @example Built once per cold start from the consumer's wiring
 * ```ts
 * export function makeHandler(wiring: ConsumerWiring) {
 *   const ledger = new DynamoDbEntityEffectLedger(wiring.documents, wiring.ledgerOptions);
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
export class DynamoDbEntityEffectLedger extends InboxLedger implements EntityEffectLedger {
  async apply(event: EventEnvelope, work?: RecordWork): Promise<LedgerResult> {
    try {
      return await this.transact(
        event,
        [
          {
            Update: {
              TableName: this.options.tableName,
              Key: entityEffectKey(this.consumer, event.entityId),
              UpdateExpression:
                'SET consumer = :consumer, entityId = :entityId, lastEventId = :eventId, lastVersion = :version ' +
                'ADD appliedCount :one',
              // The version guard: an entity's state never goes back. A redriven or resent older event
              // (a FIFO head of group dead-lettered, then redriven after newer ones) is stale, not applied.
              ConditionExpression: 'attribute_not_exists(lastVersion) OR lastVersion < :version',
              // The entity's last event, to name what superseded a stale one.
              ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
              ExpressionAttributeValues: {
                ':consumer': this.consumer,
                ':entityId': event.entityId,
                ':eventId': event.eventId,
                ':version': event.version,
                ':one': 1,
              },
            },
          },
        ],
        work,
      );
    } catch (error) {
      if (!(error instanceof EffectConditionFailed) || error.effectIndex !== 0) throw error;
      // Without this entry the stale event leaves no trace: the proof cannot tell it from a lost one.
      const last = error.oldItem;
      await this.markSuperseded(
        event,
        {
          eventId: String(last?.lastEventId ?? 'a newer version'),
          entityId: event.entityId,
          version: typeof last?.lastVersion === 'number' ? last.lastVersion : event.version,
        },
        work,
      );
      return STALE;
    }
  }
}
