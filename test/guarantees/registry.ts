/**
 * What this project guarantees, and what it does not, as data: each guarantee names the code that
 * enforces it, the tests that prove it and the page that explains it. `check.ts` holds every entry to
 * the repository (a renamed test, a moved symbol or a deleted page is a failing unit test), and
 * `render.ts` writes packages/GUARANTEES.md's table from it: edit here, then `npx tsx test/guarantees/render.ts`.
 */

/** An identifier declared in a file (paths from the repository root). */
export interface CodeRef {
  file: string;
  symbol: string;
}

/**
 * A test that proves the guarantee: its file and its title as written (a test, it or describe), whole;
 * or, with `templated`, a distinctive literal part of a templated title (`${x} fails ...`, `.each`'s
 * `%s`). A shared suite (a contract) is written in a module that test files run: `runBy` names those
 * files, and each must import the module.
 */
export interface TestRef {
  file: string;
  name: string;
  templated?: true;
  runBy?: readonly string[];
}

/** A page under docs/ that explains it, and the heading's anchor where one fits. */
export interface DocRef {
  page: string;
  anchor?: string;
}

export interface Guarantee {
  id: string;
  statement: string;
  enforcedIn: readonly CodeRef[];
  provedBy: readonly TestRef[];
  doc: DocRef;
}

/** What is explicitly not guaranteed, and where a test shows the limit. */
export interface NonGuarantee {
  id: string;
  statement: string;
  doc: DocRef;
  shownBy?: readonly TestRef[];
}

/** The mechanism's registry (this file): its guarantees, and what it does not guarantee. */
export interface Registry {
  guarantees: readonly Guarantee[];
  nonGuarantees: readonly NonGuarantee[];
}

/**
 * The example's registry, beside the example as `tooling/<example>/guarantees.ts` (exporting it as
 * `guarantees`; `<example>` is `exactlyOnce.example` in package.json), loaded by that path (example.ts):
 * the rules of its own domain, what it does not guarantee, and what its code and tests add to the
 * mechanism's entries, by the mechanism's id. A fork with another domain replaces that file and edits
 * nothing here; without one, the example lists nothing.
 *
 * @example A booking domain's own rule, and one more proof of a mechanism guarantee
 * ```ts
 * import type { ExampleRegistry } from './registry';
 *
 * export const guarantees: ExampleRegistry = {
 *   guarantees: [
 *     {
 *       id: 'no-double-booking',
 *       statement: 'A room is never booked twice for one night',
 *       enforcedIn: [{ file: 'lambdas/sample-domain/use-cases/book.ts', symbol: 'book' }],
 *       provedBy: [{ file: 'test/unit/create-booking.test.ts', name: 'a night already taken is 409' }],
 *       doc: { page: 'docs/http-api.md' },
 *     },
 *   ],
 *   nonGuarantees: [],
 *   alsoProvedBy: {
 *     'idempotency-key-contract': [{ file: 'test/unit/create-booking.test.ts', name: 'one booking per key' }],
 *   },
 * };
 * ```
 */
export interface ExampleRegistry extends Registry {
  /**
   * Tests of the example that prove a mechanism guarantee again (or show one of its limits), by the
   * mechanism's id. Each must reach the example: a test that runs without it belongs in the mechanism's
   * registry.
   */
  alsoProvedBy: Readonly<Record<string, readonly TestRef[]>>;
  /** Where the example's code applies a mechanism guarantee, by the mechanism's id. */
  alsoEnforcedIn?: Readonly<Record<string, readonly CodeRef[]>>;
}

const ARCHITECTURE = 'docs/architecture.md';
const HTTP_API: DocRef = { page: 'docs/http-api.md' };
const PROOF_KIT: DocRef = { page: 'docs/proof-kit.md' };
const SIMULATION: DocRef = { page: 'docs/simulation.md' };
const architecture = (anchor: string): DocRef => ({ page: ARCHITECTURE, anchor });

const PORT_CONTRACTS = 'test/simulation/contracts/port-contracts.ts';
const PORT_CONTRACT_RUNNERS = ['test/simulation/memory-contracts.test.ts', 'test/integration/port-contracts.test.ts'];
const QUEUE_CONTRACTS = 'test/simulation/contracts/queue-contracts.ts';
const QUEUE_CONTRACT_RUNNERS = [
  'test/simulation/memory-queue-contracts.test.ts',
  'test/integration/queue-contracts.test.ts',
];
const IDEMPOTENCY_CONTRACTS = 'test/simulation/contracts/idempotency-contracts.ts';
const IDEMPOTENCY_CONTRACT_RUNNERS = [
  'test/simulation/memory-idempotency-contracts.test.ts',
  'test/integration/idempotency-contracts.test.ts',
];

const OUTBOX_TABLE = 'packages/runtime/src/aws/outbox-table.ts';
const INBOX_LEDGER = 'packages/runtime/src/aws/inbox-ledger.ts';
const TRANSACTION_TOKEN = 'packages/runtime/src/aws/transaction-token.ts';
const FINGERPRINT = 'packages/runtime/src/inbox/fingerprint.ts';
const PUBLISHER = 'packages/runtime/src/aws/sqs-event-publisher.ts';
const QUEUE_CONSUMER = 'packages/runtime/src/consumer/queue-consumer.ts';
const CONSUMER_SUPPORT = 'packages/runtime/src/consumer/consume-record.ts';
const BACKOFF = 'packages/runtime/src/consumer/retry-budget.ts';
const FUNCTION_DEFAULTS = 'packages/cdk/src/function-defaults.ts';
const EXACTLY_ONCE = 'packages/cdk/src/exactly-once.ts';
const VERIFY = 'packages/tools/src/proof-kit/verify.ts';

const UNIT_CONSUMERS = 'test/unit/consumers.test.ts';
const SENT_FINGERPRINT = 'test/unit/sent-fingerprint.test.ts';
const UNIT_TRANSACTION_TOKEN = 'test/unit/transaction-token.test.ts';
const INT_ENTITY_EFFECT = 'test/integration/entity-effect.test.ts';
const INT_KEY_SHAPES = 'test/integration/key-shapes.test.ts';
const SEQUENCED_LEDGER = 'packages/runtime/src/aws/sequenced-ledger.ts';
const SEQUENCED_CASES = 'test/support/sequenced-ledger-cases.ts';
const SEQUENCED_RUNNERS = ['test/unit/sequenced-ledger.test.ts', 'test/integration/sequenced-ledger.test.ts'];
const SEQUENCED_ANCHOR = 'two-ledgers-the-transactional-inbox-and-the-sequenced-ledger-for-an-effect-on-its-own-entity';
const WHICH_LEDGER_ANCHOR = 'which-ledger-a-consumer-should-use-and-why';
const SEQUENCED_SIMULATION = 'test/simulation/sequenced.test.ts';
const VERIFY_SEQUENCED = 'test/unit/verify-sequenced.test.ts';
const UNIT_RELAY = 'test/unit/relay.test.ts';
const UNIT_PUBLISHER = 'test/unit/sqs-event-publisher.test.ts';
const UNIT_RETRY = 'test/unit/retry-budget.test.ts';
const UNIT_BACKOFF = 'test/unit/backoff-and-events.test.ts';
const UNIT_PROVIDER = 'test/unit/provider-completion.test.ts';
const INT_PIPELINES = 'test/integration/pipelines.test.ts';
const INT_SWEEPER = 'test/integration/outbox-sweeper.test.ts';
const INT_OUTBOX = 'test/integration/guarantee-transactional-outbox.test.ts';
const INT_SQS_SAFE = 'test/integration/guarantee-sqs-safe-identifiers.test.ts';
const UNIT_DEPENDENCY_FAILURE = 'test/unit/guarantee-dependency-failure.test.ts';
const INFRA_ASPECTS = 'test/infra/aspects.test.ts';
const INFRA_PIPELINES = 'test/infra/pipelines.test.ts';
const INFRA_IAM_REST_API = 'test/infra/iam-rest-api.test.ts';
const PROOF_KIT_TEST = 'test/runtime/proof-kit.test.ts';
const PROOF_KIT_ADVERSARIAL_TEST = 'test/runtime/proof-kit-adversarial.test.ts';
const OUTAGES_TEST = 'test/runtime/outages.test.ts';
const GUARDS = 'test/simulation/guards.test.ts';
const TIMEOUTS = 'test/simulation/timeouts.test.ts';

