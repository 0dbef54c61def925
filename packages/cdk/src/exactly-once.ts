import {
  Annotations,
  AspectPriority,
  Aspects,
  CfnOutput,
  CfnRule,
  Fn,
  RemovalPolicy,
  Stack,
  type Duration,
  type IAspect,
} from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import { CfnFunction } from 'aws-cdk-lib/aws-lambda';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct, type IConstruct } from 'constructs';
import { DEFAULT_HUMAN_ROLE_PATTERNS } from '@exactly-once/runtime/api/caller';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import type { RetryBudget } from '@exactly-once/runtime/consumer/retry-budget';
import { applyCorrectnessAspects, LogRetentionAspect } from './aspects';
import { ConsumerPipelines, REDRIVE_ALLOWANCE, type ConsumerPipeline } from './consumer-pipelines';
import { FaultInjectionSwitch } from './fault-injection';
import { FunctionWithDefaults, setFunctionBuild } from './function-defaults';
import { Monitoring } from './monitoring';
import { OutboxRelay } from './outbox-relay';
import { grantOutboxPublishing, outboxRoutes } from './outbox-wiring';
import type { ProviderEndpoints } from './provider-endpoints';
import { refuseExistingWithProps, REQUIRED_TABLE_SETTINGS, tableDefaults } from './table-defaults';
import { addToolOutputs } from './tool-outputs';
import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';
import { DEFAULT_SPAN_SAMPLING, type SpanSampling } from '@exactly-once/runtime/trace/span-sampling';

export { IDEMPOTENCY_EXPIRY_ATTRIBUTE } from './table-defaults';

/**
 * What an ExactlyOnce builds its parts from. Every table it would make can be replaced by one the
 * application already has (`existingXTable`; giving `xTableProps` too is refused at construction); the outbox table is
 * always the application's, since its outbox items are written in the same transaction as its entities.
 *
 * The stage settings of an application's configuration (lib/config.ts) carry the same names, so
 * a stack may spread them in.
 *
 * @example
 * ```ts
 * const props: ExactlyOnceProps = {
 *   stage: 'dev',
 *   consumers: CONSUMERS,
 *   producedTypes: BOOKING_EVENT_TYPES,
 *   outboxTable: bookingsTable,
 *   entityPartitionPrefix: 'BOOKING#',
 * };
 * ```
 */
