import {
  Annotations,
  AspectPriority,
  Aspects,
  CfnOutput,
  CfnRule,
  Fn,
  Stack,
  Tags,
  type StackProps,
} from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import * as iam from 'aws-cdk-lib/aws-iam';
import { CUSTOMER_ACCESS_PK_PREFIX, ORDER_PK_PREFIX } from '../../lambdas/shop/aws/order-table';
import { CONSUMERS } from '../../lambdas/shop/consumers';
import { ORDER_EVENT_TYPES } from '../../lambdas/shop/domain/events';
import {
  addToolOutputs,
  applyCorrectnessAspects,
  ConsumerPipelines,
  type ConsumerSpec,
  FaultInjectionSwitch,
  FunctionWithDefaults,
  grantOutboxPublishing,
  grantTableActions,
  LogRetentionAspect,
  Monitoring,
  OutboxRelay,
  outboxRoutes,
  REDRIVE_ALLOWANCE,
  setFunctionBuild,
} from '../exactly-once';
import type { AppConfig } from './config';
import { EffectsReadApi } from './effects-read-api';
import { OrdersApi } from './orders-api';
import { IDEMPOTENCY_KEY_EXPIRY, Storage } from './storage';

export interface ExactlyOnceStackProps extends StackProps {
  config: AppConfig;
  /** Who consumes what; default the consumer list (lambdas/shop/consumers.ts). */
  consumers?: readonly ConsumerSpec[];
}

/**
 * The whole system, for one stage. It only composes: one construct per
 * concern, and the grants where two concerns meet. No resource gets an
 * explicit physical name, so every stage's names derive from its own stack
 * name and stages deploy side by side.
 */
/** The `project` tag on every resource of the stack (with `stage`): what Cost Explorer groups by. */
export const PROJECT_TAG = 'exactly-once-effects';