export const GUARANTEES: readonly Guarantee[] = [
  {
    id: 'idempotency-key-contract',
    statement:
      'Idempotency-Key contract: key parsing, scope (caller, key), canonical fingerprint, 400/409/422, `Idempotent-Replayed`, 24 h expiry',
    enforcedIn: [
      { file: 'packages/runtime/src/api/idempotent-command.ts', symbol: 'idempotentCommand' },
      { file: 'packages/runtime/src/api/idempotency-key.ts', symbol: 'parseIdempotencyKey' },
      { file: 'packages/runtime/src/runtime/canonical-json.ts', symbol: 'canonicalJson' },
    ],
    provedBy: [
      {
        file: 'test/exactly-once/idempotency-key.test.ts',
        name: 'quoted and bare forms of the same key are the same key',
      },
      { file: 'test/exactly-once/canonical-json.test.ts', name: 'key order does not matter, at any depth' },
      {
        file: 'test/exactly-once/idempotent-command.test.ts',
        name: 'the same key and body twice: the command runs once, the retry gets the stored answer marked replayed',
      },
      {
        file: 'test/exactly-once/idempotent-command.test.ts',
        name: 'the same key with another body: 422, the command not run again',
      },
    ],
    doc: HTTP_API,
  },
  {
    id: 'transactional-outbox',
    statement:
      "Transactional outbox: `outboxPut` writes an event into its entity's partition, conditional on its absence, for the transaction that changes the entity: the change and its event (a deterministic `eventId`) commit together or not at all, and a second write of one event is refused, never a second event",
    enforcedIn: [
      { file: OUTBOX_TABLE, symbol: 'outboxPut' },
      { file: OUTBOX_TABLE, symbol: 'outboxItemKey' },
    ],
    provedBy: [
      {
        file: INT_OUTBOX,
        name: "one POST /things writes the thing and its ThingHappened outbox item in one TransactWriteItems, in the thing's partition",
      },
      { file: INT_OUTBOX, name: 'if the outbox item cannot be written, neither is the thing (one transaction)' },
      {
        file: INT_OUTBOX,
        name: 'a second write of an event already in the outbox is refused, and the change written with it is not applied',
      },
      {
        file: INT_OUTBOX,
        name: 'the same request after its idempotency record is lost derives the same thing and event: still one thing, one outbox item',
      },
    ],
    doc: architecture('a-transactional-outbox-not-write-then-publish'),
  },
  {
    id: 'relay',
    statement:
      'Relay: only outbox INSERTs invoke it; every batch entry is checked; exactly the failed sequence numbers are reported; bisect, bounded retries, on-failure queue; `SendMessageBatch` entry ids are positions in the chunk, never derived from event ids (which may be long or collide once punctuation is replaced)',
    enforcedIn: [
      { file: 'packages/runtime/src/wiring/entry-points/relay-handler.ts', symbol: 'makeHandler' },
      { file: PUBLISHER, symbol: 'SqsEventPublisher' },
      { file: 'packages/cdk/src/outbox-relay.ts', symbol: 'OutboxRelay' },
    ],
    provedBy: [
      {
        file: UNIT_RELAY,
        name: 'records that are not outbox INSERTs are ignored: nothing sent, nothing marked, nothing failed',
      },
      { file: UNIT_RELAY, name: ' fails exactly that record, and it is not marked dispatched', templated: true },
      { file: UNIT_RELAY, name: 'an entry missing from both Successful and Failed is treated as failed' },
      { file: UNIT_PUBLISHER, name: 'batch entry ids are positions in the chunk, never derived from event ids' },
      {
        file: UNIT_PUBLISHER,
        name: 'an event id over 80 characters and two ids equal once punctuation is replaced (a.1, a:1) publish, with the nine beside them',
      },
      { file: INFRA_PIPELINES, name: 'its stream filter pattern is eventName = INSERT and NewImage.entity.S = OUTBOX' },
      {
        file: INFRA_PIPELINES,
        name: 'bisects on error, retries a bounded number of times for a bounded age, then sends to an on-failure queue',
      },
      {
        file: INT_PIPELINES,
        name: 'the relay marks each outbox item dispatched, and that MODIFY does not pass the filter',
      },
    ],
    doc: architecture('a-transactional-outbox-not-write-then-publish'),
  },
  {
    id: 'sweeper',
    statement:
      'Sweeper: a safety net for outbox items the stream never relayed; it re-reads each index candidate from the table, so a lagging index neither republishes a dispatched item nor counts it as pending',
    enforcedIn: [
      { file: 'packages/runtime/src/wiring/entry-points/sweeper-handler.ts', symbol: 'makeHandler' },
      { file: 'packages/runtime/src/outbox/relay.ts', symbol: 'sweepOutbox' },
      { file: 'packages/runtime/src/aws/dynamodb-outbox-store.ts', symbol: 'stillPending' },
    ],
    provedBy: [
      {
        file: UNIT_RELAY,
        name: 'republishes only items pending longer than the sweep age, oldest first, and marks them dispatched',
      },
      { file: UNIT_RELAY, name: 'a dispatched or vanished item is dropped, and unprocessed keys are asked again' },
      {
        file: INT_SWEEPER,
        name: 'an outbox item the stream never relayed, older than the sweep age, is published once and marked dispatched; the next sweep publishes nothing',
      },
      {
        file: INT_SWEEPER,
        name: 'index lag: an item marked dispatched on its base item but still in the pending index is neither republished nor counted as oldest pending',
      },
    ],
    doc: architecture('a-transactional-outbox-not-write-then-publish'),
  },
  {
    id: 'inbox-claim',
    statement:
      'Inbox claim (`attribute_not_exists`) and effect in the same transaction; only the claim\'s condition failure means "already done"',
    enforcedIn: [
      { file: INBOX_LEDGER, symbol: 'InboxLedger' },
      { file: INBOX_LEDGER, symbol: 'claim' },
    ],
    provedBy: [
      { file: INT_PIPELINES, name: 'a crash after the transaction but before the ack: the redelivery is suppressed' },
      {
        file: INT_PIPELINES,
        name: 'two concurrent deliveries of one message: one applied, the other duplicate or transient; redelivered, one effect and one provider call',
      },
      {
        file: INT_PIPELINES,
        name: 'redriving a DLQ copy of an applied message (receive, send, delete) makes no second effect',
      },
      {
        file: UNIT_CONSUMERS,
        name: 'the claim cancelled with ConditionalCheckFailed is a duplicate: acked, effect not repeated, provider still called with the key',
      },
      {
        file: UNIT_CONSUMERS,
        name: 'the inbox claim is keyed by consumer and eventId, conditioned on absence, and outlives redeliveries (TTL)',
      },
      { file: GUARDS, name: 'without the inbox claim, a redelivered event is applied twice: found within 3 seeds' },
    ],
    doc: architecture('the-inbox-claim-in-the-same-transaction-as-the-effect'),
  },
  {
    id: 'event-id-reused',
    statement:
      "One id, one event: a claim stores the fingerprint of what the producer sent (the record's message body in canonical JSON, without `occurredAt` and `traceparent`, which a redrive or a tool may rewrite; never the consumer's parse), with its version (`v2:`); a failed claim with another fingerprint of this version is never acknowledged as a duplicate but dead-lettered as `EventIdReused` with both fingerprints; a claim without one, or with one of an older version, still means the same event, so a deploy that changes the consumer's schema never turns a retry whose provider call is owed into `EventIdReused`",
    enforcedIn: [
      { file: FINGERPRINT, symbol: 'sentFingerprint' },
      { file: FINGERPRINT, symbol: 'bodyFingerprint' },
      { file: FINGERPRINT, symbol: 'fingerprintsDiffer' },
      { file: CONSUMER_SUPPORT, symbol: 'consume' },
      { file: INBOX_LEDGER, symbol: 'refuseAnotherEvent' },
      { file: INBOX_LEDGER, symbol: 'sentFingerprintOf' },
      { file: 'packages/runtime/src/runtime/canonical-json.ts', symbol: 'canonicalJson' },
    ],
    provedBy: [
      {
        file: 'test/simulation/parser-change.test.ts',
        name: 'with the claims fingerprinting the parse, a parser change mid-run turns redelivered events into EventIdReused: found within 3 seeds; with the body fingerprint every invariant holds',
      },
      {
        file: SENT_FINGERPRINT,
        name: 'a schema change between the claim and the duplicate (the parse adds a default) still reads as a duplicate, and the owed provider call is made once',
      },
      {
        file: SENT_FINGERPRINT,
        name: 'a different body under the same id is still EventIdReused: dead-lettered with both fingerprints, nothing applied again, no second call',
      },
      {
        file: SENT_FINGERPRINT,
        name: 'the same body with occurredAt and traceparent rewritten (a redrive past the horizon, refreshed trace context) is a duplicate',
      },
      {
        file: SENT_FINGERPRINT,
        name: 'a claim whose fingerprint is of an older version (v1 hashed the parse) is taken as the same event, never as a mismatch',
      },
      {
        file: SENT_FINGERPRINT,
        name: 'a ledger called without a record fingerprints the envelope it is given: the same value as the body the relay sends for it',
      },
      {
        file: 'test/exactly-once/canonical-json.test.ts',
        name: 'a "__proto__" member is kept, not taken for the prototype: two bodies differing only there differ',
      },
      {
        file: 'test/exactly-once/entity-consumer.test.ts',
        name: 'another event under a reused eventId is not acknowledged as a duplicate: DLQ EventIdReused with both fingerprints; nothing applied again, no second call',
      },
      {
        file: 'test/exactly-once/entity-consumer.test.ts',
        name: 'the same event with a rewritten occurredAt (the DLQ tool redrives past the horizon so) is still a duplicate',
      },
      {
        file: 'test/exactly-once/entity-consumer.test.ts',
        name: 'a claim written before fingerprints were stored still makes its event a duplicate',
      },
      {
        file: INT_ENTITY_EFFECT,
        name: 'another event under a used eventId is refused as EventIdReused: the count and the claim stay as they were',
      },
      {
        file: GUARDS,
        name: 'without the fingerprint in the claim, a forged copy and the real event under one id: one is taken for a duplicate of the other and lost unseen: found within 1 seed',
      },
      {
        file: 'test/unit/verify.test.ts',
        name: "a claim holding another event under a produced event's id is reported as event-replaced, per consumer; its own content is not",
      },
    ],
    doc: architecture('event-integrity-one-id-one-event'),
  },
  {
    id: 'tenant-in-inbox-key',
    statement:
      "An envelope's verified `tenant` is part of its inbox key, its fingerprint and its provider key (`<consumer>@<tenant hash>:<eventId>`): two tenants' events under one id are two events, each applied, its provider call made under its own key and recorded on its own entry; the inbox key escapes the eventId's `#` and `%`, so no two events share one",
    enforcedIn: [
      { file: 'packages/runtime/src/aws/inbox-table.ts', symbol: 'inboxKey' },
      { file: 'packages/runtime/src/inbox/keys.ts', symbol: 'inboxPk' },
      { file: 'packages/runtime/src/inbox/keys.ts', symbol: 'providerKey' },
    ],
    provedBy: [
      {
        file: INT_ENTITY_EFFECT,
        name: 'two tenants whose producers use the same eventId are two events: each applied once, each call recorded on its own entry',
      },
      {
        file: INT_ENTITY_EFFECT,
        name: 'their provider calls carry two keys: two effects at a key-honouring provider, neither refused',
      },
      {
        file: INT_KEY_SHAPES,
        name: "an eventId `a#b` without a tenant and tenant `a`'s eventId `b` are two events: both applied",
      },
    ],
    doc: architecture('event-integrity-one-id-one-event'),
  },
  {
    id: 'keys-are-a-migration',
    statement:
      "Keys are a migration: a claim is looked for under every inbox key shape the ledger knows (`LedgerOptions.keys`), in the claim's own transaction (a `ConditionCheck` per other shape, read like a failed claim), so a claim written by an older release (or by this one, found by step 1 of a two-step upgrade) makes its event a duplicate; its lease and done-mark act on that entry, its owed call is sent under the provider key its claim recorded (`<consumer>:<eventId>` for a claim that recorded none), and a supersede marks every shape, so no PICK follows a CANCEL_PICK for an OrderPlaced claimed by an older release",
    enforcedIn: [
      { file: 'packages/runtime/src/aws/inbox-claim-keys.ts', symbol: 'claimKeys' },
      { file: 'packages/runtime/src/aws/inbox-claim-keys.ts', symbol: 'owedProviderKey' },
      { file: INBOX_LEDGER, symbol: 'transactWith' },
      { file: INBOX_LEDGER, symbol: 'supersede' },
    ],
    provedBy: [
      {
        file: INT_KEY_SHAPES,
        name: 'claimed under the key without the tenant, its call done: this release finds it, one effect, no second call',
      },
      {
        file: INT_KEY_SHAPES,
        name: 'its call still owed: this release makes it under the key the old claim owes it under, once, and marks that entry done',
      },
      {
        file: INT_KEY_SHAPES,
        name: 'an eventId with `#`, claimed under the unescaped key of release 2: found, one effect',
      },
      {
        file: INT_KEY_SHAPES,
        name: "another tenant's event under the id, at the old key without the tenant, is not this event's claim: both applied",
      },
      {
        file: INT_KEY_SHAPES,
        name: 'release 2 finds the claim (same key for an eventId without `#`): one effect, no second call',
      },
      {
        file: INT_KEY_SHAPES,
        name: 'written by step 1 of a two-step upgrade, its call owed: release 2 makes it under the same key, once',
      },
      {
        file: INT_KEY_SHAPES,
        name: 'a claim of an older release recorded no provider key: its duplicate owes the call under `<consumer>:<eventId>`',
      },
    ],
    doc: { page: 'docs/deploying.md', anchor: 'deploys-and-rollbacks-while-messages-are-in-flight' },
  },
  {
    id: 'supersede-mark-bound',
    statement:
      "An inbox entry a supersede mark created names the superseding event's entity and version: a later claim on it is stale only for an event of that entity at or below that version, and `EventIdReused` (dead-lettered with its cause, nothing written, no call) for any other event under the id",
    enforcedIn: [{ file: 'packages/runtime/src/aws/inbox-claim-keys.ts', symbol: 'supersedeMarkVerdict' }],
    provedBy: [
      {
        file: INT_ENTITY_EFFECT,
        name: 'a stale event leaves its entry marked superseded by the entity last event: judged, not lost, and a copy of it calls nothing',
      },
      {
        file: INT_ENTITY_EFFECT,
        name: ') is EventIdReused, not a duplicate: nothing written, no call',
        templated: true,
      },
    ],
    doc: architecture('event-integrity-one-id-one-event'),
  },
  {
    id: 'authenticated-channel',
    statement:
      "Only the producers (the outbox relay and sweeper) and the operator roles a stage names may send to a consumer's queue, and only the consumer itself, the operator roles and SQS's own dead-lettering to its DLQ (a redrive moves the DLQ's messages into the queue): a Deny of `sqs:SendMessage` to every other principal on each, checked at synth (`QueueSenders`)",
    enforcedIn: [
      { file: 'packages/cdk/src/queue-senders.ts', symbol: 'allowOnlySenders' },
      { file: 'packages/cdk/src/queue-senders.ts', symbol: 'allowOnlyDeadLetterSenders' },
      { file: 'packages/cdk/src/aspects/queue-senders.ts', symbol: 'QueueSendersAspect' },
    ],
    provedBy: [
      {
        file: INFRA_ASPECTS,
        name: 'a DLQ open to any principal with sqs:SendMessage fails, on its mapping, naming the DLQ, its queue and the fix',
      },
      {
        file: INFRA_PIPELINES,
        name: "its DLQ denies sqs:SendMessage to every principal but its consumer's role, and the operator roles",
        templated: true,
      },
      {
        file: INFRA_PIPELINES,
        name: "the DLQs' deny leaves SQS's own dead-lettering alone: it does not match an AWS service acting as itself",
      },
      {
        file: INFRA_ASPECTS,
        name: 'a consumed queue open to any principal with sqs:SendMessage fails, on its mapping, naming the queue and the fix',
      },
      { file: INFRA_ASPECTS, name: 'a deny that names no senders (no aws:PrincipalArn condition) does not count' },
      {
        file: INFRA_PIPELINES,
        name: "its queue denies sqs:SendMessage to every principal but the relay's and the sweeper's roles",
        templated: true,
      },
      {
        file: INFRA_PIPELINES,
        name: 'an operator role given with -c operatorRoleArns may send too (the DLQ tool redrives as it)',
      },
      {
        file: GUARDS,
        name: "without the queues' sender policy, forged copies that reach a consumer before the real event are found: found within 1 seed",
      },
    ],
    doc: architecture('event-integrity-one-id-one-event'),
  },
  {
    id: 'no-future-events',
    statement:
      "Time cannot outlive a claim: an event stamped more than 300 s ahead of the consumer's clock is dead-lettered as `OccurredInFuture`; one within is applied, and its claim expires the TTL after the later of claim time and `occurredAt`",
    enforcedIn: [
      { file: CONSUMER_SUPPORT, symbol: 'refuseOutsideHorizon' },
      { file: 'packages/runtime/src/aws/inbox-table.ts', symbol: 'claimExpiresAt' },
      { file: 'packages/runtime/src/consumer/dedupe-horizon.ts', symbol: 'MAX_FUTURE_SKEW_SECONDS' },
    ],
    provedBy: [
      {
        file: 'test/exactly-once/entity-consumer.test.ts',
        name: 'an event stamped 10 minutes ahead of the consumer clock goes to the DLQ as OccurredInFuture: nothing claimed, no call',
      },
      {
        file: 'test/exactly-once/entity-consumer.test.ts',
        name: 'an event stamped 2 minutes ahead (within the skew margin) is applied, and its claim expires the TTL after its occurredAt',
      },
      {
        file: INFRA_ASPECTS,
        name: 'its error states the margins it relies on: claims counted from occurredAt, events more than 300 s ahead refused',
      },
      {
        file: GUARDS,
        name: 'without the future-stamp guard, an event stamped weeks ahead passes the horizon after its claim expired and is taken again: found within 1 seed',
      },
      {
        file: GUARDS,
        name: 'producer clocks up to 300 s off either way (the margin): nothing is refused and every invariant holds',
      },
      {
        file: 'test/unit/dlq-cli.test.ts',
        name: 'refused as stamped in the future (OccurredInFuture): left while the stamp is still beyond the margin, moved once within it',
      },
      {
        file: 'test/unit/verify.test.ts',
        name: 'an event refused as OccurredInFuture is a finding for a person, never passed',
      },
    ],
    doc: architecture('the-dedupe-horizon-an-event-may-not-outlive-its-claim'),
  },
  {
    id: 'done-mark-own-bound',
    statement:
      "A provider's 2xx is recorded whenever the process lives: the done-mark runs under its own bound (the batch's answer time), never the record's deadline, and the record waits for it",
    enforcedIn: [
      { file: 'packages/runtime/src/consumer/record-work.ts', symbol: 'recordingSignal' },
      { file: CONSUMER_SUPPORT, symbol: 'untilDeadline' },
    ],
    provedBy: [
      {
        file: INT_ENTITY_EFFECT,
        name: "a provider's 2xx that lands as the record's deadline fires is still recorded done: the next copy calls nothing",
      },
      {
        file: 'test/exactly-once/recording-past-deadline.test.ts',
        name: 'the deadline fires while a provider answer is being recorded: the record waits for the record and ends applied',
      },
      {
        file: GUARDS,
        name: "without the done-mark's own bound, a provider 2xx that lands as the record's deadline fires is not recorded and the next copy sends again: found within 1 seed",
      },
    ],
    doc: architecture('one-provider-call-at-a-time-per-event-the-lease'),
  },
  {
    id: 'transaction-token',
    statement:
      "Every ledger transaction carries a `ClientRequestToken`, kept across retries until a definite cancellation: the retry of a send whose outcome is unknown (its answer lost, `TransactionInProgressException`, throttled) is the same request, and a transaction that committed is reported `applied`, not a duplicate; a failed claim whose lease holder is this try's own is that commit too. The token hashes a BigInt or a Set in an effect item by value, so such an item applies on its first try",
    enforcedIn: [
      { file: TRANSACTION_TOKEN, symbol: 'clientRequestToken' },
      { file: TRANSACTION_TOKEN, symbol: 'transactionSender' },
      { file: INBOX_LEDGER, symbol: 'transact' },
    ],
    provedBy: [
      {
        file: INT_ENTITY_EFFECT,
        name: "the SDK's retry of a transaction that committed (its answer lost) is reported applied, not duplicate",
      },
      {
        file: INT_ENTITY_EFFECT,
        name: 'TransactionInProgressException after the commit, retried in-process under the same token: reported applied, counted once',
      },
      {
        file: INT_ENTITY_EFFECT,
        name: 'the same retry without a ClientRequestToken, from a ledger called without a record (no lease holder on its claim), fails on its own claim and is miscounted a duplicate: the token is what closes it',
      },
      {
        file: INT_ENTITY_EFFECT,
        name: "the same retry without a ClientRequestToken in a record's try: the claim it fails on holds the try's own lease holder, so it is reported applied",
      },
      {
        file: UNIT_TRANSACTION_TOKEN,
        name: 'in a consumer (its record work, in-process retries): reported applied, counted once, and the provider called once',
      },
      {
        file: UNIT_TRANSACTION_TOKEN,
        name: "a use case that runs the whole ledger call again (a new transaction, a new token): the claim holds this try's lease holder, so it is applied, not a duplicate",
      },
      { file: UNIT_TRANSACTION_TOKEN, name: 'the retry carries the same token', templated: true },
      {
        file: UNIT_TRANSACTION_TOKEN,
        name: 'after a cancellation (nothing was written) the next send is another request, under another token',
      },
      {
        file: UNIT_TRANSACTION_TOKEN,
        name: 'an effect item holding a BigInt is applied once on its first try, and its copy is a duplicate: the token hashes it by value',
      },
      {
        file: GUARDS,
        name: 'without the ClientRequestToken and the own-holder rule, an SDK retry of a committed transaction fails on its own claim and is reported a duplicate: found within 1 seed',
      },
      {
        file: GUARDS,
        name: "without the ClientRequestToken alone, the own-holder rule reads the refused claim as the try's own commit: applied, every invariant holds",
      },
      {
        file: 'test/simulation/contracts/port-contracts.ts',
        name: 'a transaction sent again with its ClientRequestToken after it committed succeeds and writes nothing more; the token with other items is refused',
      },
    ],
    doc: architecture('event-integrity-one-id-one-event'),
  },
  {
    id: 'entity-effect-version-guard',
    statement:
      "The generic effect `new:consumer` scaffolds keeps a version guard: an older version of an entity after a newer one is stale, never applied; a write DynamoDB refuses as invalid is `WriteRejected`, dead-lettered at once, unless the same cancellation says the claim's condition failed: a duplicate is read as the duplicate it is",
    enforcedIn: [
      { file: 'packages/runtime/src/aws/entity-effect-ledger.ts', symbol: 'DynamoDbEntityEffectLedger' },
      { file: 'packages/runtime/src/aws/transient-errors.ts', symbol: 'isInvalidRequest' },
    ],
    provedBy: [
      {
        file: UNIT_TRANSACTION_TOKEN,
        name: 'a duplicate whose effect item is refused as invalid (ValidationError beside the claim ConditionalCheckFailed) is the duplicate it is, not WriteRejected',
      },
      { file: UNIT_TRANSACTION_TOKEN, name: 'a ValidationError with the claim free is still WriteRejected, at once' },
      {
        file: 'test/exactly-once/entity-consumer.test.ts',
        name: 'an older version of an entity after a newer one is stale: not counted, no provider call',
      },
      { file: INT_ENTITY_EFFECT, name: 'an older version after a newer one is stale on DynamoDB Local: not counted' },
      {
        file: 'test/exactly-once/entity-consumer.test.ts',
        name: 'a write DynamoDB refuses as invalid goes to the DLQ at once as WriteRejected, not through 14 tries',
      },
      {
        file: INT_ENTITY_EFFECT,
        name: 'a write DynamoDB Local refuses as invalid (a key over 2 KB) is WriteRejected, permanent',
      },
    ],
    doc: architecture('event-integrity-one-id-one-event'),
  },
  {
    id: 'sequenced-ledger-claim-on-the-entity',
    statement:
      'On the sequenced ledger the claim lives on the entity item, one conditional UpdateItem guarded by `attribute_not_exists(seq) OR seq < :v` (one transaction with the claim first where the effect also writes other items), and a refusal is judged from the old item it returns: the same event twice is one effect and one provider call; the same id with other content (or at another version, or while its call is owed) is `EventIdReused`; another event at an applied version is `VersionReused`; an older version after a newer is stale, acknowledged without effect or call. No inbox item is written and the claim never expires; an effect whose own condition on its entity or on another item fails is refused with nothing written; the broken consumer of the local runtime drops the sequence condition, and a duplicate is then applied twice',
    enforcedIn: [
      { file: SEQUENCED_LEDGER, symbol: 'SequencedLedger' },
      {
        file: 'packages/runtime/src/aws/sequenced-entity-effect-ledger.ts',
        symbol: 'DynamoDbSequencedEntityEffectLedger',
      },
    ],
    provedBy: [
      {
        file: SEQUENCED_CASES,
        name: 'the same event delivered twice: one effect, one provider call, one item and no inbox entry',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'another event under a used eventId (other content) is EventIdReused: nothing written, no call',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'an eventId reused for a newer version of its entity is EventIdReused, not applied',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'a forged copy of an event whose call is still owed is EventIdReused: the owed call stays, not made',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'an eventId whose call is still owed, reused for a later version after another event, is EventIdReused',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'another event at a version already applied is VersionReused: nothing written, no call',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'an older version after a newer one is stale: acknowledged without effect or call, and said so',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'two tenants whose events share an entity id and an eventId are two entities: each applied once, two keys',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'the same place twice reserves once and calls once',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: "a cancel that overtook its place releases nothing (the effect's condition on the entity), and the late place is stale",
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: "another item's failed condition is EffectConditionFailed with its index and old item: nothing written",
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: "a newer event refused by the effect's own condition on its entity is EntityConditionFailed with the item: nothing written",
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'a consumer switched from the transactional generic effect never applies again what it applied: a copy is a duplicate, an older one stale, a newer one counts',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: 'test/unit/sequenced-bypass.test.ts',
        name: 'drops the condition of a claim sent in a transaction too: the same place twice reserves twice',
        templated: true,
      },
      {
        file: 'test/unit/sequenced-bypass.test.ts',
        name: 'switched on, the sequence condition is dropped: the same event twice is applied twice and calls twice',
      },
    ],
    doc: architecture(SEQUENCED_ANCHOR),
  },
  {
    id: 'sequenced-ledger-owed-call',
    statement:
      "On the sequenced ledger an event's owed provider call is an attribute of the entity item: its claim takes the call's lease, a copy finds it owed, leased (no call: ProviderCallInProgress) or done, a failed call gives the lease back, the done-mark removes it, a call owed past the provider's key window is `ProviderKeyWindowPassed` until a person's finding at the provider marks it done or restarts its window, and a retry of a claim whose answer was lost is the try's own commit",
    enforcedIn: [{ file: SEQUENCED_LEDGER, symbol: 'SequencedLedger' }],
    provedBy: [
      {
        file: SEQUENCED_CASES,
        name: 'a provider failure leaves the call owed on the item: the retry makes it once, the count stays 1',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: "a copy that owes the call while another try holds the call's lease does not call: ProviderCallInProgress",
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'a lease given back after a failed call is free for the next try at once',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: "an owed call found past the provider's key window is ProviderKeyWindowPassed, never called",
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: "a retry of a claim whose answer was lost finds the try's own lease holder: reported applied, counted once",
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'found NOT performed: the window restarts, and the redelivered event calls the provider once',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'found performed: the call is recorded done, and the redelivered event calls nothing',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'an event whose entity item owes no call for it is refused, and nothing is written',
        runBy: SEQUENCED_RUNNERS,
      },
    ],
    doc: architecture(SEQUENCED_ANCHOR),
  },
  {
    id: 'sequenced-ledger-redrive-after-newer',
    statement:
      'On the sequenced ledger, the dead-lettered head v, then v+1 applied, then a redrive of v: a v never applied is stale (no effect, no call); a v applied whose call was owed makes that call once and applies nothing again; where the newer event supersedes the owed call (a cancel and its PICK), v is stale and its call is never made',
    enforcedIn: [{ file: SEQUENCED_LEDGER, symbol: 'SequencedLedger' }],
    provedBy: [
      {
        file: SEQUENCED_CASES,
        name: 'v never applied (its write failed until it was dead-lettered): the redrive is stale, no effect, no call',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'v applied, its call owed when it was dead-lettered: the redrive makes the owed call once, applies nothing again',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_CASES,
        name: 'where a newer event supersedes the owed call (a cancel and its PICK): the redrive of v is stale, its call never made',
        runBy: SEQUENCED_RUNNERS,
      },
      {
        file: SEQUENCED_SIMULATION,
        name: 'named case: a dead-lettered head v, then v+1 applied, then a redrive of v: v is judged stale, never applied, never called, and the audit passes',
      },
    ],
    doc: architecture(SEQUENCED_ANCHOR),
  },
  {
    id: 'consumer-spec-ledger',
    statement:
      "A consumer's spec names its ledger (`ledger: 'inbox' | 'sequenced'`, inbox by default); any other value is refused with the two it may be, and a sequenced consumer is held to the version guard's ordering rule. A sequenced consumer's claims never expire, so the stack gives it no dedupe horizon (`CONSUMER_LEDGER=sequenced`, no `DEDUPE_HORIZON_SECONDS` and no horizon output), the DedupeHorizon rule passes it, and its wiring applies an event of any age; an inbox consumer without a horizon does not synthesize or start; a handler that builds the other ledger than its spec names does not start (LedgerMismatchError)",
    enforcedIn: [
      { file: 'packages/runtime/src/consumer-spec.ts', symbol: 'validateConsumerSpecs' },
      { file: 'packages/runtime/src/aws/inbox-ledger.ts', symbol: 'LedgerMismatchError' },
      { file: 'packages/cdk/src/consumer-pipelines.ts', symbol: 'ConsumerPipelines' },
      { file: 'packages/cdk/src/aspects/dedupe-horizon.ts', symbol: 'DedupeHorizonAspect' },
      { file: 'packages/runtime/src/wiring/consumer-wiring.ts', symbol: 'consumerConfigFromEnv' },
    ],
    provedBy: [
      {
        file: 'test/exactly-once/consumer-ordering.test.ts',
        name: 'a ledger the mechanism does not have is refused with the two it has',
      },
      {
        file: 'test/exactly-once/consumer-ordering.test.ts',
        name: "the sequenced ledger keeps the version guard's ordering rule: refused on a standard queue taking several types, accepted on a FIFO by entity",
      },
      {
        file: 'test/infra/sequenced-consumer.test.ts',
        name: 'a sequenced consumer has no dedupe horizon and says its ledger; the inbox consumer beside it keeps its horizon',
      },
      {
        file: 'test/exactly-once/consumer-ledger-config.test.ts',
        name: 'a sequenced consumer has no horizon: it applies an event of any age',
      },
      {
        file: 'test/exactly-once/consumer-ledger-config.test.ts',
        name: 'an inbox consumer without DEDUPE_HORIZON_SECONDS does not start: its claims expire',
      },
      {
        file: 'test/exactly-once/consumer-ledger-config.test.ts',
        name: "a spec naming 'sequenced' with an inbox ledger in its handler does not start: the horizon is gone and its claims expire",
      },
    ],
    doc: architecture(WHICH_LEDGER_ANCHOR),
  },
  {
    id: 'sequenced-claims-verified',
    statement:
      "The proof kit and the simulation judge a sequenced consumer by its entity items: each entity's newest event is the item's claim under its own content, the item records no more claims than the entity has events and no more of them reached the provider than were claimed, and no owed call is left on it. A missing claim, a duplicate or a stale version applied again (the sequence condition dropped: the local runtime's broken build, the simulation's `sequenceCondition` guard off) and a call never recorded done each fail verification",
    enforcedIn: [
      { file: 'packages/tools/src/proof-kit/sequenced-claims.ts', symbol: 'checkSequencedConsumer' },
      {
        file: 'packages/tools/src/simulation/world/guards/sequence-condition.ts',
        symbol: 'sequenceConditionUnderGuard',
      },
      { file: SEQUENCED_LEDGER, symbol: 'SequencedLedger' },
    ],
    provedBy: [
      {
        file: VERIFY_SEQUENCED,
        name: 'every event applied once, a duplicate and a stale redelivery acknowledged: the claims pass',
      },
      {
        file: VERIFY_SEQUENCED,
        name: "an event whose claim is missing fails: the entity's newest event is not on its item",
      },
      {
        file: VERIFY_SEQUENCED,
        name: 'the broken build drops the sequence condition: the duplicate is a second claim, and verify finds it',
      },
      {
        file: VERIFY_SEQUENCED,
        name: 'the broken build applies a stale redelivery over the newer event: verify finds the older one on the item',
      },
      {
        file: VERIFY_SEQUENCED,
        name: 'a call still owed on the item after the drain fails: never made, never recorded done',
      },
      {
        file: SEQUENCED_SIMULATION,
        name: 'a sequenced consumer beside the inbox ones, under the default faults: its events applied once, every invariant holds',
      },
      {
        file: SEQUENCED_SIMULATION,
        name: 'without the sequence condition (guard sequenceCondition off), a redelivered event is claimed twice: the audit fails within 3 seeds',
      },
    ],
    doc: architecture(WHICH_LEDGER_ANCHOR),
  },
  {
    id: 'ordering-the-effect-relies-on',
    statement:
      "A consumer list whose effect cannot rely on its ordering is refused: the generic effect's version guard (`staleGuard: 'entity-version'`) on a standard queue taking several event types, or on a FIFO grouped by the envelope's `orderingKey` (`orderBy: 'ordering-key'`) instead of its entity; `new:consumer` declares the guard and refuses `--ordering-key`. A consumer that must see several entities in one order names their shared `orderingKey`, each event keeping its own entity and versions",
    enforcedIn: [
      { file: 'packages/runtime/src/consumer-spec.ts', symbol: 'validateConsumerSpecs' },
      { file: PUBLISHER, symbol: 'messageGroupOf' },
    ],
    provedBy: [
      {
        file: 'test/exactly-once/consumer-ordering.test.ts',
        name: 'the generic effect on a standard queue taking several event types of one entity is refused: a reordered older version would be dropped',
      },
      {
        file: 'test/exactly-once/consumer-ordering.test.ts',
        name: "the generic effect on a FIFO ordered by the envelope's orderingKey is refused: its versions are per entity, not per ordering key",
      },
      {
        file: UNIT_PUBLISHER,
        name: "a route ordered by ordering key groups by the envelope's orderingKey (its entityId without one); a route ordered by entity ignores it",
      },
    ],
    doc: architecture('fifo-per-order-with-a-version-check'),
  },
  {
    id: 'fifo-per-entity',
    statement:
      "FIFO order per entity: group = the envelope's `entityId` (the entity the event happened to); records behind a failure in their group are not processed but released at once (FIFO keeps them behind the failed one); other groups go on, side by side in the batch, one record at a time within a group",
    enforcedIn: [
      { file: PUBLISHER, symbol: 'SqsEventPublisher' },
      { file: QUEUE_CONSUMER, symbol: 'processGroupsSideBySide' },
      { file: QUEUE_CONSUMER, symbol: 'releaseSkipped' },
    ],
    provedBy: [
      {
        file: UNIT_PUBLISHER,
        name: 'on a FIFO route the group is the entityId and the dedup id the eventId; a standard route sets neither for an event without a tenant',
      },
      {
        file: UNIT_RELAY,
        name: 'every event goes to the FIFO queue (group = entityId, dedup id = eventId), ThingHappened also to the standard queue',
      },
      {
        file: UNIT_CONSUMERS,
        name: "FIFO: after a failure the rest of that entity's group is reported failed, untried and released; other groups go on",
      },
      {
        file: UNIT_CONSUMERS,
        name: "FIFO: message groups run side by side, while one group's records go one at a time, in order",
      },
    ],
    doc: architecture('fifo-per-order-with-a-version-check'),
  },
  {
    id: 'relay-concurrent-sends',
    statement:
      "The relay sends a batch's chunks of 10 side by side, at most `SENDS_IN_FLIGHT` (10) calls at once; on a FIFO route a chunk that shares a message group with an earlier chunk waits for that chunk's call to end, so an entity's events reach its queue in order; a failed chunk's events are reported failed and never marked dispatched",
    enforcedIn: [{ file: PUBLISHER, symbol: 'SqsEventPublisher' }],
    provedBy: [
      {
        file: 'test/unit/relay-concurrent-sends.test.ts',
        name: "on a FIFO route a chunk sharing a message group with an earlier chunk waits for that chunk's call to end, and the group stays in order",
      },
      {
        file: 'test/unit/relay-concurrent-sends.test.ts',
        name: 'one chunk failing while the others are in flight: exactly its 10 events are reported, the other 40 are marked dispatched',
      },
      {
        file: 'test/unit/relay-concurrent-sends.test.ts',
        name: 'on a FIFO route chunks of different message groups go side by side',
      },
    ],
    doc: architecture('fifo-per-order-with-a-version-check'),
  },
  {
    id: 'span-sampling-keeps-what-a-person-needs',
    statement:
      "The stage's span sampling (`spanSampleRate`) is decided from the trace id, so a trace is written whole or not at all; whatever the rate, a span that failed, every span of a record's try after its first receive or of a record being dead-lettered, and a span of at least `slowSpanMs` are written",
    enforcedIn: [
      { file: 'packages/runtime/src/trace/span-sampling.ts', symbol: 'keptByHead' },
      { file: 'packages/runtime/src/trace/span-sampling.ts', symbol: 'spanKept' },
      { file: 'packages/runtime/src/consumer/consume-record.ts', symbol: 'consumeRecord' },
    ],
    provedBy: [
      {
        file: 'test/exactly-once/span-sampling.test.ts',
        name: 'at rate 0.5, 40 traces through api, relay and consumer: each trace written whole or not at all, about half written',
      },
      {
        file: 'test/exactly-once/span-sampling.test.ts',
        name: "at rate 0 a retried record's try (receive count 3) is written whole, its provider call included; its first try is not",
      },
      {
        file: 'test/exactly-once/span-sampling.test.ts',
        name: 'at rate 0 a dead-lettered record (permanent error, not thrown) has its consumer span written',
      },
      {
        file: 'test/exactly-once/span-sampling.test.ts',
        name: 'at rate 0 a span that failed is written, with its error mark; one that did not fail is not',
      },
      {
        file: 'test/exactly-once/span-sampling.test.ts',
        name: 'at rate 0 a span at least slowMs long is written; a shorter one is not',
      },
    ],
    doc: { page: 'docs/operations.md', anchor: 'tracing-one-order-across-every-hop' },
  },
  {
    id: 'fair-queue-tenant',
    statement:
      "A message to a standard queue carries its event's tenant, as a 22-character digest, in `MessageGroupId`, so SQS fair queues keep one tenant's backlog from delaying the others'; it orders nothing, and an event without a tenant carries none",
    enforcedIn: [{ file: PUBLISHER, symbol: 'fairQueueGroupOf' }],
    provedBy: [
      {
        file: UNIT_PUBLISHER,
        name: "on a standard route an event with a tenant carries its tenant's digest as the message group (SQS fair queues); the FIFO group stays the entity",
      },
    ],
    doc: architecture('fifo-per-order-with-a-version-check'),
  },
  {
    id: 'error-classification',
    statement:
      'Error classification: permanent → DLQ at once with cause, consumer, attempt; transient → exponential backoff (equal jitter) by visibility; no heartbeat: visibility ≥ 6 × timeout, so no try outlives it',
    enforcedIn: [
      { file: CONSUMER_SUPPORT, symbol: 'deadLetter' },
      { file: CONSUMER_SUPPORT, symbol: 'failTransiently' },
      { file: 'packages/runtime/src/errors.ts', symbol: 'PermanentError' },
      { file: BACKOFF, symbol: 'retryBackoffSeconds' },
      { file: 'packages/runtime/src/aws/sqs-message-control.ts', symbol: 'SqsMessageControl' },
      { file: 'packages/cdk/src/aspects/visibility-timeout.ts', symbol: 'VISIBILITY_TIMEOUT_FACTOR' },
    ],
    provedBy: [
      { file: UNIT_CONSUMERS, name: 'permanent errors go to the DLQ at once, with why, and are acked' },
      {
        file: UNIT_CONSUMERS,
        name: 'transient errors: backoff from the receive count, reported failed, never swallowed',
      },
      { file: UNIT_BACKOFF, name: '(equal jitter: half the ceiling is guaranteed)', templated: true },
      {
        file: UNIT_RETRY,
        name: "a try that runs for Lambda's longest timeout (15 min) changes no visibility; a failure then sets only its backoff",
      },
      { file: INFRA_ASPECTS, name: 'visibility exactly 6 × timeout + batching window passes' },
      {
        file: INFRA_ASPECTS,
        name: 'a visibility timeout shorter than one invocation fails: there is no heartbeat to extend it',
      },
      { file: INFRA_PIPELINES, name: 'retry budget, from the deployed numbers' },
      {
        file: INT_PIPELINES,
        name: 'a poison (permanent) message goes to the DLQ at once with its cause, without burning retries',
      },
    ],
    doc: architecture('a-retry-budget-and-dead-letter-queues'),
  },
  {
    id: 'provider-key',
    statement:
      'Provider idempotency keys `<consumer>:<eventId>`, or `<consumer>@<tenant hash>:<eventId>` for an event with a tenant, recorded on the claim; a duplicate calls the provider again, under the key its claim recorded, only while the call is owed (next row)',
    enforcedIn: [
      { file: 'packages/runtime/src/inbox/keys.ts', symbol: 'providerKey' },
      { file: 'packages/runtime/src/provider/call-provider-if-owed.ts', symbol: 'callProviderIfOwed' },
      { file: 'packages/runtime/src/inbox/entity-effect.ts', symbol: 'applyEntityEffect' },
      { file: 'packages/runtime/src/provider/provider.ts', symbol: 'ExternalProvider' },
      { file: 'packages/runtime/src/aws/recording-provider.ts', symbol: 'RecordingProvider' },
    ],
    provedBy: [
      {
        file: 'test/simulation/tenant-collision.test.ts',
        name: 'with the tenant left out of the provider key, two tenants sharing eventIds lose calls to 422: found on seeds 1 and 2; with it every invariant holds',
      },
      {
        file: INT_PIPELINES,
        name: 'an event flows from the outbox through every queue that takes it: one effect per consumer, one call per provider key',
      },
      {
        file: INT_PIPELINES,
        name: 'a duplicate after the provider call failed (the effect committed) calls the provider once more; later copies do not',
      },
      {
        file: UNIT_CONSUMERS,
        name: 'the provider failing after the commit is transient; the redelivery is a duplicate and calls the provider again, same key',
      },
      {
        file: UNIT_CONSUMERS,
        name: 'ThingHappened: claim + appliedCount += 1 on its entity in one transaction, then the provider with probe:<eventId>',
      },
      {
        file: 'test/unit/key-on-the-wire.test.ts',
        name: 'with the key on the wire: one e-mail, and the retry got the stored answer',
      },
      {
        file: 'test/unit/key-on-the-wire.test.ts',
        name: 'without it (the guard removed): two e-mails, reported by the proof kit',
      },
    ],
    doc: architecture('external-effects-get-an-idempotency-key-passed-outward'),
  },
  {
    id: 'provider-state',
    statement:
      'Provider calls respect state: the inbox entry records the call done, or superseded by a later event of the same entity (no call that event made obsolete); a duplicate reads it from its failed claim (ALL_OLD)',
    enforcedIn: [
      { file: INBOX_LEDGER, symbol: 'recordProviderCallDone' },
      { file: INBOX_LEDGER, symbol: 'supersede' },
      { file: 'packages/runtime/src/inbox/ports.ts', symbol: 'ProviderCallRecord' },
    ],
    provedBy: [
      {
        file: UNIT_PROVIDER,
        name: 'the claim asks for the existing entry on failure (ALL_OLD), so a duplicate needs no read',
      },
      { file: UNIT_PROVIDER, name: 'after a completed call: the provider is not called again, and no read was issued' },
      {
        file: UNIT_PROVIDER,
        name: 'a redriven event whose entry a later event of its entity superseded meanwhile: no call, though its call never completed',
      },
      {
        file: UNIT_PROVIDER,
        name: 'an undo applied from HAPPENED marks the ThingHappened inbox entry superseded, in the same transaction',
      },
      {
        file: INT_PIPELINES,
        name: 'the provider down until ThingHappened dead-letters, then ThingUndone goes through: the redriven ThingHappened calls no provider',
      },
    ],
    doc: architecture('external-effects-get-an-idempotency-key-passed-outward'),
  },
  {
    id: 'effects-counted-at-the-provider',
    statement:
      'Provider effects counted at the provider: locally the consumers call each provider they name over HTTP, and the proof kit checks its log: each owed key performed once, nothing for an entity never accepted, no call after a later event of its entity superseded it; one summary line per provider',
    enforcedIn: [
      { file: VERIFY, symbol: 'checkPerformedEffects' },
      { file: 'packages/tools/src/proof-kit/provider-calls.ts', symbol: 'providerLines' },
      { file: 'packages/tools/src/local-runtime/runtime.ts', symbol: 'startRuntime' },
    ],
    provedBy: [
      { file: 'test/unit/provider-effects.test.ts', name: ' is a provider-effects violation', templated: true },
    ],
    doc: PROOF_KIT,
  },
  {
    id: 'providers-per-stage',
    statement:
      'A stage points each provider a consumer calls at its endpoint, with the API key in an SSM SecureString: the consumer gets the endpoint and the parameter name (never the key) and may read that one parameter; a bad value or a provider no consumer calls stops synth; the key is read through Powertools Parameters, cached, and again after a 401',
    enforcedIn: [
      { file: 'packages/cdk/src/provider-endpoints.ts', symbol: 'providerEndpointsOf' },
      { file: 'packages/cdk/src/consumer-pipelines.ts', symbol: 'ConsumerPipelines' },
      { file: 'packages/runtime/src/aws/parameter-api-key.ts', symbol: 'apiKeyFromParameter' },
    ],
    provedBy: [
      {
        file: 'test/infra/consumer-providers.test.ts',
        name: 'a consumer may read its one API-key parameter, by its ARN, and no other',
      },
      {
        file: 'test/infra/consumer-providers.test.ts',
        name: 'a configured provider that no consumer calls stops synth',
      },
      {
        file: 'test/exactly-once/provider-wiring.test.ts',
        name: 'a configured provider is called over HTTP with the key from its parameter, read once for many calls',
      },
      {
        file: 'test/exactly-once/provider-wiring.test.ts',
        name: 'a rotated key: the 401 is retried, and the retry reads the parameter again and sends the new key',
      },
      {
        file: 'test/infra/application-providers.test.ts',
        name: "each consumer may read the API-key parameter of each provider it names, by its ARN, and no other provider's",
      },
      {
        file: 'test/infra/application-providers.test.ts',
        name: ' stops synth with a one-line ConfigError',
        templated: true,
      },
    ],
    doc: { page: 'docs/deploying.md', anchor: 'external-providers' },
  },
  {
    id: 'proof-kit-provider-calls',
    statement:
      'The proof kit checks it: `provider-outage` fault (seeded share and window); each key completed once, recorded done; no call after a later event of the order reached the provider',
    enforcedIn: [
      { file: VERIFY, symbol: 'checkProviderCalls' },
      { file: 'packages/runtime/src/faults/outage-prone-provider.ts', symbol: 'OutageProneProvider' },
      { file: 'packages/tools/src/proof-kit/faults.ts', symbol: 'providerOutageWindow' },
    ],
    provedBy: [
      {
        file: 'test/unit/verify-provider-calls.test.ts',
        name: 'a call that reached the provider but is not recorded done on the inbox is a provider violation',
      },
      {
        file: UNIT_PROVIDER,
        name: 'the plan carries the window and the rate through JSON; a malformed window is dropped',
      },
      { file: OUTAGES_TEST, name: 'provider outage, then undo, then redrive' },
    ],
    doc: PROOF_KIT,
  },
  {
    id: 'inbox-ttl',
    statement: 'Inbox TTL ≥ source retention + DLQ retention + redrive allowance (computed, and enforced at synth)',
    enforcedIn: [
      { file: 'packages/cdk/src/consumer-pipelines.ts', symbol: 'REDRIVE_ALLOWANCE' },
      { file: 'packages/cdk/src/aspects/inbox-ttl.ts', symbol: 'requiredInboxTtlSeconds' },
      { file: 'packages/cdk/src/aspects/inbox-ttl.ts', symbol: 'InboxTtlAspect' },
    ],
    provedBy: [
      { file: INFRA_ASPECTS, name: 'exactly source + DLQ retention + redrive allowance passes' },
      { file: INFRA_ASPECTS, name: 'one second less fails, with the breakdown' },
      {
        file: INFRA_PIPELINES,
        name: 'the Effects table, where every consumer claims and applies, expires claims by the attribute the ledgers write',
      },
      {
        file: 'test/infra/promises.test.ts',
        name: 'each consumer keeps inbox claims 1,900,800 s: a dedupe horizon of its source queue (4 d) + its DLQ (14 d) + a 3-day redrive allowance, plus a 1-day clock-skew margin',
      },
    ],
    doc: architecture('the-dedupe-horizon-an-event-may-not-outlive-its-claim'),
  },
  {
    id: 'dedupe-horizon',
    statement:
      'Dedupe horizon: a consumer never applies, by itself, an event whose `occurredAt` is older than its horizon (21 d; claim TTL = horizon + 1 d clock-skew margin, derived in one place); it dead-letters it as `DedupeHorizonPassed`, calls no provider; the DLQ tool refuses to redrive it without `--past-horizon`',
    enforcedIn: [
      { file: 'packages/runtime/src/consumer/dedupe-horizon.ts', symbol: 'dedupeWindow' },
      { file: CONSUMER_SUPPORT, symbol: 'refuseOutsideHorizon' },
      { file: 'packages/cdk/src/aspects/dedupe-horizon.ts', symbol: 'DedupeHorizonAspect' },
      { file: 'packages/tools/src/dlq/horizon.ts', symbol: 'judgeHorizon' },
    ],
    provedBy: [
      {
        file: UNIT_CONSUMERS,
        name: '60 days old: DLQ with cause DedupeHorizonPassed, acked; no transaction, no provider call',
      },
      { file: INFRA_ASPECTS, name: 'one second more fails: an event that young could find its claim expired' },
      {
        file: GUARDS,
        name: 'without the dedupe horizon, a redrive weeks later, after DynamoDB TTL deleted the inbox claim, takes the event again: found within 2 seeds',
      },
      {
        file: 'test/unit/dlq-cli.test.ts',
        name: 'past the horizon: left, with the reason and what to do, unless --past-horizon names its eventId',
      },
      {
        file: 'test/runtime/dlq-tool.test.ts',
        name: 'a 60-day-old event in the probe DLQ: shown past the horizon, left by redrive, resent by --past-horizon with a fresh occurredAt, applied once',
      },
    ],
    doc: architecture('the-dedupe-horizon-an-event-may-not-outlive-its-claim'),
  },
  {
    id: 'provider-key-window',
    statement:
      "Provider key window: a provider call still owed 23 h after its claim (the ledger's `providerKeyWindowSeconds`, 24 h, less a 1 h margin) is never repeated automatically, since its first try may have been performed with the answer lost and the provider no longer knows the key; the consumer dead-letters it as `ProviderKeyWindowPassed` and calls nothing, and the DLQ tool moves it only with a person's finding at the provider (`--provider-performed`, `--provider-not-performed`), written first where the consumer reads it: its inbox entry, or for a consumer on the sequenced ledger its entity item",
    enforcedIn: [
      { file: 'packages/runtime/src/aws/inbox-ledger.ts', symbol: 'InboxLedger' },
      { file: 'packages/runtime/src/provider/call-provider-if-owed.ts', symbol: 'callProviderIfOwed' },
      { file: 'packages/tools/src/dlq/messages.ts', symbol: 'redriveDecision' },
      { file: 'packages/tools/src/dlq/provider-window.ts', symbol: 'recordProviderCallFinding' },
      { file: 'packages/tools/src/dlq/provider-window.ts', symbol: 'recordFindingOnLedger' },
    ],
    provedBy: [
      {
        file: UNIT_PROVIDER,
        name: ': a duplicate whose call has been owed longer than the provider keeps keys is dead-lettered, never called',
        templated: true,
      },
      {
        file: INT_ENTITY_EFFECT,
        name: "an owed call found by a duplicate a day after its claim, past the provider's key window: dead-lettered, not called",
      },
      {
        file: INT_ENTITY_EFFECT,
        name: 'found NOT performed: the key window restarts, and the redelivered event calls the provider once',
      },
      {
        file: INT_ENTITY_EFFECT,
        name: 'found performed: the call is recorded done, and the redelivered event calls nothing',
      },
      {
        file: 'test/unit/dlq-cli.test.ts',
        name: 'owed past the provider key window: left with what to check, unless a finding names it',
      },
      {
        file: 'test/unit/dlq-provider-finding-ledger.test.ts',
        name: 'found performed: the owed call is removed from the entity item, and the redriven event calls nothing',
      },
      {
        file: 'test/unit/dlq-provider-finding-ledger.test.ts',
        name: 'found NOT performed: the key window restarts on the entity item, and the redriven event calls once',
      },
      {
        file: 'test/unit/dlq-provider-finding-ledger.test.ts',
        name: 'a consumer DLQ whose consumer is not on the consumer list: which ledger holds its claims is unknown',
      },
    ],
    doc: {
      page: 'docs/runbook.md',
      anchor: 'a-provider-call-owed-past-the-providers-key-window-providerkeywindowpassed',
    },
  },
  {
    id: 'record-deadline',
    statement:
      "Every record has a deadline (invocation end − min(5 s, ⅕ of the time left)) and an `AbortSignal` for its calls: a hung call fails its record (try counted, backoff set), never the batch; FIFO's `maxReceiveCount` = tries × batch + 10 crash allowance",
    enforcedIn: [
      { file: 'packages/runtime/src/consumer/record-work.ts', symbol: 'invocationDeadlines' },
      { file: 'packages/runtime/src/consumer/record-work.ts', symbol: 'RecordWork' },
      { file: BACKOFF, symbol: 'fifoMaxReceiveCount' },
      { file: 'packages/cdk/src/aspects/retry-budget.ts', symbol: 'RetryBudgetAspect' },
    ],
    provedBy: [
      { file: UNIT_CONSUMERS, name: 'a record has a deadline: a hung call fails its record, not the batch' },
      {
        file: UNIT_CONSUMERS,
        name: 'a provider that never answers: the batch answers before the timeout, the other record is acked, the hung one backs off',
      },
      {
        file: TIMEOUTS,
        name: 'a consumer call that hangs is cut at its record deadline: no consumer is stopped by its timeout, the hung record fails with its backoff and comes back after it, its batch-mates are acked',
      },
      {
        file: INFRA_ASPECTS,
        name: 'FIFO: maxReceiveCount below tries x batch size + the crash allowance fails (one crash could dead-letter a record with tries left); at it passes',
      },
      {
        file: UNIT_BACKOFF,
        name: 'the FIFO backstop: tries x batch size receives + a crash allowance (150 for 14 tries of 10-record batches)',
      },
      {
        file: GUARDS,
        name: 'without the record deadline, a hung call holds its batch until Lambda stops the consumer, and none of the batch is acked: found within 2 seeds',
      },
    ],
    doc: architecture('every-record-has-a-deadline'),
  },
  {
    id: 'provider-call-lease',
    statement:
      "One provider call at a time per event: the claim takes a lease on the call, a duplicate that owes it must take the lease (refused while another delivery's is live); the lease holder is one per try and per SQS record (the request id and the receipt handle's hash, never the message id), so two receipts of one message in a batch are two copies; only single writes are retried on contention, never the provider call. Residue for a provider without keys (SMTP, SES): a second send only after a crash between the send and its done-mark",
    enforcedIn: [
      { file: QUEUE_CONSUMER, symbol: 'leaseHolderOf' },
      { file: INBOX_LEDGER, symbol: 'leaseProviderCall' },
      { file: 'packages/runtime/src/provider/call-provider-if-owed.ts', symbol: 'callProviderIfOwed' },
      { file: 'packages/runtime/src/runtime/contention-retry.ts', symbol: 'withContentionRetries' },
    ],
    provedBy: [
      {
        file: 'test/unit/one-holder-per-receipt.test.ts',
        name: 'a batch with one message twice (two receipt handles): one effect, one provider call, and the other copy is not applied',
      },
      { file: UNIT_CONSUMERS, name: 'provider calls: one at a time per event, and the done-mark retried on its own' },
      {
        file: UNIT_CONSUMERS,
        name: 'a copy delivered while the first is mid-call finds the lease held: it fails for later and calls nothing',
      },
      {
        file: PORT_CONTRACTS,
        name: 'the claim takes the provider-call lease: a concurrent duplicate is refused it until it lapses, its holder may take it again',
        runBy: PORT_CONTRACT_RUNNERS,
      },
      {
        file: TIMEOUTS,
        name: 'a provider call cut at its record deadline may still reach the provider: no other copy calls under its key while it may be in flight, so no overlap and no send after a heard answer',
      },
      {
        file: GUARDS,
        name: 'without the provider-call lease, concurrent copies of an event (standard-queue duplicates) call the provider under one key at once: found within 2 seeds',
      },
    ],
    doc: architecture('one-provider-call-at-a-time-per-event-the-lease'),
  },
  {
    id: 'consumer-metrics',
    statement:
      'The consumer metrics mean what they say: `EffectApplied` counts each event whose effect committed, once, in the try that committed it (even when the provider call after it failed); `OwedProviderCallCompleted` counts a provider call a commit left owed, made by a later copy; `DuplicateSuppressed` counts only copies of finished work. The proof kit holds `EffectApplied` against the stored claims (more is a violation; fewer is what a crash costs), and the dashboard graphs all three',
    enforcedIn: [
      { file: 'packages/runtime/src/consumer/outcome-metrics.ts', symbol: 'outcomeMetrics' },
      { file: CONSUMER_SUPPORT, symbol: 'consume' },
      { file: INBOX_LEDGER, symbol: 'committed' },
      { file: 'packages/runtime/src/provider/call-provider-if-owed.ts', symbol: 'callProviderIfOwed' },
      { file: 'packages/tools/src/proof-kit/metrics-check.ts', symbol: 'appliedMetricViolations' },
      { file: 'packages/cdk/src/monitoring.ts', symbol: 'consumerWidgets' },
    ],
    provedBy: [
      {
        file: 'test/unit/outcome-metrics.test.ts',
        name: 'a provider outage after the commit: the committing try counts EffectApplied, the retry that makes the owed call counts OwedProviderCallCompleted, a later copy DuplicateSuppressed',
      },
      { file: 'test/unit/outcome-metrics.test.ts', name: 'a stale event counts StaleEventIgnored only' },
      {
        file: 'test/unit/metrics-check.test.ts',
        name: 'a provider outage over the first tries, then redelivered copies: the flushed EffectApplied equals the stored claims, and the owed calls are counted apart from the duplicates',
      },
      {
        file: 'test/unit/metrics-check.test.ts',
        name: 'per consumer: equal, fewer (a crash) or more than the stored claims; only more is a violation',
      },
      {
        file: 'test/unit/report-applied.test.ts',
        name: 'metrics that count more commits than the inbox claims stored are a violation; fewer (a crash) are not',
      },
      { file: INFRA_PIPELINES, name: 'for each consumer, as the consumers emit it', templated: true },
    ],
    doc: { page: 'docs/operations.md' },
  },
  {
    id: 'synth-time-invariants',
    statement: 'Synth-time correctness invariants (visibility, DLQs, batch item failures, stream sources, inbox TTL)',
    enforcedIn: [
      { file: 'packages/cdk/src/aspects/index.ts', symbol: 'applyCorrectnessAspects' },
      { file: 'packages/cdk/src/aspects/visibility-timeout.ts', symbol: 'VisibilityTimeoutAspect' },
      { file: 'packages/cdk/src/aspects/dead-letter-queue.ts', symbol: 'DeadLetterQueueAspect' },
      { file: 'packages/cdk/src/aspects/report-batch-item-failures.ts', symbol: 'ReportBatchItemFailuresAspect' },
      { file: 'packages/cdk/src/aspects/stream-source.ts', symbol: 'StreamSourceAspect' },
      { file: 'packages/cdk/src/aspects/inbox-ttl.ts', symbol: 'InboxTtlAspect' },
      { file: EXACTLY_ONCE, symbol: 'ExactlyOnce' },
    ],
    provedBy: [
      { file: INFRA_ASPECTS, name: 'a correct stack synthesizes with no error or warning from the rules' },
      { file: INFRA_ASPECTS, name: 'VisibilityTimeout' },
      { file: INFRA_ASPECTS, name: 'DeadLetterQueue' },
      { file: INFRA_ASPECTS, name: 'ReportBatchItemFailures' },
      { file: INFRA_ASPECTS, name: 'StreamSource' },
      { file: INFRA_ASPECTS, name: 'InboxTtl' },
      {
        file: 'test/infra/promises.test.ts',
        name: 'the real stack refuses a broken override at synth (the correctness Aspects are applied to it)',
      },
      {
        file: 'test/infra/promises.test.ts',
        name: 'the relay reads the stream with bisect, 8 retries, a 6 h maximum record age and an on-failure queue',
      },
    ],
    doc: architecture('correctness-settings-are-checked-at-synth-time'),
  },
  {
    id: 'least-privilege',
    statement: 'Least privilege; cdk-nag with every acknowledgement justified',
    enforcedIn: [
      { file: 'packages/cdk/src/grants.ts', symbol: 'grantTableActions' },
      { file: 'bin/app.ts', symbol: 'app' },
    ],
    provedBy: [
      {
        file: INFRA_IAM_REST_API,
        name: 'no function role anywhere has dynamodb:* or *, or DynamoDB data access on every table',
      },
      { file: INFRA_PIPELINES, name: 'least privilege' },
      {
        file: 'test/infra/nag.test.ts',
        name: 'synthesizes with the AwsSolutions checks and zero unacknowledged findings',
      },
      { file: 'test/infra/nag.test.ts', name: 'every acknowledgement says why' },
    ],
    doc: { page: 'docs/adapting.md', anchor: 'the-checks' },
  },
  {
    id: 'problem-json',
    statement: 'Every error is `application/problem+json`, including the ones the gateway makes',
    enforcedIn: [
      { file: 'packages/runtime/src/api/http.ts', symbol: 'problem' },
      { file: 'packages/cdk/src/iam-rest-api.ts', symbol: 'addProblemGatewayResponses' },
    ],
    provedBy: [
      { file: INFRA_IAM_REST_API, name: 'gateway-made errors are problem+json too' },
      {
        file: 'test/runtime/gateway-responses.test.ts',
        name: 'a request without Authorization gets 403, a problem+json body and the status in it',
      },
    ],
    doc: HTTP_API,
  },
  {
    id: 'caller-scope',
    statement:
      "Caller = the principal for workloads (all sessions of a role share one key space), the session for people (roles matching the stage's `humanRolePatterns`, default `AWSReservedSSO_*`, which an API function reads once at cold start with `callerRuleFromEnv`, stopping on a bad list); a Cognito identity is its identity id; an unknown identity shape is 403",
    enforcedIn: [
      { file: 'packages/runtime/src/api/caller.ts', symbol: 'callerPrincipal' },
      { file: 'packages/runtime/src/api/caller.ts', symbol: 'callerRuleFromEnv' },
      { file: 'packages/runtime/src/api/caller.ts', symbol: 'DEFAULT_HUMAN_ROLE_PATTERNS' },
      { file: 'packages/runtime/src/api/http.ts', symbol: 'callerOf' },
      { file: 'packages/tools/src/local-runtime/api/proxy-event.ts', symbol: 'sigV4Caller' },
    ],
    provedBy: [
      { file: 'test/unit/caller.test.ts', name: 'two sessions of one role are one caller; two roles are two' },
      {
        file: 'test/unit/caller.test.ts',
        name: 'two users of one permission set are two callers; one user on refreshed credentials stays one',
      },
      { file: 'test/unit/caller.test.ts', name: 'a Cognito identity is its identity id' },
      {
        file: 'test/unit/caller-rule-from-env.test.ts',
        name: 'a list as the stack sets it: a person of a listed SAML role is a caller of their own',
      },
      { file: 'test/unit/caller-rule-from-env.test.ts', name: 'a bad list stops the function, naming the variable' },
      { file: 'test/unit/caller.test.ts', name: 'no usable identity is no caller (the handlers answer 403)' },
      {
        file: 'test/runtime/caller-scope.test.ts',
        name: 'same role, two sessions, one Idempotency-Key: one entity, the second answer is its replay',
      },
      {
        file: 'test/runtime/caller-scope.test.ts',
        name: "another role is another caller: the first one's entity is invisible to it, and the same key makes its own",
      },
      {
        file: GUARDS,
        name: 'with keys scoped to the session, a retry from rotated credentials creates a second entity: found within 2 seeds',
      },
    ],
    doc: architecture('who-a-caller-is-and-what-a-caller-may-read'),
  },
  {
    id: 'sqs-safe-identifiers',
    statement:
      'Identifiers deliverable to SQS: an event is sent only when SQS can carry every part of it (the characters of its body; `entityId` and `eventId`, the FIFO message group and deduplication ids, as 1–128 printable ASCII); one it cannot is set aside (`malformed-outbox-items`), never sent to fail its batch or its queue',
    enforcedIn: [
      { file: 'packages/runtime/src/outbox/outbox-event.ts', symbol: 'checkOutboxEvent' },
      { file: 'packages/runtime/src/outbox/outbox-event.ts', symbol: 'SQS_BODY_CHARACTERS' },
      { file: 'packages/runtime/src/outbox/outbox-event.ts', symbol: 'SQS_FIFO_ID' },
    ],
    provedBy: [
      { file: 'test/unit/envelope.test.ts', name: ' is not publishable, and says why', templated: true },
      {
        file: INT_SQS_SAFE,
        name: 'every body the check passes is taken by a FIFO queue, and each it refuses the queue refuses too',
      },
      {
        file: INT_SQS_SAFE,
        name: 'the relay sends none of the events SQS would refuse, reports none of them failed, and publishes the rest',
      },
    ],
    doc: { page: 'docs/runbook.md', anchor: 'malformed-outbox-item' },
  },
  {
    id: 'malformed-outbox-items',
    statement:
      'Sweeper (and relay) skip an outbox item that can never be published (no event, bad shape, characters SQS refuses): logged, counted in `MalformedOutboxItem`, and set aside by the sweeper (`pendingShard = malformed`) so it cannot hide newer events; re-checked and reported every sweep, published once repaired',
    enforcedIn: [
      { file: 'packages/runtime/src/outbox/outbox-event.ts', symbol: 'checkOutboxEvent' },
      { file: 'packages/runtime/src/outbox/relay.ts', symbol: 'MalformedOutboxItem' },
      { file: 'packages/runtime/src/outbox/relay.ts', symbol: 'sweepOutbox' },
      { file: 'packages/runtime/src/wiring/entry-points/sweeper-handler.ts', symbol: 'makeHandler' },
      { file: 'packages/runtime/src/aws/dynamodb-outbox-store.ts', symbol: 'SET_ASIDE_PARTITION' },
    ],
    provedBy: [
      {
        file: UNIT_RELAY,
        name: '[valid, malformed, valid]: both valid ones published and marked, the metric once (1), no throw',
      },
      {
        file: UNIT_RELAY,
        name: ' is skipped and counted, not retried (it never could succeed); the others are relayed',
        templated: true,
      },
      {
        file: UNIT_RELAY,
        name: 'a full read (SWEEP_MAX_ITEMS) of malformed items older than a good one does not hide it: set aside by one sweep, the next publishes it',
      },
      {
        file: UNIT_RELAY,
        name: 'a set-aside item is reported on every sweep until repaired; the next sweep publishes the repaired item',
      },
      {
        file: INT_SWEEPER,
        name: 'more malformed items than a sweep reads, all older than a stranded event, do not hide it: set aside, then the event is published',
      },
    ],
    doc: { page: 'docs/runbook.md', anchor: 'malformed-outbox-item' },
  },
  {
    id: 'dependency-failure-503',
    statement:
      '503 only for throttling, conflicts and unavailability; a transaction cancelled by `ValidationError` is a 500',
    enforcedIn: [
      { file: 'packages/runtime/src/aws/transient-errors.ts', symbol: 'isDependencyFailure' },
      { file: 'packages/runtime/src/api/http.ts', symbol: 'serviceUnavailable' },
      { file: 'packages/runtime/src/api/http.ts', symbol: 'unexpectedErrorResponse' },
    ],
    provedBy: [
      { file: UNIT_DEPENDENCY_FAILURE, name: 'error classes of the thing transaction' },
      {
        file: UNIT_DEPENDENCY_FAILURE,
        name: ': 503 with Retry-After, and the idempotency lock is released for the retry',
        templated: true,
      },
      { file: UNIT_DEPENDENCY_FAILURE, name: ': 500 (a bug; retrying cannot help), no Retry-After', templated: true },
      {
        file: UNIT_DEPENDENCY_FAILURE,
        name: 'a condition failure on the outbox item is a 500: no retry can write it, and no 201 is given for an unwritten thing',
      },
    ],
    doc: HTTP_API,
  },
  {
    id: 'alarm-delivery',
    statement:
      "Alarms are deliverable: the topic policy lets CloudWatch publish (this account, exactly this stack's alarms) and the key lets it use only Decrypt/GenerateDataKey*; synth fails otherwise",
    enforcedIn: [
      { file: 'packages/cdk/src/monitoring.ts', symbol: 'Monitoring' },
      { file: 'packages/cdk/src/aspects/alarm-delivery.ts', symbol: 'AlarmDeliveryAspect' },
    ],
    provedBy: [
      { file: INFRA_ASPECTS, name: 'the real stack passes, and every one of its alarms notifies the topic' },
      {
        file: INFRA_ASPECTS,
        name: 'a topic policy with only the TLS Deny (enforceSSL alone) fails, naming the alarm, the topic and the policy',
      },
      { file: INFRA_ASPECTS, name: 'a key policy that lets CloudWatch encrypt but not decrypt fails' },
      {
        file: 'test/runtime/alarm-delivery.test.ts',
        name: 'with no topic policy statement for CloudWatch, it says plainly that CloudWatch could not publish, and why',
      },
    ],
    doc: { page: 'docs/operations.md' },
  },
  {
    id: 'gateway-status',
    statement:
      'Gateway-made errors carry `status`: one gateway response per response type with its own status, valid JSON',
    enforcedIn: [
      { file: 'packages/cdk/src/iam-rest-api.ts', symbol: 'GATEWAY_ERRORS' },
      { file: 'packages/cdk/src/iam-rest-api.ts', symbol: 'addProblemGatewayResponses' },
    ],
    provedBy: [
      { file: INFRA_IAM_REST_API, name: ', and a problem+json body that says it', templated: true },
      {
        file: INFRA_IAM_REST_API,
        name: 'a BAD_REQUEST_BODY whose validator message quotes field names still renders valid JSON',
      },
      {
        file: 'test/runtime/gateway-responses.test.ts',
        name: 'a signed request without its required Idempotency-Key gets 400 with the status in the body',
      },
      {
        file: 'test/runtime/gateway-responses.test.ts',
        name: 'a BAD_REQUEST_BODY whose validator message quotes field names renders JSON that parses',
      },
    ],
    doc: HTTP_API,
  },
  {
    id: 'effects-equal-intents',
    statement:
      "Effects == intents under load and faults, each fault with its own evidence (host crash counter, redelivery while running, a message the resend fault marked); a run names each enabled fault that left no mark, since its verdict proves nothing about it; `--faults all` gives each a chance to fire: the consumer crash is rolled after the try that finished an event's work, the relay crash runs at 1, the local provider's outage opens at the run's first call",
    enforcedIn: [
      { file: 'packages/runtime/src/faults/consumer-faults.ts', symbol: 'consumerFaults' },
      { file: 'packages/tools/src/proof-kit/faults.ts', symbol: 'ALL_FAULTS_RATES' },
      { file: 'packages/tools/src/local-runtime/provider/chaos.ts', symbol: 'Chaos' },
      { file: VERIFY, symbol: 'checkInvariants' },
      { file: 'packages/tools/src/proof-kit/run.ts', symbol: 'runLoadTest' },
      { file: 'packages/tools/src/proof-kit/fault-marks.ts', symbol: 'faultMarks' },
      { file: 'packages/tools/src/local-runtime/host/delivery-evidence.ts', symbol: 'DeliveryEvidence' },
    ],
    provedBy: [
      {
        file: 'test/unit/delivery-evidence.test.ts',
        name: 'a message handed over again while its first invocation still works on it, which then completes it, counts as a redelivery while running',
      },
      {
        file: 'test/unit/delivery-evidence.test.ts',
        name: "an event in a message the resend fault sent counts once per event; the relay's replay or a redrive under a new message id does not",
      },
      {
        file: 'test/runtime/proof-kit-groups.ts',
        name: 'effects equal intents, and each fault left its own mark',
        runBy: [PROOF_KIT_TEST],
      },
      {
        file: 'test/unit/faults.test.ts',
        name: 'crashes after a duplicate that made the provider call an earlier commit still owed: it finished the work',
      },
      {
        file: 'test/unit/faults.test.ts',
        name: "under --faults all's plan every relay invocation that dispatched something first crashes once; its retry goes through",
      },
      {
        file: 'test/unit/faults.test.ts',
        name: "the relay's resender marks its messages and gives FIFO another dedup id, so a resend is told apart from a replay",
      },
      {
        file: 'test/unit/local-provider.test.ts',
        name: 'an outage of forMs opens at the first call after the plan is set, however late that call comes, and ends forMs later',
      },
      {
        file: 'test/unit/fault-marks.test.ts',
        name: 'an enabled fault that fired nowhere is named apart, in the terminal and the HTML report',
      },
    ],
    doc: PROOF_KIT,
  },
  {
    id: 'dedupe-on-event-id',
    statement:
      "Dedupe on the producer's `eventId`, never the SQS messageId: a producer resend or a DLQ redrive is a new message and still one effect",
    enforcedIn: [
      { file: INBOX_LEDGER, symbol: 'claim' },
      { file: PUBLISHER, symbol: 'SqsEventPublisher' },
    ],
    provedBy: [
      {
        file: INT_PIPELINES,
        name: 'a producer resend with a new messageId is applied once, and reaches the provider once',
      },
      {
        file: INT_PIPELINES,
        name: 'a message that keeps failing transiently reaches the DLQ after maxReceiveCount attempts, then a redrive applies it once',
      },
      {
        file: UNIT_PUBLISHER,
        name: 'the deduplicationId option sets the FIFO dedup id (the resend fault), and only that',
      },
      {
        file: GUARDS,
        name: 'with the inbox claim keyed on the SQS messageId, a resent or republished event is taken without a claim under its eventId: found within 5 seeds',
      },
    ],
    doc: architecture('deduplicate-on-the-producers-eventid-never-on-the-sqs-message-id'),
  },
  {
    id: 'proof-can-fail',
    statement:
      "The proof can fail: with one consumer's inbox claim switched off (test-only; any consumer of the list), the verification reports the double effects in the domain proof's words (the probe stack's \"counted N times, not once\"); a run without a single 201 fails",
    enforcedIn: [
      { file: 'packages/tools/src/proof-kit/judge-intents.ts', symbol: 'judgeIntents' },
      { file: 'packages/runtime/src/faults/inbox-bypass.ts', symbol: 'inboxClaimDisabled' },
      { file: 'packages/runtime/src/faults/inbox-bypass.ts', symbol: 'withoutInbox' },
    ],
    provedBy: [
      {
        file: PROOF_KIT_ADVERSARIAL_TEST,
        name: 'probe: duplicates are counted again, reported as "counted N times, not once"',
      },
      {
        file: PROOF_KIT_ADVERSARIAL_TEST,
        name: 'the kit can fail: with every inbox claim disabled, resent events are applied again and reported',
      },
      {
        file: 'test/unit/verify.test.ts',
        name: 'a run in which no POST got a 201 (zero orders, zero intents) is a violation, not 0 == 0',
      },
      { file: 'test/unit/faults.test.ts', name: 'in the local runtime build it disables the named consumer only' },
    ],
    doc: PROOF_KIT,
  },
  {
    id: 'fault-injection-opt-in',
    statement:
      'Fault injection is opt-in, never in prod: without `-c faultInjection=true` no switch and no fault code in any bundle; inbox bypass only in the local build; plans expire; an active plan alarms',
    enforcedIn: [
      { file: 'lib/config.ts', symbol: 'readConfig' },
      { file: 'lib/config.ts', symbol: 'functionBuildFor' },
      { file: FUNCTION_DEFAULTS, symbol: 'bundleDefines' },
      { file: 'packages/cdk/src/fault-injection.ts', symbol: 'FaultInjectionSwitch' },
      { file: 'packages/runtime/src/faults/plan.ts', symbol: 'MAX_PLAN_LIFETIME_MS' },
    ],
    provedBy: [
      { file: 'test/infra/stage-config.test.ts', name: 'fault injection is off by default in dev and prod' },
      { file: 'test/infra/stage-config.test.ts', name: ' with one line', templated: true },
      { file: 'test/infra/stage-config.test.ts', name: 'the local runtime build turns fault injection on' },
      {
        file: 'test/infra/fault-injection.test.ts',
        name: 'there is no SSM parameter, no fault variable on any function, no fault alarm and no output',
      },
      {
        file: 'test/infra/fault-injection.test.ts',
        name: 'an alarm fires on the first invocation under a plan, to the alarm topic, and names its runbook',
      },
      {
        file: 'test/infra/bundles.test.ts',
        name: 'built without fault injection has no fault code and no inbox bypass',
      },
      { file: 'test/infra/bundles.test.ts', name: 'only the local runtime build carries the inbox bypass' },
      { file: 'test/unit/faults.test.ts', name: 'a fault plan expires' },
      {
        file: 'test/unit/faults.test.ts',
        name: 'a plan naming a consumer does not disable its claim outside the local runtime build',
      },
    ],
    doc: architecture('stages-and-what-a-fork-can-deploy-safely'),
  },
  {
    id: 'stages-side-by-side',
    statement:
      "Stages side by side without name collisions, each stage's alarms on its own metrics (the `service` dimension is the stack's name); prod retains and deletion-protects its tables, keeps logs a year and has no fault switch; no function reserves concurrency",
    enforcedIn: [
      { file: 'lib/config.ts', symbol: 'STAGE_DEFAULTS' },
      { file: FUNCTION_DEFAULTS, symbol: 'serviceName' },
      { file: 'packages/cdk/src/aspects/reserved-concurrency.ts', symbol: 'ReservedConcurrencyAspect' },
    ],
    provedBy: [
      {
        file: 'test/infra/stage-config.test.ts',
        name: 'prod: tables retained and deletion-protected, logs kept a year, no ceiling unless asked',
      },
      { file: 'test/infra/stages.test.ts', name: 'no explicit name is shared' },
      {
        file: 'test/infra/stages.test.ts',
        name: "no alarm watches a custom metric the other stage publishes (the functions' service dimension is their stack's)",
      },
      { file: 'test/infra/stages.test.ts', name: 'every table is retained and refuses deletion' },
      { file: 'test/infra/stages.test.ts', name: 'keeps every log group a year' },
      {
        file: 'test/infra/stages.test.ts',
        name: 'has no fault switch: no SSM parameter, no fault variable on any function, no output',
      },
      {
        file: 'test/infra/stages.test.ts',
        name: 'no function of the stack reserves concurrency (a fresh account could not deploy it)',
      },
    ],
    doc: { page: 'docs/adapting.md', anchor: '4-deploy-two-stages-side-by-side' },
  },
  {
    id: 'prod-keeps-what-a-person-looks-at',
    statement:
      'prod keeps what a person must look at: its DLQs are retained when the stack goes, the stack has termination protection, and a stage pinned to an account and region refuses credentials for another at synth, naming both; an AWS AccessDenied in the DLQ tool or the proof kit is one line naming `-c operatorRoleArns`',
    enforcedIn: [
      { file: 'lib/config.ts', symbol: 'stackPropsFor' },
      { file: 'lib/config.ts', symbol: 'stackEnvironment' },
      { file: 'packages/tools/src/cli/access-denied.ts', symbol: 'accessDeniedLine' },
    ],
    provedBy: [
      {
        file: 'test/infra/stages.test.ts',
        name: "every DLQ (each consumer's, the relay's on-failure queue, the sweeper's) is retained when the stack goes: its events wait for a person",
      },
      {
        file: 'test/infra/stage-config.test.ts',
        name: 'prod has termination protection on its stack, as bin/app.ts builds it; dev does not',
      },
      {
        file: 'test/infra/stage-config.test.ts',
        name: 'credentials for another account or region are refused at synth, naming both and the context key',
      },
      {
        file: 'test/unit/access-denied.test.ts',
        name: 'a redrive refused by AWS: one line naming -c operatorRoleArns, exit 1, nothing deleted, every message visible again',
      },
    ],
    doc: { page: 'docs/deploying.md' },
  },
  {
    id: 'entry-point-list',
    statement:
      "Every function names its code by a module path relative to the project root (a consumer's is in its spec): a missing file fails synth in one line, every function's module exports `handler`, and no module of the entry folder goes unused by the dev and prod stacks",
    enforcedIn: [{ file: FUNCTION_DEFAULTS, symbol: 'entryPointPath' }],
    provedBy: [
      {
        file: 'test/infra/entry-points.test.ts',
        name: 'a function whose entry is missing fails at synth with a one-line error',
      },
      { file: 'test/infra/entry-points.test.ts', name: "every function's entry exists and exports handler" },
    ],
    doc: { page: 'docs/adapting.md' },
  },
  {
    id: 'domain-replaceable',
    statement:
      "The example can be replaced: the mechanism and every tool take what they know of the domain from the example's plug-ins only (`tooling/<example>/`, loaded once by each command's entry point by the name in `package.json`, or from the module its `--tooling` flag names, and handed to the engines; lint holds `packages/tools/src/` to it), the tools import nothing of the example and no import circle ties them together (the import-graph rules), so another domain (the bookings fixture) in place of the shop type-checks, lints, passes its tests and the tools' own, synthesizes both stages with cdk-nag, and passes the proof kit's all-faults smoke run on `npm start`, with no file of the mechanism, the tools, `bin/` or `package.json` changed; and no file of the mechanism or the tools, comments and READMEs included, names a path of the example or of `test/fixtures/`, so deleting the example leaves none of them pointing at a file that is gone",
    enforcedIn: [
      { file: 'packages/tools/src/load-domain.ts', symbol: 'loadDomain' },
      { file: 'packages/tools/src/domain.ts', symbol: 'ExampleTooling' },
      { file: 'packages/tools/src/proof-kit/domain.ts', symbol: 'ProofDomain' },
      { file: 'packages/tools/src/simulation/contract.ts', symbol: 'SimulationWorld' },
    ],
    provedBy: [
      {
        file: 'test/unit/another-domain.test.ts',
        name: 'the copy with bookings type-checks and lints: the mechanism and the tools need nothing of the shop',
      },
      {
        file: 'test/unit/another-domain-tiers.test.ts',
        name: 'the bookings tests pass (one booking per key, one room-night count, one provider call per event), and so does every test of the unit and infra tiers that reads the domain',
      },
      {
        file: 'test/unit/another-domain.test.ts',
        name: 'both stages synthesize: cdk-nag finds nothing and the correctness aspects accept the template',
      },
      {
        file: 'test/unit/boundaries.test.ts',
        name: " takes the example's domain from its entry point, loaded by packages/tools/src/load-domain.ts: ",
        templated: true,
      },
      { file: 'test/unit/import-graph.test.ts', name: 'the repository breaks none of the rules' },
      { file: 'test/unit/import-graph.test.ts', name: ' is refused', templated: true },
      {
        file: 'test/unit/mechanism-names-no-example.test.ts',
        name: 'no file of the mechanism or the tools names a path of the example or of test/fixtures/',
      },
      {
        file: 'test/unit/another-domain.test.ts',
        name: 'the simulation engine runs the bookings: every invariant holds over its schedules, and a switched-off inbox claim is found',
      },
      {
        file: 'test/unit/tooling-module.test.ts',
        name: '--tooling names the module the tools take their domain from, relative to the repository root',
      },
      {
        file: 'test/unit/another-domain-runtime.test.ts',
        name: 'npm run loadtest -- --profile smoke --faults all passes on the bookings: every booking once, its nights and its provider call once, every fault on, poison and redrive marked',
      },
    ],
    doc: { page: 'docs/adapting.md' },
  },
  {
    id: 'consumers-are-data',
    statement:
      'Consumers are data: one list (`consumers.ts` of the example, a `ConsumerSpec` each) gives each consumer its queue and DLQ, mapping, grants, fault switch, fault-target tag (the AWS FIS template selects by it: `<stack>:consumer`, `<stack>:relay`), alarms, dashboard widgets, outputs and relay route; a list the stack cannot build fails synth with its reason; the proof kit, DLQ tool and simulation find every consumer from it; `npm run new:consumer` adds one that passes typecheck, lint and its own test',
    enforcedIn: [
      { file: 'packages/runtime/src/consumer-spec.ts', symbol: 'validateConsumerSpecs' },
      { file: 'packages/cdk/src/consumer-pipelines.ts', symbol: 'ConsumerPipelines' },
      { file: EXACTLY_ONCE, symbol: 'ExactlyOnce' },
      { file: 'packages/cdk/src/fault-injection.ts', symbol: 'tagFaultTarget' },
      { file: 'packages/tools/src/scaffolder/new-consumer.ts', symbol: 'planConsumer' },
    ],
    provedBy: [
      { file: 'test/infra/consumer-list.test.ts', name: 'a third consumer on the list' },
      { file: 'test/infra/consumer-list.test.ts', name: 'a list the specs refuse fails synth with the reason' },
      {
        file: 'test/infra/consumer-list.test.ts',
        name: 'it and every other consumer carry the fault-target tag, as the relay does; the FIS template selects by that tag',
      },
      {
        file: 'test/unit/proof-kit-consumers.test.ts',
        name: 'poison goes to every consumer queue; a FIFO one gets a group and deduplication id, a standard one neither',
      },
      { file: 'test/unit/dlq-cli.test.ts', name: 'consumer DLQs come from the consumer list' },
      {
        file: 'test/simulation/consumers.test.ts',
        name: 'a third consumer on the list is delivered every event it takes: its handler claims each in its own inbox',
      },
      { file: 'test/unit/new-consumer.test.ts', name: 'the repository with them typechecks' },
      { file: 'test/unit/new-consumer.test.ts', name: 'what it wrote passes lint and prettier' },
      {
        file: 'test/unit/new-consumer.test.ts',
        name: 'the generated unit tests pass: exactly once, and the DLQ for what the consumer does not take',
      },
    ],
    doc: { page: 'docs/adapting.md', anchor: '2-add-a-consumer-a-third-queue-consumer-eg-audit' },
  },
  {
    id: 'relay-routes',
    statement:
      'The relay routes each event to every consumer whose spec takes its type (routes read once at cold start from `CONSUMER_ROUTES`; a malformed value stops the function loading); a type no consumer takes is marked dispatched, so it cannot hold its shard or be swept forever',
    enforcedIn: [
      { file: 'packages/runtime/src/outbox/routes.ts', symbol: 'parseRoutes' },
      { file: 'packages/runtime/src/outbox/routes.ts', symbol: 'routesFor' },
      { file: PUBLISHER, symbol: 'SqsEventPublisher' },
      { file: 'packages/runtime/src/wiring/outbox-wiring.ts', symbol: 'outboxConfigFromEnv' },
    ],
    provedBy: [
      {
        file: UNIT_PUBLISHER,
        name: 'each event goes to every route that takes its type: a third route taking ThingHappened gets it, routes not taking ThingUndone do not',
      },
      {
        file: UNIT_PUBLISHER,
        name: 'an event of a type no route takes is sent nowhere, logged, and not failed (it would block the outbox for good)',
      },
      { file: UNIT_RELAY, name: 'the relay and the sweeper read their routes once, at cold start' },
      { file: UNIT_RELAY, name: ' stops the function from loading, naming the variable', templated: true },
      {
        file: UNIT_RELAY,
        name: 'an event of a type no consumer takes is sent nowhere and marked dispatched, so it does not hold the shard',
      },
      {
        file: INFRA_PIPELINES,
        name: "relay and sweeper route by CONSUMER_ROUTES: one route per consumer, with its queue, its queue's type and the event types it takes",
      },
    ],
    doc: architecture('the-mechanism-is-generic-orders-are-the-example'),
  },
  {
    id: 'each-event-once-per-consumer',
    statement:
      'Each event is applied once by every consumer that takes it (invariant 6: its inbox claim exists, its provider key was called where its spec names a provider (a consumer that names none owes no call and still has every claim checked), never twice without a claim; an event the generic effect found stale has its entry marked superseded instead, and owes no call, but only when a newer version of its entity was produced: a stale mark with none, or two events of one entity at one version, is a dropped event and fails the run, summed up per consumer as applied fewer than owed); the kit fails on any consumer whose inbox claim is off, a scaffolded one included',
    enforcedIn: [
      { file: VERIFY, symbol: 'checkEachEventOncePerConsumer' },
      { file: VERIFY, symbol: 'producedEvents' },
    ],
    provedBy: [
      {
        file: 'test/unit/verify-provider-calls.test.ts',
        name: 'an event it takes with no inbox claim is reported: never applied, or applied without its claim',
      },
      {
        file: 'test/unit/verify-provider-calls.test.ts',
        name: 'an event it found stale (its entry superseded by a later event of its entity) owes no call; with no entry at all it is reported',
      },
      {
        file: 'test/integration/entity-effect.test.ts',
        name: 'a stale event leaves its entry marked superseded by the entity last event: judged, not lost, and a copy of it calls nothing',
      },
      {
        file: 'test/unit/verify-provider-calls.test.ts',
        name: 'its provider called twice with no claim to deduplicate is a double effect',
      },
      {
        file: 'test/unit/verify-provider-calls.test.ts',
        name: 'its claims all there and no provider call anywhere under its keys: no violation, and no call owed',
      },
      {
        file: 'test/unit/verify-provider-calls.test.ts',
        name: 'a claim of its missing fails the proof: a consumer that applied nothing does not pass for owing no call',
      },
      {
        file: 'test/simulation/provider-less.test.ts',
        name: 'a consumer that names no provider keeps the inbox-claim check: without the claim, its events are reported unclaimed',
      },
      {
        file: 'test/unit/verify.test.ts',
        name: "'s missing claim is reported under the generic invariant",
        templated: true,
      },
      {
        file: PROOF_KIT_ADVERSARIAL_TEST,
        name: ': the generic invariant reports its events as unclaimed',
        templated: true,
      },
      {
        file: 'test/unit/verify-superseded.test.ts',
        name: 'an event marked superseded when no newer event of its entity was produced was dropped: both the event and the count say so',
      },
      {
        file: 'test/simulation/silent-drop.test.ts',
        name: 'things of one account named by the account as their entityId: the events the version guard drops fail the proof, as superseded by no newer event and as fewer applied than owed',
      },
      {
        file: 'test/simulation/silent-drop.test.ts',
        name: 'the same things with the account as their orderingKey (each keeping its entity and versions): every event applied, every invariant holds',
      },
    ],
    doc: PROOF_KIT,
  },
  {
    id: 'simulation-api',
    statement:
      "The simulation runs a domain's idempotent POST (the mechanism's `idempotentCommand`) with Powertools' idempotency layer on the in-memory DynamoDB, which passes the same idempotency-store contract as DynamoDB Local; `npm run sim -- --jobs N` prints what one process prints",
    enforcedIn: [
      { file: 'packages/tools/src/simulation/world/api.ts', symbol: 'simulatedIdempotencyStore' },
      { file: IDEMPOTENCY_CONTRACTS, symbol: 'describeIdempotencyStoreContract' },
      { file: 'packages/tools/src/simulation/campaign.ts', symbol: 'mergeCampaignReports' },
    ],
    provedBy: [
      {
        file: 'test/simulation/api.test.ts',
        name: 'two requests with one key at once: one makes the entity, the other gets 409; a retry later replays the same answer',
      },
      {
        file: 'test/simulation/api.test.ts',
        name: 'the entity written but the completion lost: 409 until the in-progress record expires on the clock, then the retry answers with that entity',
      },
      {
        file: 'test/simulation/api-guards.test.ts',
        name: 'without payload validation, a key sent again with another body is answered with the first entity: found within 2 seeds',
      },
      {
        file: IDEMPOTENCY_CONTRACTS,
        name: 'idempotency store contract: ',
        templated: true,
        runBy: IDEMPOTENCY_CONTRACT_RUNNERS,
      },
      {
        file: 'test/simulation/cli.test.ts',
        name: 'schedules shared out over two processes (--jobs 2) report what one process running them all reports, the failure included',
      },
    ],
    doc: SIMULATION,
  },
  {
    id: 'retry-budget',
    statement:
      "Retry budget: a transient failure never dead-letters a message before 15 min of guaranteed backoff (base 2 s doubling, cap 5 min, wait in [ceiling/2, ceiling]; 14 tries = 1,005 s guaranteed, ~1,508 s expected); a provider's Retry-After lengthens a wait up to the cap, never shortens one; `maxReceiveCount` and the consumers' settings come from one `RETRY_BUDGET`, checked at synth",
    enforcedIn: [
      { file: BACKOFF, symbol: 'RETRY_BUDGET' },
      { file: BACKOFF, symbol: 'guaranteedBudgetSeconds' },
      { file: CONSUMER_SUPPORT, symbol: 'failTransiently' },
      { file: 'packages/cdk/src/consumer-pipelines.ts', symbol: 'ConsumerPipelines' },
      { file: 'packages/cdk/src/aspects/retry-budget.ts', symbol: 'RetryBudgetAspect' },
      { file: BACKOFF, symbol: 'honourRetryHint' },
    ],
    provedBy: [
      {
        file: UNIT_BACKOFF,
        name: '14 tries: 1005 s of backoff guaranteed before the last (>= 900 s), about 1508 s expected, 2010 s at most',
      },
      {
        file: 'test/unit/retry-after.test.ts',
        name: 'whatever the hints, every wait stays between its floor and the cap, and the guaranteed budget holds',
      },
      {
        file: 'test/unit/retry-after.test.ts',
        name: 'FIFO, at its last try: a hint extends no budget, the record is dead-lettered as RetryBudgetExhausted',
      },
      {
        file: UNIT_BACKOFF,
        name: 'the guarantee holds however the jitter falls: the sum of real draws is never below it',
      },
      { file: INFRA_PIPELINES, name: 'retry budget, from the deployed numbers' },
      {
        file: INFRA_ASPECTS,
        name: 'standard queue: maxReceiveCount 14 passes (base 2 s, cap 300 s: 1005 s guaranteed before the 14th try)',
      },
      {
        file: INFRA_ASPECTS,
        name: 'standard queue: maxReceiveCount 13 fails (855 s guaranteed), on the queue, with the numbers and the fix',
      },
      {
        file: GUARDS,
        name: 'with the old retry budget (5 receives, full jitter from 2 s), a two-minute provider outage dead-letters live messages: found within 2 seeds',
      },
      {
        file: OUTAGES_TEST,
        name: 'a consumer outage of 75 s: every message fails try after try, none is dead-lettered, no batch thrown, effects == intents',
      },
    ],
    doc: architecture('a-retry-budget-and-dead-letter-queues'),
  },
  {
    id: 'contention-retry',
    statement:
      'Transaction conflicts and throttling are retried in-process, each write on its own (6 tries, full jitter from 50 ms, capped at 1 s a wait, never past the record\'s deadline) before the message is failed; a claim\'s ConditionalCheckFailed is still "duplicate", never retried',
    enforcedIn: [
      { file: 'packages/runtime/src/aws/transient-errors.ts', symbol: 'isContention' },
      { file: 'packages/runtime/src/runtime/contention-retry.ts', symbol: 'IN_PROCESS_RETRY' },
      { file: 'packages/runtime/src/runtime/contention-retry.ts', symbol: 'withContentionRetries' },
      { file: INBOX_LEDGER, symbol: 'withRetries' },
    ],
    provedBy: [
      { file: UNIT_RETRY, name: ': contention is retried in-process first', templated: true },
      { file: UNIT_RETRY, name: 'a TransactionConflict, then success: applied once, not failed, no visibility change' },
      { file: UNIT_RETRY, name: 'conflicts on all 6 in-process tries: the message is failed with its queue backoff' },
      {
        file: UNIT_RETRY,
        name: 'a ConditionalCheckFailed on the claim is a duplicate: one transaction, never retried, acked',
      },
      {
        file: UNIT_RETRY,
        name: 'in-process waits are full jitter: at most base x 2^(try-1) ms each, capped, attempts - 1 of them',
      },
    ],
    doc: architecture('one-provider-call-at-a-time-per-event-the-lease'),
  },
  {
    id: 'fifo-try-counter',
    statement:
      "FIFO: a record skipped behind a failing head is never dead-lettered untried: the consumer counts its own tries (`TRIES#` items) and dead-letters after 14 (`RetryBudgetExhausted`, with the last error); the queue's `maxReceiveCount` (14 × batch size + 10 for crashes = 150) is only a backstop",
    enforcedIn: [
      { file: CONSUMER_SUPPORT, symbol: 'failTransiently' },
      { file: 'packages/runtime/src/aws/dynamodb-try-counter.ts', symbol: 'DynamoDbTryCounter' },
      { file: QUEUE_CONSUMER, symbol: 'queueConsumerHandler' },
    ],
    provedBy: [
      { file: UNIT_RETRY, name: 'probe-fifo (FIFO): the retry budget counts tries, not receives' },
      {
        file: UNIT_RETRY,
        name: 'th failed try the consumer moves the record to the DLQ with the last error, and acks it',
        templated: true,
      },
      {
        file: UNIT_RETRY,
        name: 'a head failing transiently for longer than the budget: the consumer dead-letters it after its tries, then the records behind it are applied',
      },
      {
        file: UNIT_RETRY,
        name: 'a permanent-poison head goes to the DLQ at once with its cause; the record behind it is applied in the same batch',
      },
      {
        file: INFRA_ASPECTS,
        name: "FIFO: the consumer's own try limit is what must reach the budget; 13 fails on the function",
      },
      {
        file: PORT_CONTRACTS,
        name: 'counts failed tries per consumer and message: 1, 2, 3; another message starts at 1',
        runBy: PORT_CONTRACT_RUNNERS,
      },
    ],
    doc: architecture('a-retry-budget-and-dead-letter-queues'),
  },
  {
    id: 'full-batch-failure',
    statement:
      'A batch in which every record fails is reported record by record (`throwOnFullBatchFailure: false`), never thrown: FIFO still releases the skipped records, and the batch is no function error',
    enforcedIn: [{ file: QUEUE_CONSUMER, symbol: 'queueConsumerHandler' }],
    provedBy: [
      {
        file: UNIT_RETRY,
        name: 'probe: every id reported as a batch item failure, nothing thrown, each with its own backoff',
      },
      {
        file: UNIT_RETRY,
        name: 'probe-fifo: every id reported, nothing thrown; the heads back off, the skipped records are released at once',
      },
      {
        file: UNIT_CONSUMERS,
        name: 'a batch in which every record fails reports each as a batch item failure, and does not throw',
      },
      {
        file: OUTAGES_TEST,
        name: 'a consumer outage of 75 s: every message fails try after try, none is dead-lettered, no batch thrown, effects == intents',
      },
    ],
    doc: architecture('a-retry-budget-and-dead-letter-queues'),
  },
  {
    id: 'alarm-runbook',
    statement: 'Every alarm names its runbook section, and the section exists',
    enforcedIn: [
      { file: 'packages/cdk/src/monitoring.ts', symbol: 'addAlarm' },
      { file: 'packages/cdk/src/monitoring.ts', symbol: 'RunbookSection' },
    ],
    provedBy: [
      {
        file: 'test/infra/runbook.test.ts',
        name: 'the runbook has one section per alarm kind, under the headings alarms link to',
      },
      { file: 'test/infra/runbook.test.ts', name: 'every alarm of the stack names a runbook section that exists' },
    ],
    doc: { page: 'docs/runbook.md' },
  },
  {
    id: 'outbox-retention',
    statement:
      'A dispatched outbox item expires 7 days after its first dispatch (never before the stream forgets its record); a pending one never does, checked at synth (`OutboxRetention`)',
    enforcedIn: [
      { file: 'packages/runtime/src/aws/dynamodb-outbox-store.ts', symbol: 'markDispatched' },
      { file: 'packages/cdk/src/aspects/outbox-retention.ts', symbol: 'OutboxRetentionAspect' },
    ],
    provedBy: [
      {
        file: PORT_CONTRACTS,
        runBy: PORT_CONTRACT_RUNNERS,
        name: 'a dispatched item expires its retention after its first dispatch; a second mark keeps that expiry, and the entity carries none',
      },
      {
        file: INFRA_ASPECTS,
        name: 'a retention shorter than the stream keeps its records, or none, fails on the function',
      },
      {
        file: INFRA_ASPECTS,
        name: 'a table without the outbox TTL attribute fails: dispatched items would be kept forever',
      },
    ],
    doc: { page: 'docs/operations.md' },
  },
  {
    id: 'source-age-alarm',
    statement:
      "A consumer's source-queue age alarm never fires on an ordinary retry: its threshold is above the batching window + the visibility timeout + the backoff cap, checked at synth (`RetryBudget`)",
    enforcedIn: [
      { file: BACKOFF, symbol: 'longestOrdinaryRetrySeconds' },
      { file: 'packages/cdk/src/aspects/retry-budget.ts', symbol: 'checkAgeAlarms' },
    ],
    provedBy: [
      {
        file: INFRA_ASPECTS,
        name: 'an age alarm on the source queue that fires at the longest ordinary retry fails, on the alarm, with the sum and the fix; above it passes',
      },
      {
        file: INFRA_PIPELINES,
        name: ' source queue: alarms on an oldest message older than the longest ordinary retry, never at it',
        templated: true,
      },
    ],
    doc: { page: 'docs/runbook.md', anchor: 'source-queue-age' },
  },
  {
    id: 'trace-context',
    statement:
      "One request's W3C trace context crosses every hop: the API's span (a child of the caller's valid `traceparent`, a new trace otherwise, never an error) is stored on the outbox event, the relay's span rides the message's `traceparent` attribute, the consumer's try is its child, and the provider call sends its own span as the `traceparent` header, one trace id throughout",
    enforcedIn: [
      { file: 'packages/runtime/src/trace/trace-context.ts', symbol: 'parseTraceparent' },
      { file: 'packages/runtime/src/api/request-trace.ts', symbol: 'inRequestSpan' },
      { file: 'packages/runtime/src/aws/outbox-table.ts', symbol: 'outboxPut' },
      { file: 'packages/runtime/src/aws/sqs-event-publisher.ts', symbol: 'SqsEventPublisher' },
      { file: 'packages/runtime/src/consumer/record-trace.ts', symbol: 'recordQueueWait' },
      { file: 'packages/runtime/src/aws/http-provider.ts', symbol: 'HttpProvider' },
    ],
    provedBy: [
      {
        file: 'test/runtime/end-to-end.test.ts',
        name: "one create's trace, from the API call to the provider calls: one trace id, every hop a child of the one before",
      },
      {
        file: 'test/exactly-once/trace.test.ts',
        name: ' traceparent is ignored: the request runs in a new trace',
        templated: true,
      },
      {
        file: 'test/exactly-once/trace.test.ts',
        name: "the message's traceparent attribute is the relay span, a child of the event's; the body is the stored event",
      },
      {
        file: 'test/exactly-once/trace.test.ts',
        name: "the call sends traceparent naming its provider-call span, a child of the consumer's",
      },
    ],
    doc: { page: 'docs/operations.md', anchor: 'tracing-one-order-across-every-hop' },
  },
  {
    id: 'trace-joins-opentelemetry',
    statement:
      "Under an OpenTelemetry SDK (the ADOT layer) every hop is an OpenTelemetry span with the ids of its `Span` line and of the `traceparent` it hands on: a carried `traceparent` decides the trace (the invocation's span of another trace is linked), without one the hop is a child of the active span; every line logged in a hop carries its trace id as `correlation_id`, each record its own when records run side by side",
    enforcedIn: [
      { file: 'packages/runtime/src/trace/spans.ts', symbol: 'openSpan' },
      { file: 'packages/runtime/src/trace/spans.ts', symbol: 'inSpan' },
      { file: 'packages/runtime/src/runtime/observability.ts', symbol: 'logger' },
    ],
    provedBy: [
      {
        file: 'test/exactly-once/otel-spans.test.ts',
        name: 'each hop is an OpenTelemetry span with its attributes, a child of the hop it runs in, and the Span line carries its ids',
      },
      {
        file: 'test/exactly-once/otel-spans.test.ts',
        name: "a carried traceparent wins over the invocation's span (the order's trace goes on), linked to it",
      },
      {
        file: 'test/exactly-once/otel-spans.test.ts',
        name: "without a carried traceparent, the hop is a child of ADOT's active invocation span: one trace id",
      },
      {
        file: 'test/exactly-once/correlation-id.test.ts',
        name: 'records handled side by side each log their own trace id as the correlation id; outside a span, none',
      },
    ],
    doc: { page: 'docs/operations.md', anchor: 'tracing-one-order-across-every-hop' },
  },
  {
    id: 'dlq-redrive',
    statement:
      'A DLQ redrive of already-applied events makes no second effect; FIFO keeps order per group; poison stays unless asked',
    enforcedIn: [
      { file: 'packages/tools/src/dlq/messages.ts', symbol: 'redrive' },
      { file: 'packages/tools/src/dlq/messages.ts', symbol: 'redriveDecision' },
      { file: 'packages/tools/src/dlq/queues.ts', symbol: 'discoverDeadLetterQueues' },
    ],
    provedBy: [
      {
        file: 'test/unit/dlq-cli.test.ts',
        name: 'a FIFO copy keeps its group and gets a fresh deduplication id each time it is redriven',
      },
      {
        file: 'test/runtime/dlq-tool.test.ts',
        name: 'redrive moves already-applied events back, leaves poison, and the consumers apply nothing twice',
      },
      { file: 'test/runtime/dlq-tool.test.ts', name: 'a FIFO redrive keeps each message group and its order' },
      {
        file: 'test/runtime/dlq-tool.test.ts',
        name: 'redrive refuses poison by cause without --include-poison (usage error, nothing moved)',
      },
    ],
    doc: { page: 'docs/runbook.md', anchor: 'why-a-redrive-is-safe-and-when-it-is-not' },
  },
  {
    id: 'own-log-group',
    statement: 'Each function writes only to its own log group',
    enforcedIn: [{ file: FUNCTION_DEFAULTS, symbol: 'FunctionWithDefaults' }],
    provedBy: [
      {
        file: 'test/infra/function-logs.test.ts',
        name: ': may create streams and put events on its own log group, and on no other',
        templated: true,
      },
      {
        file: 'test/infra/function-logs.test.ts',
        name: ': its role has no AWS-managed basic execution role',
        templated: true,
      },
    ],
    doc: { page: 'docs/deploying.md' },
  },
  {
    id: 'local-loopback-only',
    statement:
      'The local runtime answers loopback only: emulators on 127.0.0.1 where they allow it, a non-loopback Host refused (DNS rebinding)',
    enforcedIn: [
      { file: 'packages/tools/src/local-runtime/emulators.ts', symbol: 'startDynamoDbLocal' },
      { file: 'packages/tools/src/local-runtime/emulators.ts', symbol: 'startFauxqs' },
      { file: 'packages/tools/src/local-runtime/api/server.ts', symbol: 'isLoopbackHost' },
    ],
    provedBy: [
      {
        file: 'test/runtime/api-host-check.test.ts',
        name: ' is refused with a 403 problem+json, and no function runs',
        templated: true,
      },
      { file: 'test/runtime/api-host-check.test.ts', name: 'the local-only routes are behind the same check' },
      {
        file: 'test/runtime/emulators.test.ts',
        name: 'DynamoDB Local gives other origins no CORS access; its own loopback origin keeps it',
      },
    ],
    doc: { page: 'docs/local-runtime.md' },
  },
  {
    id: 'local-runs-what-synth-checked',
    statement:
      "The local runtime runs the wiring the correctness aspects checked: both read the synthesized template through one reader (which queue or stream a mapping consumes, the function it invokes through an alias or a version, each queue's DLQ, maxReceiveCount and FIFO flag), and a value the template leaves to deploy time is refused by name instead of run as a guess",
    enforcedIn: [
      { file: 'packages/cdk/src/template/resources.ts', symbol: 'eventSourceOf' },
      { file: 'packages/cdk/src/template/resources.ts', symbol: 'functionsNamedBy' },
      { file: 'packages/cdk/src/template/resources.ts', symbol: 'redrivePolicyOf' },
      { file: 'packages/cdk/src/aspects/model.ts', symbol: 'StackModel' },
      { file: 'packages/tools/src/local-runtime/template/event-sources.ts', symbol: 'eventSourceDefinitions' },
      { file: 'packages/tools/src/local-runtime/template/sqs.ts', symbol: 'queueDefinitions' },
    ],
    provedBy: [
      {
        file: 'test/infra/template-readers.test.ts',
        name: "the aspects' model and the local runtime read the same wiring from the stack",
      },
      { file: 'test/unit/local-template.test.ts', name: 'a mapping that invokes an alias runs the function behind it' },
      { file: 'test/unit/local-template.test.ts', name: 'a batch size left to deploy time is refused, not run as NaN' },
      { file: 'test/unit/local-template.test.ts', name: 'a FifoQueue left to deploy time is refused' },
    ],
    doc: { page: 'docs/local-runtime.md' },
  },
  {
    id: 'local-sigv4',
    statement:
      "The local API checks SigV4 as API Gateway does: the signature recomputed with the SDK's signer over the request as it arrived (method, path, query, signed headers, the body's SHA-256) with the documented local secret (`local`) for any access key id, which names the caller, `X-Amz-Date` within 5 minutes either way, and API Gateway's status, error type and message for each refusal; no function runs for a refused request",
    enforcedIn: [
      { file: 'packages/tools/src/local-runtime/api/verify-signature.ts', symbol: 'verifySignature' },
      { file: 'packages/tools/src/local-runtime/api/verify-signature.ts', symbol: 'LOCAL_SECRET_ACCESS_KEY' },
    ],
    provedBy: [
      {
        file: 'test/unit/local-api-sigv4.test.ts',
        name: 'an unsigned request gets 403 "Missing Authentication Token" and no function runs',
      },
      { file: 'test/unit/local-api-sigv4.test.ts', name: 'a tampered request (', templated: true },
      {
        file: 'test/unit/local-api-sigv4.test.ts',
        name: 'a stale request (signed 5 minutes and 1 second before the gateway\'s clock) gets 403 "Signature expired"',
      },
      {
        file: 'test/unit/local-api-sigv4.test.ts',
        name: 'a correctly signed request reaches the function, the access key id as the caller',
      },
      {
        file: 'test/runtime/gateway-responses.test.ts',
        name: "a stale signature gets 403 with the stack's INVALID_SIGNATURE problem+json body and API Gateway's message",
      },
    ],
    doc: HTTP_API,
  },
  {
    id: 'load-signing-holds',
    statement:
      "The proof kit's driver signs each request the moment it sends it, whatever the rate, so none goes out with a signature older than API Gateway's 5-minute window, with credentials asked of their provider before each segment and every minute (expiring SSO or assumed-role credentials are replaced), by the SDK signer's algorithm on Node's native SHA-256",
    enforcedIn: [
      { file: 'packages/tools/src/proof-kit/drive.ts', symbol: 'drive' },
      { file: 'packages/tools/src/proof-kit/request-signer.ts', symbol: 'RequestSigner' },
    ],
    provedBy: [
      {
        file: 'test/unit/drive-signing.test.ts',
        name: 'at 1 request every 10 s, no request of a 2,000-request segment is sent with a signature older than 5 minutes',
      },
      {
        file: 'test/unit/drive-signing.test.ts',
        name: 'credentials that expire during the run are replaced by what their provider hands out next',
      },
      { file: 'test/unit/drive-signing.test.ts', name: "the driver's signature is the SDK signer's, byte for byte" },
    ],
    doc: PROOF_KIT,
  },
  {
    id: 'intents-from-ledgers',
    statement:
      "`--verify-only --intents <files...>` merges every generator's intent ledger (the driver's, each Artillery worker's) and checks one entity per accepted key, none for a refused one, and the effects of those entities; without ledgers it says the headline check was not run",
    enforcedIn: [
      { file: 'packages/tools/src/proof-kit/intents.ts', symbol: 'readLedgers' },
      { file: 'packages/tools/src/proof-kit/intents.ts', symbol: 'factsOfLedger' },
      { file: 'packages/tools/src/proof-kit/run.ts', symbol: 'verifyStack' },
    ],
    provedBy: [
      {
        file: 'test/unit/intent-ledger.test.ts',
        name: "the ledgers of two workers merge: one written as files are, one as CloudWatch Logs exports a worker's output",
      },
      { file: 'test/unit/intent-ledger.test.ts', name: 'an entity for a key the ledger shows refused is a violation' },
      { file: 'test/unit/intent-ledger.test.ts', name: 'an accepted key without its entity is a violation' },
    ],
    doc: { page: 'docs/proof-kit.md', anchor: 'load-test-a-deployed-stack' },
  },
  {
    id: 'artillery-scenario-runs',
    statement:
      "The shipped Artillery scenario runs: its processor chooses every value before it sets and signs a request (Artillery renders templates after `beforeRequest`), a key's retry sends the same body (a replay, not a 422), customers and SKUs come from the lists; run for real against the local runtime with signatures checked",
    enforcedIn: [
      { file: 'packages/tools/src/proof-kit/aws/artillery-processor.js', symbol: 'chooseOrder' },
      { file: 'packages/tools/src/proof-kit/aws/artillery-processor.js', symbol: 'signCreate' },
    ],
    provedBy: [
      {
        file: 'test/unit/aws-load-assets.test.ts',
        name: "a key's retry sends the first request's body, its customer and SKU from the scenario's lists",
      },
      {
        file: 'test/unit/aws-load-assets.test.ts',
        name: 'no request part is a template: Artillery renders {{ }} after beforeRequest, past the signature',
      },
    ],
    doc: { page: 'docs/proof-kit.md', anchor: 'load-test-a-deployed-stack' },
  },
  {
    id: 'capacity-before-load',
    statement:
      "Before a load against a deployed stack, the account's unreserved Lambda concurrency and the stage's (and account's) API throttle are read, and a load they cannot carry is refused before a request is sent, with the numbers and what to change",
    enforcedIn: [{ file: 'packages/tools/src/proof-kit/capacity.ts', symbol: 'capacityProblems' }],
    provedBy: [
      {
        file: 'test/unit/capacity.test.ts',
        name: "a rate above the stage's throttle is refused with the limit and the context options that raise it",
      },
      {
        file: 'test/unit/capacity.test.ts',
        name: "a new account's 10 concurrent executions cannot carry the default load: refused with the numbers",
      },
    ],
    doc: { page: 'docs/proof-kit.md', anchor: 'load-test-a-deployed-stack' },
  },
  {
    id: 'simulation-finds-guards',
    statement:
      "The simulation finds a removed guard (inbox claim, eventId dedupe, version check, retry budget, provider state, caller scope, record deadline, dedupe horizon, provider-call lease, queue sender policy, claim fingerprint, the body fingerprint under a parser change mid-run, ClientRequestToken with the own-holder rule, future stamps, done-mark bound, the DLQs' sender policy against forgeries redriven from a DLQ, the tenant in the provider key when two tenants share eventIds) within a few seeds, and holds every invariant with the guards on, the adversarial faults included; its engine is the mechanism's (a domain plugs in its clients, events and entities), and outage windows fall on every provider a consumer of the list names, a new consumer's too",
    enforcedIn: [
      { file: 'packages/tools/src/simulation/world/options.ts', symbol: 'MechanismGuards' },
      { file: 'packages/tools/src/simulation/world/port.ts', symbol: 'SimulationDomain' },
      { file: 'packages/tools/src/simulation/campaign.ts', symbol: 'runCampaign' },
    ],
    provedBy: [
      {
        file: 'test/simulation/parser-change.test.ts',
        name: 'with the claims fingerprinting the parse, a parser change mid-run turns redelivered events into EventIdReused: found within 3 seeds; with the body fingerprint every invariant holds',
      },
      {
        file: 'test/simulation/consumers.test.ts',
        name: "outage windows fall on every provider a consumer of the list names, a new consumer's too",
      },
      {
        file: 'test/simulation/tenant-collision.test.ts',
        name: 'with the tenant left out of the provider key, two tenants sharing eventIds lose calls to 422: found on seeds 1 and 2; with it every invariant holds',
      },
      {
        file: 'test/simulation/dlq-forgery.test.ts',
        name: 'without the DLQ sender policy, forgeries redriven from the DLQs are found (EventIdReused, an effect nobody produced) on seeds 1 and 2; with it every invariant holds',
      },
      { file: GUARDS, name: 'without the inbox claim, a redelivered event is applied twice: found within 3 seeds' },
      {
        file: GUARDS,
        name: 'with the inbox claim keyed on the SQS messageId, a resent or republished event is taken without a claim under its eventId: found within 5 seeds',
      },
      {
        file: GUARDS,
        name: 'with the old retry budget (5 receives, full jitter from 2 s), a two-minute provider outage dead-letters live messages: found within 2 seeds',
      },
      {
        file: GUARDS,
        name: 'with a duplicate calling the provider whatever happened since, copies of an event call the provider under one key at once: found within 2 seeds',
      },
      {
        file: GUARDS,
        name: 'with keys scoped to the session, a retry from rotated credentials creates a second entity: found within 2 seeds',
      },
      {
        file: GUARDS,
        name: 'without the record deadline, a hung call holds its batch until Lambda stops the consumer, and none of the batch is acked: found within 2 seeds',
      },
      {
        file: GUARDS,
        name: 'without the dedupe horizon, a redrive weeks later, after DynamoDB TTL deleted the inbox claim, takes the event again: found within 2 seeds',
      },
      {
        file: GUARDS,
        name: 'without the provider-call lease, concurrent copies of an event (standard-queue duplicates) call the provider under one key at once: found within 2 seeds',
      },
      {
        file: 'test/simulation/campaign.test.ts',
        name: '20,000 simulated intents over 100 seeded fault schedules keep every invariant',
      },
      {
        file: 'test/simulation/campaign.test.ts',
        name: 'the adversarial mix (forged sends, SDK retries of commits, skewed producer clocks) over 20 schedules keeps every invariant',
      },
    ],
    doc: SIMULATION,
  },
  {
    id: 'simulation-contracts',
    statement:
      "The simulation's DynamoDB and SQS behave as DynamoDB Local and fauxqs wherever the pipeline relies on them: the same contract suites run the real adapters on both, and the in-memory DynamoDB refuses the reserved words DynamoDB Local refuses",
    enforcedIn: [
      { file: PORT_CONTRACTS, symbol: 'describeLedgerContract' },
      { file: PORT_CONTRACTS, symbol: 'describeOutboxContract' },
      { file: QUEUE_CONTRACTS, symbol: 'describeQueueContract' },
      { file: 'packages/tools/src/simulation/memory-dynamodb.ts', symbol: 'MemoryDynamoDb' },
      { file: 'packages/tools/src/simulation/world/sqs.ts', symbol: 'SimQueue' },
      { file: 'packages/tools/src/simulation/reserved-words.ts', symbol: 'isReservedWord' },
    ],
    provedBy: [
      { file: PORT_CONTRACTS, name: 'ledger contract: ', templated: true, runBy: PORT_CONTRACT_RUNNERS },
      { file: PORT_CONTRACTS, name: 'outbox contract: ', templated: true, runBy: PORT_CONTRACT_RUNNERS },
      { file: PORT_CONTRACTS, name: 'try counter contract: ', templated: true, runBy: PORT_CONTRACT_RUNNERS },
      { file: QUEUE_CONTRACTS, name: 'queue contract: ', templated: true, runBy: QUEUE_CONTRACT_RUNNERS },
      {
        file: 'test/integration/reserved-words.test.ts',
        name: 'every word of the list is refused bare by DynamoDB Local and by the in-memory DynamoDB, with a ValidationException',
      },
    ],
    doc: SIMULATION,
  },
  {
    id: 'simulation-runs-deployed-code',
    statement:
      "The simulation runs the deployed relay, sweeper and every consumer of the list (the `makeHandler` factories of the relay, the sweeper and each consumer) with the stack's stream and timeout settings: bisect on a function error, maximum record age, function timeouts",
    enforcedIn: [
      { file: 'packages/runtime/src/wiring/entry-points/relay-handler.ts', symbol: 'makeHandler' },
      { file: 'packages/runtime/src/wiring/entry-points/sweeper-handler.ts', symbol: 'makeHandler' },
      { file: 'packages/tools/src/simulation/world/consumers.ts', symbol: 'handlerFactory' },
      { file: 'packages/tools/src/simulation/world/stream.ts', symbol: 'StreamMapping' },
    ],
    provedBy: [
      {
        file: 'test/simulation/stream.test.ts',
        name: 'a relay that fails as a whole on a poison record: the batch is halved until the record is alone, which alone spends the retries and goes to the on-failure queue',
      },
      {
        file: 'test/simulation/stream.test.ts',
        name: 'records older than the maximum record age when read go to the on-failure queue unprocessed; younger ones are relayed',
      },
      {
        file: TIMEOUTS,
        name: 'a relay stopped by its timeout is a function error: its batch is bisected or retried, and every outbox item is still relayed',
      },
      {
        file: 'test/simulation/stack-settings.test.ts',
        name: "the relay's stream mapping settings are the simulated mapping's",
      },
      {
        file: 'test/simulation/stack-settings.test.ts',
        name: "the relay's, the sweeper's and every consumer's timeouts are the simulated ones",
      },
      {
        file: 'test/simulation/stack-settings.test.ts',
        name: "each consumer's simulated queue, DLQ, pollers and environment are the stack's for that consumer",
      },
    ],
    doc: SIMULATION,
  },
];