export interface ExactlyOnceProps {
  /** The stage (`dev`, `prod`): the tools say which stack they talk to; prod warns of what it lacks. */
  readonly stage: string;
  /** Who consumes what: one pipeline (queue, DLQ, consumer function, alarms) per spec, in this order. */
  readonly consumers: readonly ConsumerSpec[];
  /** The event types the producers write; a consumer taking any other is refused at synth. */
  readonly producedTypes: readonly string[];
  /**
   * The application's entity table that holds the outbox items: its stream must carry new images, it
   * must have the PENDING_OUTBOX_INDEX index and the OUTBOX_TTL_ATTRIBUTE TTL (the correctness rules
   * check both). An OutboxTable has all three. An imported table needs its `tableStreamArn`.
   */
  readonly outboxTable: dynamodb.ITable;
  /** The partition-key prefix of the entities whose partitions hold their outbox items (`<prefix><entityId>`). */
  readonly entityPartitionPrefix: string;
  /**
   * An idempotency table the application already has (partition key `id`, TTL IDEMPOTENCY_EXPIRY_ATTRIBUTE).
   *
   * @default - one is made, from `idempotencyTableProps` (giving both is refused)
   */
  readonly existingIdempotencyTable?: dynamodb.ITable;
  /**
   * Settings for the idempotency table made here, over the defaults (on demand, AWS-managed
   * encryption, point-in-time recovery). The keys and TTL the runtime reads (partition key `id`, no
   * sort key, TTL IDEMPOTENCY_EXPIRY_ATTRIBUTE) are applied after these: a prop that sets them is
   * overridden, never used.
   *
   * @default - the defaults alone
   */
  readonly idempotencyTableProps?: Partial<dynamodb.TableProps>;
  /**
   * An effects table the application already has (partition key `pk`, sort key `sk`, TTL INBOX_TTL_ATTRIBUTE).
   *
   * @default - one is made, from `effectsTableProps` (giving both is refused)
   */
  readonly existingEffectsTable?: dynamodb.ITable;
  /**
   * Settings for the effects table made here (the inbox claims and the effects they guard), over the
   * defaults (as the idempotency table's). The keys `pk`/`sk` and the TTL INBOX_TTL_ATTRIBUTE the
   * consumers rely on are applied after these: a prop that sets them is overridden, never used.
   *
   * @default - the defaults alone
   */
  readonly effectsTableProps?: Partial<dynamodb.TableProps>;
  /**
   * A provider log table the application already has (partition key `idempotencyKey`).
   *
   * @default - one is made, from `providerLogTableProps` (giving both is refused)
   */
  readonly existingProviderLogTable?: dynamodb.ITable;
  /**
   * Settings for the provider log made here (the recording provider double's calls), over the
   * defaults (as the idempotency table's). The partition key `idempotencyKey` (no sort key) the double
   * writes by is applied after these: a prop that sets a key is overridden, never used.
   *
   * @default - the defaults alone
   */
  readonly providerLogTableProps?: Partial<dynamodb.TableProps>;
  /**
   * What happens to the tables and the dead-letter queues made here (each consumer's DLQ, the relay's
   * on-failure queue, the sweeper's DLQ) when the stack deletes them.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * The tables made here refuse DeleteTable until it is switched off.
   *
   * @default false
   */
  readonly deletionProtection?: boolean;
  /**
   * The on-demand ceiling of each table made here, in read and in write request units per second:
   * throttled above it rather than billed.
   *
   * @default - none
   */
  readonly tableThroughputCeiling?: number;
  /**
   * Where the consumers' external providers are, by the names the specs list (see PipelinesProps.providers).
   *
   * @default {} (every provider is the recording double, the provider log table)
   */
  readonly providers?: ProviderEndpoints;
  /**
   * The consumers' retry budget.
   *
   * @default RETRY_BUDGET (15 minutes of guaranteed backoff)
   */
  readonly retryBudget?: RetryBudget;
  /**
   * Roles a person assumes to redrive dead-lettered messages: the only principals besides the relay
   * and the sweeper that may send to a consumer's queue.
   *
   * @default - none
   */
  readonly operatorRoleArns?: readonly string[];
  /**
   * Subscribed to the alarm topic by e-mail.
   *
   * @default - no subscription (a warning at stage prod)
   */
  readonly alarmEmail?: string;
  /**
   * The caller rule's human-role patterns, for the tools (the proof kit derives its own caller by them).
   *
   * @default DEFAULT_HUMAN_ROLE_PATTERNS
   */
  readonly humanRolePatterns?: readonly string[];
  /**
   * The proof kit's fault switch (an SSM parameter the relay and consumers read) and its alarm; the
   * functions made here carry the fault code. The build of the functions made here comes from these
   * props alone: `setFunctionBuild` on the stack builds the application's own functions only.
   *
   * @default false (no fault code in the bundles, no switch)
   */
  readonly faultInjection?: boolean;
  /**
   * The local runtime's build: the consumers carry the inbox bypass, and a template rule refuses to deploy it.
   *
   * @default false (the deployable build)
   */
  readonly localRuntime?: boolean;
  /**
   * OpenTelemetry on the functions made here, through the ADOT Lambda layer (see FunctionBuild.openTelemetry).
   *
   * @default false (no layer, no wrapper)
   */
  readonly openTelemetry?: boolean;
  /**
   * Which `Span` log lines the functions made here write (`SPAN_SAMPLE_RATE`, `SLOW_SPAN_MS`).
   *
   * @default DEFAULT_SPAN_SAMPLING (every trace's; no variable is set)
   */
  readonly spanSampling?: SpanSampling;
  /**
   * How long the log groups this construct makes keep their logs; `retainLogsOf(scope)` applies it to
   * the application's log groups as well.
   *
   * @default - each log group keeps what its construct set (one month for the functions)
   */
  readonly logRetention?: RetentionDays;
  /**
   * The sweeper republishes outbox items older than this.
   *
   * @default Duration.minutes(5)
   */
  readonly sweepAge?: Duration;
  /**
   * How long an outbox item is kept once dispatched (at least the stream's 24 h).
   *
   * @default Duration.days(7)
   */
  readonly dispatchedRetention?: Duration;
}