export class ExactlyOnceStack extends Stack {
  constructor(scope: Construct, id: string, props: ExactlyOnceStackProps) {
    super(scope, id, props);
    const { config } = props;
    // Cost allocation: a load test's bill, or one stage's, can be told apart (activate the tags in Billing).
    Tags.of(this).add('project', PROJECT_TAG);
    Tags.of(this).add('stage', config.stage);
    // Fault code is in the bundles only when asked for; the inbox bypass only in the local runtime's build.
    setFunctionBuild(this, {
      faultInjection: config.faultInjection,
      inboxBypass: config.localRuntime,
      openTelemetry: config.openTelemetry,
    });

    const storage = new Storage(this, 'Storage', {
      removalPolicy: config.removalPolicy,
      deletionProtection: config.deletionProtection,
      throughputCeiling: config.tableThroughputCeiling,
    });

    const ordersApi = new OrdersApi(this, 'OrdersApi', {
      ordersTableName: storage.ordersTable.tableName,
      idempotencyTableName: storage.idempotencyTable.tableName,
      idempotencyKeyExpiry: IDEMPOTENCY_KEY_EXPIRY,
      rateLimit: config.apiRateLimit,
      burstLimit: config.apiBurstLimit,
      createAccountLoggingRole: config.apiGatewayAccountRole === 'create',
      humanRolePatterns: config.humanRolePatterns,
    });
    // Transactions need each item action on the table: the order put, the outbox put and the customer access put.
    grantTableActions(ordersApi.createOrder.fn, storage.ordersTable, ['PutItem', 'GetItem']);
    grantTableActions(ordersApi.createOrder.fn, storage.idempotencyTable, [
      'PutItem',
      'GetItem',
      'UpdateItem',
      'DeleteItem',
    ]);
    grantTableActions(ordersApi.cancelOrder.fn, storage.ordersTable, ['GetItem', 'UpdateItem', 'PutItem']);
    grantTableActions(ordersApi.getOrder.fn, storage.ordersTable, ['GetItem']);

    const pipelines = new ConsumerPipelines(this, 'Pipelines', {
      consumers: props.consumers ?? CONSUMERS,
      producedTypes: ORDER_EVENT_TYPES,
      effectsTableName: storage.effectsTable.tableName,
      providerLogTableName: storage.providerLogTable.tableName,
      providers: props.config.providers,
    });
    if (props.config.stage === 'prod')
      for (const { spec, consumer } of pipelines.all)
        for (const provider of spec.providers ?? [])
          if (props.config.providers[provider] === undefined)
            Annotations.of(consumer).addWarningV2(
              'exactly-once:recording-provider',
              `Consumer ${spec.name} calls provider "${provider}" through the recording test double (a table): ` +
                `set context providers.prod.${provider} to its endpoint and API-key parameter (docs/deploying.md)`,
            );
    pipelines.grantInboxTables(storage.effectsTable, storage.providerLogTable);

    const outbox = new OutboxRelay(this, 'OutboxRelay', {
      outboxTable: storage.ordersTable,
      entityPartitionPrefix: ORDER_PK_PREFIX,
      routes: outboxRoutes(pipelines.all),
    });
    grantOutboxPublishing(outbox, pipelines.all, storage.ordersTable, { operatorRoleArns: config.operatorRoleArns });

    // The proof kit's fault switch: only with -c faultInjection=true, never in prod (config refuses it).
    const faultSwitch = config.faultInjection ? new FaultInjectionSwitch(this, 'FaultInjection') : undefined;
    if (faultSwitch !== undefined) {
      for (const f of [outbox.streamRelay, ...pipelines.all.map((p) => p.consumer)]) faultSwitch.attach(f.fn);
    }

    const reads = new EffectsReadApi(this, 'EffectsReadApi', {
      ordersApi,
      effectsTableName: storage.effectsTable.tableName,
      ordersTableName: storage.ordersTable.tableName,
    });
    grantTableActions(reads.getCustomer.fn, storage.effectsTable, ['GetItem']);
    // Whether the caller placed an order for the customer: a Query of the access items' partitions only,
    // so the read function can see no order (IAM checks the partition key of every item it returns).
    reads.getCustomer.fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['dynamodb:Query'],
        resources: [storage.ordersTable.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${CUSTOMER_ACCESS_PK_PREFIX}*`] } },
      }),
    );
    grantTableActions(reads.getInventory.fn, storage.effectsTable, ['GetItem']);

    const monitoring = new Monitoring(this, 'Monitoring', {
      alarmEmail: config.alarmEmail,
      api: ordersApi.api,
      pipelines: pipelines.all,
      relay: outbox.streamRelay.fn,
      relayMappingId: outbox.streamMappingId,
      relayFailureQueue: outbox.failureQueue,
      sweepAge: outbox.sweepAge,
      // Every function of the stack, by construction: one added later gets its alarms without a list to update.
      functions: this.node.findAll().filter((c): c is FunctionWithDefaults => c instanceof FunctionWithDefaults),
      apiMetrics: {
        title: 'Idempotent API: orders placed and replays served',
        metricNames: ['OrderPlaced', 'ReplayServed'],
      },
    });

    if (faultSwitch !== undefined) {
      // Faults are being injected: by the proof kit, or by whoever changed the parameter. The functions emit the
      // metric on each invocation under a non-empty, unexpired plan, so the alarm clears when the plan is gone.
      monitoring.addAlarm('fault-plan-active', faultSwitch.activePlanMetric(pipelines.all.map((p) => p.spec.name)), {
        threshold: 1,
        description: 'Functions are running under a fault plan: failures are being injected into this stack.',
        runbook: 'fault-plan-changed',
      });
    }
    if (config.localRuntime) {
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
    }

    if (config.stage === 'prod' && config.alarmEmail === undefined) {
      Annotations.of(this).addWarningV2(
        'ExactlyOnce:NoAlarmEmail',
        'stage=prod without -c alarmEmail=...: alarms reach an SNS topic nobody is subscribed to.',
      );
    }

    // The tools (`npm run dlq`, the proof kit, the local runtime) find the stack's parts by these outputs.
    addToolOutputs(this, {
      stage: config.stage,
      humanRolePatterns: config.humanRolePatterns,
      apiUrl: ordersApi.api.url,
      effectsTable: storage.effectsTable,
      providerLogTable: storage.providerLogTable,
      pipelines: pipelines.all,
      outbox,
      faultSwitch,
    });
    // The example's tooling module names these (its entity table, and the bench's tables).
    new CfnOutput(this, 'OrdersTableName', { value: storage.ordersTable.tableName });
    new CfnOutput(this, 'IdempotencyTableName', { value: storage.idempotencyTable.tableName });

    // The stage decides how long logs are kept, for every log group whichever construct made it.
    Aspects.of(this).add(new LogRetentionAspect(config.logRetention), { priority: AspectPriority.MUTATING });

    // Synth refuses settings that would break exactly-once (docs/architecture.md), however they were made.
    applyCorrectnessAspects(this, { redriveAllowanceSeconds: REDRIVE_ALLOWANCE.toSeconds() });
  }
}