export const NON_GUARANTEES: readonly NonGuarantee[] = [
  {
    id: 'keyless-provider-resend',
    statement:
      'A provider that accepts **no idempotency key** (SMTP, SES) may receive a second send when its answer is lost (a timeout after it acted) or the process crashes between the send and its done-mark; an answer that arrives is always recorded (`done-mark-own-bound`), and never two sends at once. The proof kit counts these against a keyless local provider (`LOCAL_PROVIDER_KEYLESS=<provider>`)',
    doc: architecture('one-provider-call-at-a-time-per-event-the-lease'),
    shownBy: [
      {
        file: UNIT_PROVIDER,
        name: 'after a crash between the effect and the provider call: the provider is called once more, then recorded',
      },
    ],
  },
  {
    id: 'forgetful-provider',
    statement:
      'A provider that forgets keys (Stripe: 24 h) is called again only while the call is still owed in the inbox, so a late duplicate after its done-mark never reaches it; a call still owed past the window is not repeated automatically (`provider-key-window`), so its effect may be missing until a person settles it.',
    doc: architecture('external-effects-get-an-idempotency-key-passed-outward'),
    shownBy: [
      {
        file: UNIT_PROVIDER,
        name: 'probe-fifo: a duplicate whose call was never recorded makes it once more, then records it',
      },
      { file: UNIT_PROVIDER, name: 'probe-fifo: the provider call is not repeated once recorded done' },
    ],
  },
  {
    id: 'past-horizon-or-poison-waits',
    statement: 'An event past the dedupe horizon, or poison, is not applied: it waits in a DLQ for a person.',
    doc: { page: 'docs/runbook.md', anchor: 'a-message-past-the-dedupe-horizon-dedupehorizonpassed' },
    shownBy: [
      {
        file: UNIT_CONSUMERS,
        name: '60 days old: DLQ with cause DedupeHorizonPassed, acked; no transaction, no provider call',
      },
      {
        file: INT_PIPELINES,
        name: 'a poison (permanent) message goes to the DLQ at once with its cause, without burning retries',
      },
    ],
  },
  {
    id: 'forged-first',
    statement:
      "A message under a real event's id that reaches a consumer's queue **before** the real event (a forger past the queue policy: one of the sender roles) is applied in its place; the real event is then caught as `EventIdReused` for a person, not swallowed, but its effect is missing until that person acts",
    shownBy: [
      {
        file: PROOF_KIT_ADVERSARIAL_TEST,
        name: 'each copy is dead-lettered as EventIdReused and reported for a person; every effect still equals its intent',
      },
      { file: PROOF_KIT_ADVERSARIAL_TEST, name: 'the fault left its findings for a person, and the run fails' },
    ],
    doc: architecture('event-integrity-one-id-one-event'),
  },
  {
    id: 'writes-around-the-api',
    statement: 'Nothing is guaranteed for writes made around the API or the outbox (a manual table edit).',
    doc: { page: 'docs/runbook.md', anchor: 'malformed-outbox-item' },
  },
  {
    id: 'retention',
    statement:
      "The application's entities, outbox items and provider-log items are kept (no TTL: delete them yourself if you must); idempotency records expire by DynamoDB TTL after their 24 h, inbox claims after 22 days.",
    doc: { page: 'docs/operations.md', anchor: 'data-kept' },
    shownBy: [
      {
        file: 'test/infra/storage.test.ts',
        name: 'expires records through TTL on `expiration`, the attribute Powertools writes its expiry to',
      },
      {
        file: INFRA_PIPELINES,
        name: 'the Effects table, where every consumer claims and applies, expires claims by the attribute the ledgers write',
      },
    ],
  },
];

export const REGISTRY: Registry = { guarantees: GUARANTEES, nonGuarantees: NON_GUARANTEES };