/**
 * What `ExactlyOnce.addApi` adds beside the API's 5xx alarm.
 *
 * @example
 * ```ts
 * const options: ApiMonitoringOptions = { metrics: { title: 'Bookings placed', metricNames: ['BookingPlaced'] } };
 * ```
 */
export interface ApiMonitoringOptions {
  /**
   * The API's own metrics (the functions' EMF metrics, summed) graphed on the dashboard.
   *
   * @default - no such widget
   */
  readonly metrics?: { readonly title: string; readonly metricNames: readonly string[] };
}

/**
 * Exactly-once effects over at-least-once delivery, for one application: the idempotency, effects
 * and provider-log tables (each replaceable by an existing one), the outbox relay and sweeper on the
 * application's outbox table, one consumer pipeline per spec with its grants, the alarm topic, alarms
 * and dashboard, the outputs the tools read, and the synth-time correctness rules on its parts
 * (`checkAlso` extends them to the application's resources).
 *
 * It is complete once constructed: its parts are monitored and the tools' outputs are there. The
 * application adds its entity table (an OutboxTable), its API on `idempotencyTable` and
 * `effectsTable`, and may hand the API to `addApi` (the API's alarm and URL output, and alarms for its
 * functions); without it, synth notes that the stack has no API for the tools to call.
 *
 * Its children's ids are the ones a stack built them with before this construct existed; made with
 * the id `Default`, which CDK leaves out of logical ids, its tables and queues keep theirs.
 *
 * @example A stack: the entity table, one ExactlyOnce, the API (test/exactly-once/fixtures/probe-stack.ts builds one)
 * ```ts
 * const bookingsTable = new OutboxTable(this, 'Bookings');
 * const exactlyOnce = new ExactlyOnce(this, 'ExactlyOnce', {
 *   stage: 'dev',
 *   consumers: CONSUMERS,
 *   producedTypes: BOOKING_EVENT_TYPES,
 *   outboxTable: bookingsTable,
 *   entityPartitionPrefix: BOOKING_PK_PREFIX,
 * });
 * const api = new BookingsApi(this, 'BookingsApi', { bookingsTable, idempotencyTable: exactlyOnce.idempotencyTable });
 * exactlyOnce.addApi(api.api);
 * ```
 */
export class ExactlyOnce extends Construct {
  /** Powertools' idempotency records of the API's commands. */
  readonly idempotencyTable: dynamodb.ITable;
  /** The consumers' inbox claims and the effects they guard. */
  readonly effectsTable: dynamodb.ITable;
  /** The recording provider double's calls. */
  readonly providerLogTable: dynamodb.ITable;
  /** One pipeline per consumer spec, in the order of the list. */
  readonly pipelines: readonly ConsumerPipeline[];
  /** The stream relay and the sweeper. */
  readonly outbox: OutboxRelay;
  /** The proof kit's fault switch, when `faultInjection` is on. */
  readonly faultSwitch?: FaultInjectionSwitch;
  /** The alarm topic and dashboard: the mechanism's parts from the start, the API's once `addApi` adds it. */
  readonly monitoring: Monitoring;
  private readonly props: ExactlyOnceProps;
  private readonly checks: readonly IAspect[];
  /** The scopes checkAlso and retainLogsOf were given: the application's parts they reach. */
  private readonly extendedTo: IConstruct[] = [];
  private hasApi = false;

