import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { consumerOutputNames } from '@exactly-once/runtime/consumer-spec';
import { ENV } from '@exactly-once/runtime/env-names';
import { PROBE_STACK_CONSUMERS } from '../exactly-once/fixtures/probe-stack-consumers';
import { synthProbeStack } from '../exactly-once/fixtures/probe-stack';
import { synthErrors } from '../support/synth';
import { pipelineOf, resourceById } from '../support/template';

/**
 * A consumer on the sequenced ledger (ConsumerSpec.ledger): its claim lives on its entity item and
 * never expires, so the stack gives it no dedupe horizon (no DEDUPE_HORIZON_SECONDS, no
 * `<Id>DedupeHorizonSeconds` output for the DLQ tool), marks it CONSUMER_LEDGER=sequenced, and the
 * DedupeHorizon rule passes it; an inbox consumer beside it keeps its horizon.
 */

const [inboxSpec, fifoSpec] = PROBE_STACK_CONSUMERS;
const sequenced: ConsumerSpec = { ...fifoSpec, name: 'probe-sequenced', ledger: 'sequenced' };

function variablesOf(template: ReturnType<typeof synthProbeStack>['template'], name: string) {
  const fn = resourceById(template, pipelineOf(template, name).functionId);
  return ((fn.Properties?.Environment as { Variables?: Record<string, unknown> }).Variables ?? {}) as Record<
    string,
    unknown
  >;
}

test('a sequenced consumer has no dedupe horizon and says its ledger; the inbox consumer beside it keeps its horizon', () => {
  const { app, template } = synthProbeStack({ consumers: [inboxSpec, sequenced] });

  const mine = variablesOf(template, sequenced.name);
  const inbox = variablesOf(template, inboxSpec.name);
  const outputs = (template.toJSON() as { Outputs: Record<string, unknown> }).Outputs;

  expect(mine[ENV.dedupeHorizonSeconds]).toBeUndefined();
  expect(mine[ENV.consumerLedger]).toBe('sequenced');
  // Its FIFO try counter still expires with the inbox TTL.
  expect(mine[ENV.inboxTtlSeconds]).toMatch(/^\d+$/);
  expect(outputs[consumerOutputNames(sequenced.name).dedupeHorizonSeconds]).toBeUndefined();
  expect(inbox[ENV.dedupeHorizonSeconds]).toMatch(/^\d+$/);
  expect(inbox[ENV.consumerLedger]).toBeUndefined();
  expect(outputs[consumerOutputNames(inboxSpec.name).dedupeHorizonSeconds]).toBeDefined();
  expect(synthErrors(app)).toEqual([]);
});
