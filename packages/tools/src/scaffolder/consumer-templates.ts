import { ledgerOf, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';

/**
 * The files `npm run new:consumer` writes for a consumer (new-consumer.ts decides where and checks
 * the names): its spec entry, its handler factory and the one-line deployed binding of it, its
 * effect, its ledger and its unit test, with or without a provider. `id` is the consumer's name in PascalCase (consumerId); `folder` the example's consumer
 * folder (lambdas/<example>).
 */

/** The one provider a scaffolded consumer calls (its spec's), or undefined for one made with --no-provider. */
export const providerOf = (spec: ConsumerSpec): string | undefined => spec.providers?.[0];

export function specSource(spec: ConsumerSpec): string {
  return `  {
    name: '${spec.name}',
    fifo: ${spec.fifo},
    eventTypes: [${spec.eventTypes.map((t) => `'${t}'`).join(', ')}],
    entry: '${spec.entry}',
    batchSize: ${spec.batchSize},
    batchingWindowSeconds: ${spec.batchingWindowSeconds},
    maxConcurrency: ${spec.maxConcurrency},
${spec.providers === undefined ? '' : `    providers: [${spec.providers.map((p) => `'${p}'`).join(', ')}],\n`}    staleGuard: '${spec.staleGuard}',
${spec.ledger === undefined ? '' : `    ledger: '${spec.ledger}',\n`}  },
`;
}

export function entryPointSource(spec: ConsumerSpec, id: string): string {
  const queue = spec.fifo
    ? 'FIFO queue: one entity’s events in order; a failed record stops its group'
    : 'Standard queue: records in parallel, in any order';
  const provider = providerOf(spec);
  const heard =
    provider === undefined
      ? "Its spec names no provider: the claim and its ledger's writes are the whole effect."
      : `then its provider (${provider}) hears of it under \`${spec.name}:<eventId>\`.`;
  const wiredProvider =
    provider === undefined
      ? ''
      : `  // The provider its spec names (providers in ../consumers.ts).\n  const provider = wiring.provider('${provider}');\n`;
  return `import { deployedConsumerWiring, parseEnvelope, queueConsumerHandler, type ConsumerWiring } from '@exactly-once/runtime';
import { DynamoDb${id}Ledger } from '../aws/${spec.name}-ledger';
import { consumerSpec } from '../consumers';
import { apply${id}Effect } from '../use-cases/${spec.name}-effect';

const SPEC = consumerSpec('${spec.name}');

/** What the consumer runs on: the mechanism's wiring (deployed: \`deployedConsumerWiring\` of its spec). */
export type Parts = ConsumerWiring;

/**
 * The ${spec.name} consumer, made by \`npm run new:consumer\`.
 * ${queue} (packages/runtime/src/consumer/queue-consumer.ts).
 * Each event it takes is applied once per eventId (use-cases/${spec.name}-effect.ts).
 * ${heard}
 *
 * \`makeHandler\` is the whole function on given parts, and this module reads no environment
 * when it loads: the deployed binding (../handlers/${spec.name}-consumer.ts) gives it
 * \`partsFromEnv()\`, the simulation one simulated invocation's.
 */
export function makeHandler(wiring: Parts) {
  const ledger = new DynamoDb${id}Ledger(wiring.documents, wiring.ledgerOptions);
${wiredProvider}  return queueConsumerHandler(wiring, {
    fifo: SPEC.fifo,
    parse: parseEnvelope,
    apply: (event, _record, work) =>
      apply${id}Effect(
        event,
        {
          consumer: SPEC.name,
          eventTypes: SPEC.eventTypes,
          ledger,${provider === undefined ? '' : '\n          provider,'}
        },
        work,
      ),
  });
}

/** The deployed parts: the wiring its environment names (read once, at cold start). */
export function partsFromEnv(): Parts {
  return deployedConsumerWiring(SPEC);
}
`;
}

/** The consumer's deployed binding: its factory on the parts its environment names, once per cold start. */
export function bindingSource(spec: ConsumerSpec): string {
  return `import { makeHandler, partsFromEnv } from '../entry-points/${spec.name}-consumer';

/** The deployed ${spec.name} consumer: its factory on the parts its environment names, built once at cold start. */
export const handler = makeHandler(partsFromEnv());
`;
}

/** How the generated files name the claim and where the consumer's own writes go, by its ledger. */
function claimWords(spec: ConsumerSpec) {
  return ledgerOf(spec) === 'sequenced'
    ? {
        claim: "the claim on the entity's own item",
        together: 'in the same conditional update as the claim on its entity item',
        base: 'a SequencedLedger',
      }
    : { claim: 'the inbox claim', together: 'in the same transaction as the inbox claim', base: 'an InboxLedger' };
}

export function effectSource(spec: ConsumerSpec, id: string): string {
  const provider = providerOf(spec);
  const words = claimWords(spec);
  const request = `${id.charAt(0).toLowerCase()}${id.slice(1)}ProviderRequest`;
  // Without a provider the claim's transaction is the whole effect: no call, no request to shape.
  const what =
    provider === undefined
      ? ` * (../aws/${spec.name}-ledger.ts; as generated, a count per entity). Its spec names no provider,
 * so that write is the whole effect: a duplicate finds the claim and writes nothing. A
 * consumer whose own state goes ${words.together} overrides the ledger's
 * \`apply\` and keeps this file.`
      : ` * (../aws/${spec.name}-ledger.ts; as generated, a count per entity), then one call to its provider
 * (${provider}) under \`${spec.name}:<eventId>\`, sending ${request}(event). A consumer
 * whose own state goes ${words.together} overrides the ledger's \`apply\`, shapes
 * its request below, and keeps this file.`;
  const rest =
    provider === undefined
      ? ` * ${words.base}), passing \`work\` on (its signal to every call).`
      : ` * ${words.base}); call the provider
 * through callProviderIfOwed under the key it hands the call, passing \`work\`
 * on (its signal to every call, its lease to the provider call).`;
  const deps = provider === undefined ? 'deps' : `{ ...deps, providerRequest: ${request} }`;
  const requestSource =
    provider === undefined
      ? ''
      : `
/**
 * What its provider is sent for an event: as generated, which event of which entity. Shape it
 * from the event (a billing call needs the amount): read \`event.payload\` with your schema,
 * \`parseWith(schema, event.payload, 'a billed order')\`; a payload that fails it is a
 * PermanentError, and the event goes to its DLQ before anything is written. It must depend on
 * the event alone: a redelivery that still owes the call sends it again under the same key.
 */
export function ${request}(event: EventEnvelope): Record<string, unknown> {
  return {
    consumer: '${spec.name}',
    eventId: event.eventId,
    type: event.type,
    entityId: event.entityId,
    version: event.version,
  };
}
`;
  return `import { applyEntityEffect, type ApplyOutcome, type EntityEffectDeps, type EventEnvelope, type RecordWork } from '@exactly-once/runtime';

/**
 * What the ${spec.name} consumer does with an event it takes: the generic effect
 * (applyEntityEffect, packages/runtime/src): its ledger's \`apply\` under ${words.claim}
${what}
 *
 * Otherwise replace it with your own: read \`event.payload\` with your schema (parseWith,
 * a PermanentError for a payload no retry can fix); write the effect
 * ${words.together} (a method of its ledger, ../aws/${spec.name}-ledger.ts,
${rest}
 */
export function apply${id}Effect(
  event: EventEnvelope,
  deps: EntityEffectDeps,
  work: RecordWork,
): Promise<ApplyOutcome> {
  return applyEntityEffect(event, ${deps}, work);
}
${requestSource}`;
}

export function ledgerSource(spec: ConsumerSpec, id: string): string {
  if (ledgerOf(spec) === 'sequenced')
    return `import { DynamoDbSequencedEntityEffectLedger } from '@exactly-once/runtime/aws';

/**
 * The ${spec.name} consumer's ledger, made by \`npm run new:consumer\`: for now the generic effect's on the
 * sequenced ledger (a count on the entity's own item, packages/runtime/src/aws/sequenced-entity-effect-ledger.ts).
 * The claim lives on that item, guarded by the event's version: claim and effect are one conditional
 * UpdateItem, with no inbox item and no transaction, and the claim never expires (its spec's
 * \`ledger: 'sequenced'\`, so the stack gives it no dedupe horizon).
 *
 * Its own state goes on that item: a method that hands its attributes to
 * \`this.claimOnEntity(event, pk, { set, add, values }, work)\`, so they commit in the one update
 * with the claim (a duplicate or an older version then writes nothing). An effect that must also write
 * other items takes the transactional form (\`alsoWrite\`); an effect that sums over many entities' events
 * (a total per customer) belongs on the inbox ledger (\`npm run new:consumer -- <name> --ledger inbox\`,
 * docs/architecture.md, "Two ledgers"). The effect (use-cases/${spec.name}-effect.ts) calls it${providerOf(spec) === undefined ? '' : ', then the provider'}.
 */
export class DynamoDb${id}Ledger extends DynamoDbSequencedEntityEffectLedger {}
`;
  return `import { DynamoDbEntityEffectLedger } from '@exactly-once/runtime/aws';

/**
 * The ${spec.name} consumer's ledger, made by \`npm run new:consumer\`: for now the generic effect's
 * (a count per entity under the inbox claim, packages/runtime/src/aws/entity-effect-ledger.ts).
 *
 * Its own state goes here: a method that hands its writes to
 * \`this.transact(event, [...items], work)\`, so they commit in one transaction with the
 * inbox claim (a duplicate then writes nothing), as every InboxLedger's methods do; the
 * effect (use-cases/${spec.name}-effect.ts) calls it${providerOf(spec) === undefined ? '' : ', then the provider'}.
 */
export class DynamoDb${id}Ledger extends DynamoDbEntityEffectLedger {}
`;
}

/** The lines of the generated test that differ with and without a provider. */
function providerTestLines(spec: ConsumerSpec, request: string, folder: string) {
  const provider = providerOf(spec);
  const requestImport =
    provider === undefined ? '' : `import { ${request} } from '../../${folder}/use-cases/${spec.name}-effect';\n`;
  const once =
    provider === undefined
      ? `test('the same event delivered twice is applied once, and calls no provider (its spec names none)', async () => {`
      : `test('the same event delivered twice is applied once and reaches its provider once, with its request', async () => {`;
  const calls =
    provider === undefined
      ? 'expect(providerCalls(h)).toEqual([]);'
      : `expect(providerCalls(h)).toEqual([
    { idempotencyKey: \`\${SPEC.name}:\${event.eventId}\`, provider: SPEC.providers?.[0], payload: ${request}(event) },
  ]);`;
  const versions =
    provider === undefined
      ? `test('two versions of one entity, in order, are both applied; an older one after them is stale', async () => {`
      : `test('two versions of one entity, in order, are both applied and both reach the provider; an older one after them is stale', async () => {`;
  const versionCalls =
    provider === undefined
      ? 'expect(providerKeys(h)).toEqual([]);'
      : 'expect(providerKeys(h)).toEqual([\`\${SPEC.name}:event-a\`, \`\${SPEC.name}:event-b\`]);';
  const judged =
    ledgerOf(spec) === 'sequenced'
      ? `// Judged on the entity's item, which stays at its newest version: no inbox entry on this ledger.
  expect(h.table.itemsStartingWith(EFFECT_ITEMS)).toEqual([expect.objectContaining({ lastEventId: 'event-b' })]);
  expect(h.table.itemsStartingWith('INBOX#')).toEqual([]);`
      : `// Judged, not lost: its inbox entry names the event that superseded it.
  expect(h.table.itemsStartingWith(\`INBOX#\${SPEC.name}#event-late\`)).toEqual([
    expect.objectContaining({ supersededBy: 'event-b' }),
  ]);`;
  return { requestImport, once, calls, versions, versionCalls, judged };
}

export function testSource(spec: ConsumerSpec, id: string, folder: string): string {
  const name = spec.name;
  const request = `${id.charAt(0).toLowerCase()}${id.slice(1)}ProviderRequest`;
  const { requestImport, once, calls, versions, versionCalls, judged } = providerTestLines(spec, request, folder);
  const table =
    ledgerOf(spec) === 'sequenced'
      ? 'the in-memory DynamoDB as its Effects table'
      : 'a small Effects table enforcing the inbox claim';
  return `import { consumerSpec } from '../../${folder}/consumers';
${requestImport}import {
  deadLettered,
  deliver,
  envelope,
  loadGeneratedConsumer,
  providerCalls,
  providerKeys,
  recordOf,
  resetGeneratedConsumer,
  type GeneratedConsumer,
} from '../support/generated-consumers';

/**
 * The ${name} consumer (made by \`npm run new:consumer\`) with the SDK mocked,
 * ${table} behind it (test/support/generated-consumers.ts).
 */

const SPEC = consumerSpec('${name}');
const EFFECT_ITEMS = \`EFFECT#\${SPEC.name}#\`;
let h: GeneratedConsumer;

beforeAll(async () => {
  h = await loadGeneratedConsumer(SPEC, () => import('../../${folder}/handlers/${name}-consumer'));
});

beforeEach(() => resetGeneratedConsumer(h));

${once}
  const event = envelope(SPEC.eventTypes[0], 'entity-1');

  const first = await deliver(h, recordOf(h, event));
  const second = await deliver(h, recordOf(h, event));

  expect([first.batchItemFailures, second.batchItemFailures]).toEqual([[], []]);
  expect(h.table.itemsStartingWith(EFFECT_ITEMS)).toEqual([
    expect.objectContaining({ entityId: 'entity-1', appliedCount: 1, lastEventId: event.eventId }),
  ]);
  ${calls}
});

${versions}
  const [first, second] = [
    { ...envelope(SPEC.eventTypes[0], 'entity-2', 'event-a'), version: 1 },
    { ...envelope(SPEC.eventTypes[0], 'entity-2', 'event-b'), version: 2 },
  ];

  const responses = [await deliver(h, recordOf(h, first)), await deliver(h, recordOf(h, second))];
  const late = await deliver(h, recordOf(h, { ...first, eventId: 'event-late' }));

  expect([...responses, late].map((r) => r.batchItemFailures)).toEqual([[], [], []]);
  expect(h.table.itemsStartingWith(EFFECT_ITEMS)).toEqual([expect.objectContaining({ entityId: 'entity-2', appliedCount: 2 })]);
  ${versionCalls}
  ${judged}
});

test.each([
  ['an event type it does not take', 'UnsupportedEventType', JSON.stringify(envelope('NotTakenByThisConsumer', 'entity-3'))],
  ['a body that is not an event envelope', 'SchemaViolation', JSON.stringify({ hello: 'world' })],
])('%s goes to its DLQ with cause %s, is acked, and applies nothing', async (_what, cause, body) => {
  const record = recordOf(h, body);

  const response = await deliver(h, record);

  expect(response.batchItemFailures).toEqual([]);
  expect(deadLettered(h)).toEqual([
    expect.objectContaining({
      QueueUrl: h.deadLetterQueueUrl,
      MessageBody: body,
      MessageAttributes: expect.objectContaining({
        failureCause: { DataType: 'String', StringValue: cause },
        consumer: { DataType: 'String', StringValue: SPEC.name },
      }),
    }),
  ]);
  expect(h.table.items.size).toBe(0);
  expect(providerKeys(h)).toEqual([]);
});
`;
}