  constructor(scope: Construct, id: string, props: ExactlyOnceProps) {
    super(scope, id);
    refuseExistingWithProps(
      'existingIdempotencyTable',
      props.existingIdempotencyTable,
      'idempotencyTableProps',
      props.idempotencyTableProps,
    );
    refuseExistingWithProps(
      'existingEffectsTable',
      props.existingEffectsTable,
      'effectsTableProps',
      props.effectsTableProps,
    );
    refuseExistingWithProps(
      'existingProviderLogTable',
      props.existingProviderLogTable,
      'providerLogTableProps',
      props.providerLogTableProps,
    );
    this.props = props;
    const faultInjection = props.faultInjection ?? false;
    const localRuntime = props.localRuntime ?? false;
    const sampling = props.spanSampling;
    // The default is what a function does with no variable: set them only for another sampling.
    const sampled =
      sampling !== undefined &&
      (sampling.rate !== DEFAULT_SPAN_SAMPLING.rate || sampling.slowMs !== DEFAULT_SPAN_SAMPLING.slowMs);
    // From the props alone, whatever the stack's build (the application's functions) says.
    setFunctionBuild(this, {
      faultInjection,
      inboxBypass: localRuntime,
      openTelemetry: props.openTelemetry ?? false,
      ...(sampled ? { spanSampling: sampling } : {}),
    });

    const storage = new Construct(this, 'Storage');
    // The user's settings go over the defaults, and the keys and TTL the runtime reads go over both.
    const table = (
      name: string,
      existing: dynamodb.ITable | undefined,
      given: Partial<dynamodb.TableProps> | undefined,
      required: Partial<dynamodb.TableProps>,
    ) =>
      existing ??
      new dynamodb.Table(storage, name, { ...tableDefaults(props), ...given, ...required } as dynamodb.TableProps);
    this.idempotencyTable = table(
      'Idempotency',
      props.existingIdempotencyTable,
      props.idempotencyTableProps,
      REQUIRED_TABLE_SETTINGS.idempotency,
    );
    this.effectsTable = table(
      'Effects',
      props.existingEffectsTable,
      props.effectsTableProps,
      REQUIRED_TABLE_SETTINGS.effects,
    );
    this.providerLogTable = table(
      'ProviderLog',
      props.existingProviderLogTable,
      props.providerLogTableProps,
      REQUIRED_TABLE_SETTINGS.providerLog,
    );

    const pipelines = new ConsumerPipelines(this, 'Pipelines', {
      consumers: props.consumers,
      producedTypes: props.producedTypes,
      effectsTable: this.effectsTable,
      providerLogTable: this.providerLogTable,
      providers: props.providers ?? {},
      retryBudget: props.retryBudget,
    });
    this.pipelines = pipelines.all;
    if (props.stage === 'prod') this.warnOfRecordingProviders();

    this.outbox = new OutboxRelay(this, 'OutboxRelay', {
      outboxTable: props.outboxTable,
      entityPartitionPrefix: props.entityPartitionPrefix,
      routes: outboxRoutes(this.pipelines),
      sweepAge: props.sweepAge,
      dispatchedRetention: props.dispatchedRetention,
    });
    grantOutboxPublishing(this.outbox, this.pipelines, props.outboxTable, {
      operatorRoleArns: props.operatorRoleArns,
    });
    // A dead-lettered event waits there for a person: the DLQs go with the stack only where the tables do
    // (a dev stage's `cdk destroy`), never where they are retained (prod), or the events go with them.
    const deadLetterRemoval = props.removalPolicy ?? RemovalPolicy.RETAIN;
    for (const dlq of [
      ...this.pipelines.map((p) => p.queues.deadLetterQueue),
      this.outbox.failureQueue,
      this.outbox.sweeper.asyncDeadLetterQueue,
    ])
      dlq?.applyRemovalPolicy(deadLetterRemoval);

    // Only when asked for; an application's configuration refuses it in prod.
    if (faultInjection) {
      this.faultSwitch = new FaultInjectionSwitch(this, 'FaultInjection');
      for (const f of [this.outbox.streamRelay, ...this.pipelines.map((p) => p.consumer)])
        this.faultSwitch.attach(f.fn);
    }
    if (localRuntime)
      // The local runtime's build carries a switch that disables deduplication: CloudFormation refuses it.
      new CfnRule(this, 'LocalRuntimeOnly', {
        assertions: [
          {
            assert: Fn.conditionEquals('local-runtime-build', 'deployable'),
            assertDescription:
              'Synthesized with -c localRuntime=true (npm start): a test build that must not be deployed. Synthesize without it.',
          },
        ],
      });
    if (props.stage === 'prod' && props.alarmEmail === undefined)
      Annotations.of(Stack.of(this)).addWarningV2(
        'ExactlyOnce:NoAlarmEmail',
        'stage=prod without -c alarmEmail=...: alarms reach an SNS topic nobody is subscribed to.',
      );

    // Both on this construct's scope only: what the application builds beside it is its own to set,
    // unless it asks for them there too (retainLogsOf, checkAlso).
    if (props.logRetention !== undefined) this.retainLogsOf(this);
    // Synth refuses settings of the mechanism's parts that would break exactly-once (docs/architecture.md).
    // The rules read the tables the parts use (the outbox table, an existing table) from the whole
    // stack's template, so checking the parts here still checks the outbox table's stream and TTL.
    this.checks = applyCorrectnessAspects(this, { redriveAllowanceSeconds: REDRIVE_ALLOWANCE.toSeconds() });
    this.warnOfFunctionsLeftOut();

    // The alarm topic and dashboard of the mechanism's parts, complete without an API; addApi adds the
    // API's alarm and the application's functions.
    this.monitoring = new Monitoring(this, 'Monitoring', {
      alarmEmail: props.alarmEmail,
      pipelines: [...this.pipelines],
      relay: this.outbox.streamRelay.fn,
      relayMappingId: this.outbox.streamMappingId,
      relayFailureQueue: this.outbox.failureQueue,
      sweepAge: this.outbox.sweepAge,
      functions: this.node.findAll().filter((c): c is FunctionWithDefaults => c instanceof FunctionWithDefaults),
    });
    if (this.faultSwitch !== undefined)
      // Faults are being injected: by the proof kit, or by whoever changed the parameter. The functions emit the
      // metric on each invocation under a non-empty, unexpired plan, so the alarm clears when the plan is gone.
      this.monitoring.addAlarm(
        'fault-plan-active',
        this.faultSwitch.activePlanMetric(this.pipelines.map((p) => p.spec.name)),
        {
          threshold: 1,
          description: 'Functions are running under a fault plan: failures are being injected into this stack.',
          runbook: 'fault-plan-changed',
        },
      );
    // The tools (`npm run dlq`, the proof kit, the local runtime) find the stack's parts by these outputs;
    // addApi adds the API's URL.
    addToolOutputs(Stack.of(this), {
      stage: props.stage,
      humanRolePatterns: props.humanRolePatterns ?? DEFAULT_HUMAN_ROLE_PATTERNS,
      effectsTable: this.effectsTable,
      providerLogTable: this.providerLogTable,
      pipelines: this.pipelines,
      outbox: this.outbox,
      faultSwitch: this.faultSwitch,
    });
    this.node.addValidation({
      validate: () => {
        if (!this.hasApi)
          Annotations.of(this).addInfo(
            `ExactlyOnce: no API (addApi was not called): the pipelines are monitored, but there is no API alarm and no ${STACK_OUTPUTS.apiUrl} output, so the proof kit and npm run call have nothing to call`,
          );
        return [];
      },
    });
  }

