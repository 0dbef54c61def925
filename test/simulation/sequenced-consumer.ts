import {
  applyEntityEffect,
  parseEnvelope,
  PermanentError,
  queueConsumerHandler,
  type ConsumerSpec,
  type ConsumerWiring,
} from '@exactly-once/runtime';
import { DynamoDbSequencedEntityEffectLedger } from '@exactly-once/runtime/aws';

/**
 * A consumer of the neutral fixture on the sequenced ledger (ConsumerSpec.ledger `sequenced`): the generic
 * entity effect, its claim on the thing's own item, FIFO by entity on both event types, calling its
 * provider. For the simulation's tests of that ledger under the same harness and audit as the inbox ones.
 */
export const SEQUENCED_SPEC: ConsumerSpec = {
  name: 'probe-seq',
  fifo: true,
  eventTypes: ['ThingHappened', 'ThingUndone'],
  entry: 'test/simulation/sequenced-consumer.ts',
  providers: ['probe-seq'],
  batchSize: 10,
  batchingWindowSeconds: 0,
  maxConcurrency: 2,
  ledger: 'sequenced',
};

/**
 * The named case's fault: while `on`, the first delivery of each ThingHappened is refused with a (made-up)
 * PermanentError (straight to its DLQ, its FIFO group freed for the thing's next version), and its id kept
 * in `refused`, so the operator's redrive delivers it again. Off unless a test switches it on.
 */
export const REFUSE_FIRST_HAPPENED = { on: false, refused: new Set<string>() };

export function makeHandler(wiring: ConsumerWiring) {
  const ledger = new DynamoDbSequencedEntityEffectLedger(wiring.documents, wiring.ledgerOptions);
  const provider = wiring.provider(SEQUENCED_SPEC.name);
  const { name: consumer, eventTypes } = SEQUENCED_SPEC;
  return queueConsumerHandler(wiring, {
    fifo: SEQUENCED_SPEC.fifo,
    parse: parseEnvelope,
    apply: (event, _record, work) => {
      const refuse = REFUSE_FIRST_HAPPENED;
      if (refuse.on && event.type === 'ThingHappened' && !refuse.refused.has(event.eventId)) {
        refuse.refused.add(event.eventId);
        // Any permanent cause dead-letters it at once; the redrive brings it back.
        throw new PermanentError('ProviderRejected', `${event.eventId} refused once: its group's head dead-lettered`);
      }
      return applyEntityEffect(event, { consumer, eventTypes, ledger, provider }, work);
    },
  });
}
