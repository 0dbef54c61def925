import {
  applyEntityEffect,
  parseEnvelope,
  queueConsumerHandler,
  type ConsumerSpec,
  type ConsumerWiring,
} from '@exactly-once/runtime';
import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws';

/**
 * A consumer of the neutral fixture whose spec names no provider: its effect is the generic entity
 * effect under its inbox claim and nothing else (its handler hands the effect a provider that sends
 * nothing). For the audit's test that such a consumer owes no provider call and keeps its claim check.
 */
export const PROVIDER_LESS_SPEC: ConsumerSpec = {
  name: 'probe-tally',
  fifo: false,
  eventTypes: ['ThingHappened'],
  entry: 'test/simulation/provider-less-consumer.ts',
  batchSize: 10,
  batchingWindowSeconds: 1,
  maxConcurrency: 10,
  staleGuard: 'entity-version',
};

/** No provider: the effect's call goes nowhere, and no provider log hears of it. */
const NO_PROVIDER = { send: () => Promise.resolve() };

export function makeHandler(wiring: ConsumerWiring) {
  const ledger = new DynamoDbEntityEffectLedger(wiring.documents, wiring.ledgerOptions);
  const { name: consumer, eventTypes } = PROVIDER_LESS_SPEC;
  return queueConsumerHandler(wiring, {
    fifo: PROVIDER_LESS_SPEC.fifo,
    parse: parseEnvelope,
    apply: (event, _record, work) =>
      applyEntityEffect(event, { consumer, eventTypes, ledger, provider: NO_PROVIDER }, work),
  });
}