  /**
   * Runs the correctness rules on `scope` too (the stack, or the application's part of it): they check
   * this construct's parts always, and the application's resources (its own functions, queues and event
   * source mappings: a reserved concurrency that fails a new account's first deploy, a queue consumer
   * without a DLQ) only when asked, since what the application builds is its to decide. Each resource is
   * checked once, however many scopes reach it.
   *
   * @example
   * ```ts
   * exactlyOnce.checkAlso(this); // the whole stack: the application's API functions as well
   * ```
   */
  checkAlso(scope: IConstruct): void {
    this.extendedTo.push(scope);
    for (const check of this.checks) Aspects.of(scope).add(check, { priority: AspectPriority.READONLY });
  }

  /**
   * Gives every log group under `scope` (whichever construct made it) the `logRetention` of the props,
   * as this construct's own log groups get it: the stage decides how long the application's logs are
   * kept too. Without a `logRetention`, it changes nothing.
   *
   * @example
   * ```ts
   * exactlyOnce.retainLogsOf(this); // the API's functions and access logs keep what the stage says
   * ```
   */
  retainLogsOf(scope: IConstruct): void {
    this.extendedTo.push(scope);
    if (this.props.logRetention === undefined) return;
    Aspects.of(scope).add(new LogRetentionAspect(this.props.logRetention), { priority: AspectPriority.MUTATING });
  }

