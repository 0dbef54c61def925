import type { ExampleRegistry } from '../../test/guarantees/registry';

/**
 * The shop's guarantees, beside the shop: the rules of its own domain (orders, cancels, the fulfilment
 * version check, its identifiers), what it does not guarantee, and the proofs its tests add to the
 * mechanism's guarantees (by the mechanism's id, test/guarantees/registry.ts). Loaded by the name in
 * package.json (`exactlyOnce.example`), never imported by the mechanism's registry: a fork with another
 * domain replaces this file, or leaves it out, and edits nothing of the mechanism's.
 * `npx tsx test/guarantees/render.ts` renders this one into docs/guarantees.md (the mechanism's goes to packages/GUARANTEES.md).
 */
export const guarantees: ExampleRegistry = {
  guarantees: [
    {
      id: 'validation-before-idempotency',
      statement: 'Input is validated before the idempotent section, so a rejected request stores nothing',
      enforcedIn: [
        { file: 'lambdas/shop/entry-points/create-order.ts', symbol: 'makeHandler' },
        { file: 'lambdas/shop/domain/order.ts', symbol: 'parsePlaceOrderBody' },
      ],
      provedBy: [
        {
          file: 'test/integration/create-order.test.ts',
          name: 'an invalid body is 400 with field errors, stores nothing, and the corrected request with the same key is 201',
        },
        {
          file: 'test/unit/create-order.test.ts',
          name: 'an invalid body: problem with the field errors, and no DynamoDB call at all',
        },
      ],
      doc: { page: 'docs/http-api.md' },
    },
    {
      id: 'deterministic-order-id',
      statement:
        'Deterministic `orderId` = f(caller, key) plus a conditional write: no second order even if the idempotency record is lost or its lock expires',
      enforcedIn: [
        { file: 'lambdas/shop/domain/order.ts', symbol: 'deriveOrderId' },
        { file: 'lambdas/shop/use-cases/place-order.ts', symbol: 'placeOrder' },
        { file: 'lambdas/shop/aws/dynamodb-order-repository.ts', symbol: 'place' },
      ],
      provedBy: [
        {
          file: 'test/integration/create-order.test.ts',
          name: 'a crash after the order transaction leaves a lock; once it expires the retry returns the same order, still one order',
        },
        {
          file: 'test/unit/order.test.ts',
          name: 'is scoped to the caller: the same key from two callers is two orders',
        },
        {
          file: 'test/unit/create-order.test.ts',
          name: 'a retry after a crash finds its own order already written and answers with it',
        },
        {
          file: 'test/unit/create-order.test.ts',
          name: 'the idempotency record is gone but the order the key made has another fingerprint',
        },
      ],
      doc: { page: 'docs/http-api.md' },
    },
    {
      id: 'cancel-idempotent',
      statement: 'Cancel is idempotent by nature (conditional on PLACED)',
      enforcedIn: [{ file: 'lambdas/shop/use-cases/cancel-order.ts', symbol: 'cancelOrder' }],
      provedBy: [
        {
          file: 'test/unit/cancel-order.test.ts',
          name: 'cancelling an already cancelled order returns it as it is and writes nothing',
        },
        {
          file: 'test/unit/cancel-order.test.ts',
          name: 'losing a race with a concurrent cancel still answers with the cancelled order',
        },
        {
          file: 'test/integration/cancel-get-order.test.ts',
          name: 'twice returns the cancelled order both times and writes exactly one OrderCancelled outbox item',
        },
        {
          file: 'test/integration/cancel-get-order.test.ts',
          name: 'concurrently: no 4xx/5xx other than 503, one cancellation time, one OrderCancelled item',
        },
      ],
      doc: { page: 'docs/http-api.md' },
    },
    {
      id: 'version-check',
      statement:
        'Per-order version check: a stale or out-of-order event is an acked no-op (`StaleEventIgnored`); a cancel that arrives before its place leaves nothing reserved',
      enforcedIn: [{ file: 'lambdas/shop/aws/ledgers.ts', symbol: 'DynamoDbFulfilmentLedger' }],
      provedBy: [
        {
          file: 'test/unit/shop-consumers.test.ts',
          name: 'a stale OrderPlaced (the order already has a state) is acked as a no-op: no stock, no warehouse call',
        },
        {
          file: 'test/unit/shop-consumers.test.ts',
          name: 'an OrderCancelled delivered again once its order is at version 2 is acked as a duplicate: nothing changes, no second CANCEL_PICK',
        },
        {
          file: 'test/unit/shop-consumers.test.ts',
          name: 'cancel before place, then the late place: nothing stays reserved, and a redelivered cancel changes nothing',
        },
        {
          file: 'test/integration/shop-pipelines.test.ts',
          name: 'a cancel delivered before its place: nothing reserved at the end, the late place is ignored as stale',
        },
        {
          file: 'test/simulation/shop-guards.test.ts',
          name: 'without the fulfilment version check, a cancel that overtakes its place releases stock never reserved: found within 3 seeds',
        },
      ],
      doc: { page: 'docs/architecture.md', anchor: 'fifo-per-order-with-a-version-check' },
    },
    {
      id: 'order-identifiers',
      statement:
        "The order's identifiers are deliverable to SQS and usable in keys and paths: `customerId` and `sku` are 1–64 of `[A-Za-z0-9._:-]`, in the zod schema and in the gateway model generated from it, so a request the mechanism's relay would have to set aside (`sqs-safe-identifiers`) is a 400 at the API instead",
      enforcedIn: [
        { file: 'lambdas/shop/domain/order.ts', symbol: 'IDENTIFIER_PATTERN' },
        { file: 'lambdas/shop/domain/order.ts', symbol: 'identifierSchema' },
        { file: 'lib/shop/orders-api.ts', symbol: 'OrdersApi' },
      ],
      provedBy: [
        {
          file: 'test/unit/create-order.test.ts',
          name: 'identifiers are limited to what every queue, key and path can carry',
        },
        { file: 'test/unit/create-order.test.ts', name: 'the edge characters and 64 characters are accepted' },
        { file: 'test/unit/order.test.ts', name: 'customerId and sku: 1-64 ASCII letters, digits and . _ : -' },
        {
          file: 'test/integration/create-order.test.ts',
          name: 'ids SQS could not carry (U+FFFE in customerId, U+FFFF in a sku) are 400, store nothing, and the corrected request is 201',
        },
        {
          file: 'test/infra/api.test.ts',
          name: 'POST /orders requires the Idempotency-Key header and a JSON body matching the order model',
        },
      ],
      doc: { page: 'docs/http-api.md' },
    },
    {
      id: 'customer-points-per-caller',
      statement:
        "A customer's points are the caller's own: keyed by the tenant its orders' events carry, readable and credited only through that caller's orders",
      enforcedIn: [
        { file: 'lambdas/shop/aws/effects-table.ts', symbol: 'customerKey' },
        { file: 'lambdas/shop/aws/order-table.ts', symbol: 'customerAccessPk' },
      ],
      provedBy: [
        {
          file: 'test/integration/customer-scope.test.ts',
          name: 'caller A places an order for c1: A reads c1 (200); B gets 404 problem+json, like an unknown customer; the reads write nothing',
        },
        {
          file: 'test/integration/customer-scope.test.ts',
          name: 'a customer id ordered for by two callers is two customers: each reads only the points its own orders earned',
        },
      ],
      doc: { page: 'docs/architecture.md', anchor: 'who-a-caller-is-and-what-a-caller-may-read' },
    },
    {
      id: 'fulfilment-upgrade-from-the-inbox-ledger',
      statement:
        "Fulfilment keeps its guarantees across the deploy that moves it from the transactional inbox to the sequenced ledger: an order with an inbox-ledger item (`FULFILMENT#<orderId>`) finishes on the inbox ledger (one consistent read of that key per event, `FULFILMENT_LEGACY_LEDGER=read`, the default), so its OrderPlaced delivered again reserves nothing more, its cancel releases the stock once with no PICK after the CANCEL_PICK, and a late OrderPlaced of an order cancelled before its reservation stays stale; a new order never touches the inbox ledger; the owed call's lease and done-mark go to the ledger of its claim; and `write`, the rollback-safe first step, starts new orders on the inbox ledger and finishes on the sequenced one an order begun there",
      enforcedIn: [
        { file: 'lambdas/shop/aws/ledgers.ts', symbol: 'DynamoDbFulfilmentLedger' },
        { file: 'lambdas/shop/aws/ledgers.ts', symbol: 'InboxFulfilmentLedger' },
        { file: 'lambdas/shop/entry-points/fulfilment-consumer.ts', symbol: 'legacyFulfilmentFromEnv' },
        { file: 'lib/shop/shop-stack.ts', symbol: 'LEGACY_FULFILMENT_CONTEXT' },
      ],
      provedBy: [
        {
          file: 'test/unit/shop-fulfilment-transition.test.ts',
          name: 'a reserved order whose OrderPlaced is delivered again, twice, after the switch reserves nothing more and picks once',
        },
        {
          file: 'test/unit/shop-fulfilment-transition.test.ts',
          name: 'a reserved order whose PICK was owed at the deploy: its OrderPlaced, delivered twice after the switch, sends the PICK once, leased and marked done on its inbox entry',
        },
        {
          file: 'test/unit/shop-fulfilment-transition.test.ts',
          name: 'a reserved order cancelled after the switch, the cancel delivered twice, releases its stock once; its OrderPlaced redriven later sends no PICK after the CANCEL_PICK',
        },
        {
          file: 'test/unit/shop-fulfilment-transition.test.ts',
          name: 'an order cancelled before its place under the inbox ledger stays stale for a late OrderPlaced, delivered twice after the switch: nothing reserved, no PICK',
        },
        {
          file: 'test/unit/shop-fulfilment-transition.test.ts',
          name: 'a new order, each event delivered twice, never touches the inbox ledger: no FULFILMENT# item, no inbox entry',
        },
        {
          file: 'test/unit/shop-fulfilment-transition.test.ts',
          name: 'an order the sequenced ledger began finishes on it: its cancel, delivered twice, releases once and its place stays applied once',
        },
        {
          file: 'test/integration/shop-fulfilment-ledger.test.ts',
          name: 'its PICK owed at the deploy, cancelled after it (the cancel delivered twice), then its OrderPlaced redriven: stock released once, CANCEL_PICK and never a PICK after it, nothing on the sequenced item',
        },
        {
          file: 'test/simulation/deploy-window.test.ts',
          name: "without fulfilment's legacy read, a deploy mid-run reserves again the stock of orders the previous release's inbox ledger began: found within 3 seeds; with it every invariant holds",
        },
        {
          file: 'test/simulation/rollback.test.ts',
          name: "a rollback straight from fulfilment's sequenced ledger to the inbox ledger gets the stock of orders begun on it wrong: found within 3 seeds; after the two-step upgrade every invariant holds",
        },
        {
          file: 'test/infra/shop-stack.test.ts',
          name: 'any other value fails the synth, naming the context key',
        },
      ],
      doc: { page: 'docs/architecture.md', anchor: 'fulfilment-across-the-upgrade-from-the-inbox-ledger' },
    },
  ],
  nonGuarantees: [
    {
      id: 'points-kept-on-cancel',
      statement: 'Points are not taken back when an order is cancelled (the example keeps it simple).',
      doc: { page: 'docs/architecture.md', anchor: 'fifo-per-order-with-a-version-check' },
      shownBy: [
        {
          file: 'test/integration/shop-pipelines.test.ts',
          name: 'place then cancel through the API: reserved goes up then back to zero, points stay',
        },
      ],
    },
  ],
  alsoEnforcedIn: {
    'idempotency-key-contract': [{ file: 'lambdas/shop/entry-points/create-order.ts', symbol: 'makeHandler' }],
    'provider-key': [{ file: 'lambdas/shop/use-cases/apply-order-events.ts', symbol: 'fulfilOrderEvent' }],
    'provider-state': [{ file: 'lambdas/shop/use-cases/apply-order-events.ts', symbol: 'fulfilOrderEvent' }],
    'effects-counted-at-the-provider': [{ file: 'tooling/shop/proof.ts', symbol: 'picksAfterCancel' }],
    'proof-kit-provider-calls': [{ file: 'tooling/shop/proof.ts', symbol: 'fulfilmentProviderRules' }],
    'least-privilege': [{ file: 'lib/shop/shop-stack.ts', symbol: 'ExactlyOnceStack' }],
    'stages-side-by-side': [{ file: 'lib/shop/shop-stack.ts', symbol: 'ExactlyOnceStack' }],
    'consumers-are-data': [{ file: 'lambdas/shop/consumers.ts', symbol: 'CONSUMERS' }],
    'simulation-finds-guards': [{ file: 'tooling/shop/simulation/world.ts', symbol: 'Guards' }],
    'simulation-contracts': [
      { file: 'test/simulation/contracts/order-repository-contracts.ts', symbol: 'describeOrderRepositoryContract' },
    ],
    'simulation-runs-deployed-code': [
      { file: 'lambdas/shop/entry-points/loyalty-consumer.ts', symbol: 'makeHandler' },
      { file: 'lambdas/shop/entry-points/fulfilment-consumer.ts', symbol: 'makeHandler' },
    ],
    'transactional-outbox': [
      { file: 'lambdas/shop/aws/dynamodb-order-repository.ts', symbol: 'DynamoDbOrderRepository' },
      { file: 'lambdas/shop/domain/order.ts', symbol: 'orderPlacedEventId' },
    ],
  },
  alsoProvedBy: {
    'provider-key-window': [
      {
        file: 'test/integration/shop-fulfilment-ledger.test.ts',
        name: 'found performed: the redriven OrderPlaced sends no PICK',
      },
      {
        file: 'test/integration/shop-fulfilment-ledger.test.ts',
        name: 'found NOT performed: the redriven OrderPlaced sends its PICK once',
      },
    ],
    'effects-counted-at-the-provider': [
      {
        file: 'test/runtime/proof-kit-all-faults.test.ts',
        name: 'all faults together: effects equal intents, calls per order measured, report renders',
      },
      {
        file: 'test/unit/shop-proof.test.ts',
        name: 'a PICK performed after its order’s CANCEL_PICK is a provider-order violation',
      },
    ],
    'caller-scope': [
      {
        file: 'test/runtime/orders-over-http.test.ts',
        name: 'an order placed by one session is readable and cancellable from another session of the role',
      },
      { file: 'test/runtime/orders-over-http.test.ts', name: "another role's order is 404 to it" },
      {
        file: 'test/integration/cancel-get-order.test.ts',
        name: "another caller's order is 404, exactly like an unknown one",
      },
    ],
    'effects-equal-intents': [
      {
        file: 'test/runtime/proof-kit-all-faults.test.ts',
        name: 'all faults together: effects equal intents, calls per order measured, report renders',
      },
    ],
    'trace-context': [
      {
        file: 'test/unit/create-order.test.ts',
        name: "the outbox event carries the order's trace: the outbox-write span, under the api span, under the caller's traceparent",
      },
    ],
    'load-signing-holds': [
      {
        file: 'test/runtime/artillery.test.ts',
        name: "the kit's own driver, signing each request as it sends it, is accepted by the checking API, and its ledger verifies",
      },
    ],
    'intents-from-ledgers': [
      {
        file: 'test/runtime/artillery.test.ts',
        name: 'the shipped Artillery scenario runs against the local runtime, every request signed, and the verdict from its ledger passes',
      },
    ],
    'artillery-scenario-runs': [
      {
        file: 'test/runtime/artillery.test.ts',
        name: 'the shipped Artillery scenario runs against the local runtime, every request signed, and the verdict from its ledger passes',
      },
    ],
    'keys-are-a-migration': [
      {
        file: 'test/simulation/deploy-window.test.ts',
        name: 'without the legacy key lookup, a deploy mid-run applies events the previous release claimed again: found within 3 seeds; with it every invariant holds',
      },
      {
        file: 'test/simulation/rollback.test.ts',
        name: 'a rollback straight from this release sends owed calls under another key than their claims recorded: found within 3 seeds; after the two-step upgrade every invariant holds',
      },
    ],
    'idempotency-key-contract': [
      {
        file: 'test/unit/create-order.test.ts',
        name: 'the idempotency record is keyed on (caller, unquoted key) and fingerprinted on the canonical body',
      },
      {
        file: 'test/unit/create-order.test.ts',
        name: 'the key expires after 24 h, and the in-progress lock with the Lambda deadline',
      },
      {
        file: 'test/integration/create-order.test.ts',
        name: 'the same key twice makes one order and replays the identical response with the replay header',
      },
      {
        file: 'test/integration/create-order.test.ts',
        name: 'the same key with a different body is 422 and still one order',
      },
      {
        file: 'test/integration/create-order.test.ts',
        name: '20 concurrent requests with one key: one 201, the rest 409 or replay, no 5xx, one order',
      },
    ],
    'provider-state': [
      {
        file: 'test/unit/shop-consumers.test.ts',
        name: "a cancel applied from RESERVED takes the owed-call slot of its OrderPlaced, in the claim's own transaction",
      },
      {
        file: 'test/integration/shop-fulfilment-ledger.test.ts',
        name: 'an OrderPlaced with its PICK owed, cancelled, then redriven: CANCEL_PICK and never a PICK after it',
      },
      {
        file: 'test/unit/shop-consumers.test.ts',
        name: 'a redriven OrderPlaced whose cancel was applied meanwhile: no PICK, though its call never completed',
      },
      {
        file: 'test/simulation/shop-guards.test.ts',
        name: "without the sequence condition on fulfilment's order item, a redrive after a cancel sends PICK after CANCEL_PICK: found within 3 seeds",
      },
    ],
    'providers-per-stage': [
      {
        file: 'test/infra/providers.test.ts',
        name: 'each consumer gets its own provider: endpoint and API-key parameter name, nothing of the other',
      },
    ],
    'proof-kit-provider-calls': [
      {
        file: 'test/unit/shop-proof.test.ts',
        name: 'a PICK made after the CANCEL_PICK reached the warehouse is a provider-order violation',
      },
    ],
    'synth-time-invariants': [
      {
        file: 'test/infra/shop-stack.test.ts',
        name: 'Idempotency-Keys expire after 24 h (create-order is configured with 86,400 s)',
      },
    ],
    'least-privilege': [
      {
        file: 'test/infra/api.test.ts',
        name: 'least privilege: each API function may touch only its own tables, with only its actions',
      },
      { file: 'test/infra/shop-stack.test.ts', name: 'cdk-nag on the shop stack' },
    ],
    'problem-json': [
      {
        file: 'test/unit/create-order.test.ts',
        name: 'an unexpected bug: a generic problem, no stack trace or error text',
      },
      {
        file: 'test/unit/cancel-order.test.ts',
        name: 'an unexpected bug is a generic 500 without stack trace or error text',
      },
    ],
    'proof-can-fail': [
      {
        file: 'test/unit/shop-proof.test.ts',
        name: 'double loyalty points are reported as "more than expected", lost ones as "less than expected"',
      },
    ],
    'entry-point-list': [
      {
        file: 'test/infra/shop-stack.test.ts',
        name: 'every module of the entry folders is the code of a function of the ',
        templated: true,
      },
    ],
    'each-event-once-per-consumer': [
      {
        file: 'test/unit/shop-proof.test.ts',
        name: 'the produced events: OrderPlaced for every order, OrderCancelled for a cancelled one, keyed by the order',
      },
    ],
    'simulation-finds-guards': [
      {
        file: 'test/simulation/shop-guards.test.ts',
        name: 'without the fulfilment version check, a cancel that overtakes its place releases stock never reserved: found within 3 seeds',
      },
      {
        file: 'test/simulation/shop-guards.test.ts',
        name: "without the sequence condition on fulfilment's order item, a redrive after a cancel sends PICK after CANCEL_PICK: found within 3 seeds",
      },
      {
        file: 'test/simulation/deploy-window.test.ts',
        name: 'without the legacy key lookup, a deploy mid-run applies events the previous release claimed again: found within 3 seeds; with it every invariant holds',
      },
      {
        file: 'test/simulation/rollback.test.ts',
        name: 'a rollback straight from this release sends owed calls under another key than their claims recorded: found within 3 seeds; after the two-step upgrade every invariant holds',
      },
    ],
    'simulation-contracts': [
      {
        file: 'test/simulation/contracts/order-repository-contracts.ts',
        name: 'order repository contract: ',
        templated: true,
        runBy: [
          'test/simulation/memory-order-contracts.test.ts',
          'test/integration/order-repository-contracts.test.ts',
        ],
      },
    ],
    'transactional-outbox': [
      {
        file: 'test/integration/cancel-get-order.test.ts',
        name: "writes exactly one order, one OrderPlaced outbox item and the caller's customer access, in one transaction",
      },
      {
        file: 'test/integration/cancel-get-order.test.ts',
        name: 'if the outbox item cannot be written, neither is the order (one transaction)',
      },
      { file: 'test/unit/order.test.ts', name: 'event ids are deterministic and distinct per event type' },
    ],
    'dependency-failure-503': [
      { file: 'test/unit/create-order.test.ts', name: 'error classes of the order transaction' },
      {
        file: 'test/unit/create-order.test.ts',
        name: ': 503 with Retry-After, and the lock is released for the retry',
        templated: true,
      },
      {
        file: 'test/unit/create-order.test.ts',
        name: ': 500 (a bug; retrying cannot help), no Retry-After',
        templated: true,
      },
      { file: 'test/unit/cancel-order.test.ts', name: 'error classes of the cancel transaction' },
      {
        file: 'test/unit/cancel-order.test.ts',
        name: 'the transaction is cancelled by a conflict, not by our condition',
      },
    ],
  },
};