  /**
   * A stack whose own functions neither check nor log retention reaches gets one warning at synth: the
   * construct's checks and `logRetention` cover its own parts only, and an application that counted on
   * them reaching its functions (as they did when they were stack-wide) would otherwise lose both unseen.
   */
  private warnOfFunctionsLeftOut(): void {
    let warned = false;
    const within = (node: IConstruct, scope: IConstruct) =>
      node.node.path.startsWith(`${scope.node.path}/`) || scope.node.path === '';
    Aspects.of(Stack.of(this)).add(
      {
        visit: (node: IConstruct) => {
          if (warned || !(node instanceof CfnFunction) || within(node, this)) return;
          if (this.extendedTo.some((scope) => within(node, scope))) return;
          warned = true;
          Annotations.of(node).addWarningV2(
            'ExactlyOnce:FunctionsLeftOut',
            `${node.node.path} is outside ExactlyOnce ${this.node.path}: its correctness checks and log retention do not reach it. Call checkAlso(scope) and retainLogsOf(scope) with a scope that holds it (the stack for all of them).`,
          );
        },
      },
      { priority: AspectPriority.READONLY },
    );
  }

  /**
   * Adds the application's REST API: its 5xx alarm and its metrics on the dashboard, the `ApiUrl` output
   * the tools call it by, and errors and throttles alarms for every function of the stack outside this
   * construct (the application's, found now: call it once they are built). Optional: without it the
   * mechanism's parts are monitored and the tools' other outputs are there. Call it once.
   *
   * @example
   * ```ts
   * exactlyOnce.addApi(ordersApi.api, { metrics: { title: 'Orders placed and replays served', metricNames: ['OrderPlaced', 'ReplayServed'] } });
   * ```
   */
  addApi(api: apigw.RestApi, options: ApiMonitoringOptions = {}): Monitoring {
    if (this.hasApi) throw new Error('ExactlyOnce: addApi was already called');
    this.hasApi = true;
    const stack = Stack.of(this);
    this.monitoring.watchApi(api, options.metrics);
    this.monitoring.watchFunctions(
      stack.node.findAll().filter((c): c is FunctionWithDefaults => c instanceof FunctionWithDefaults),
    );
    new CfnOutput(stack, STACK_OUTPUTS.apiUrl, { value: api.url });
    return this.monitoring;
  }

  private warnOfRecordingProviders(): void {
    for (const { spec, consumer } of this.pipelines)
      for (const provider of spec.providers ?? [])
        if (this.props.providers?.[provider] === undefined)
          Annotations.of(consumer).addWarningV2(
            'exactly-once:recording-provider',
            `Consumer ${spec.name} calls provider "${provider}" through the recording test double (a table): ` +
              `set context providers.prod.${provider} to its endpoint and API-key parameter (docs/deploying.md)`,
          );
  }
}
