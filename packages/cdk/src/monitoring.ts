import { CfnOutput, Duration, Lazy, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigateway';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { METRICS_NAMESPACE, serviceName, type FunctionWithDefaults } from './function-defaults';
import type { ConsumerPipeline } from './consumer-pipelines';
import { longestOrdinaryRetrySeconds } from '@exactly-once/runtime/consumer/retry-budget';
import { invocationDeadlines } from '@exactly-once/runtime/consumer/record-work';

/** Lambda's default function timeout, when a consumer sets none. */
const LAMBDA_DEFAULT_TIMEOUT = Duration.seconds(3);

/** How far into an invocation a consumer's records must be done (record-work.ts `invocationDeadlines`), in ms. */
export function consumerRecordDeadlineMs(pipeline: Pick<ConsumerPipeline, 'consumer'>): number {
  const timeoutMs = (pipeline.consumer.fn.timeout ?? LAMBDA_DEFAULT_TIMEOUT).toMilliseconds();
  return invocationDeadlines(0, timeoutMs).deadline;
}

/**
 * The sections of docs/runbook.md; each alarm names the one that tells the operator what to do.
 *
 * @example
 * ```ts
 * monitoring.addAlarm('fault-plan-active', metric, { threshold: 1, description: 'Faults are being injected.', runbook: 'fault-plan-changed' });
 * ```
 */
export type RunbookSection =
  | 'dlq-not-empty'
  | 'dlq-oldest-age'
  | 'source-queue-age'
  | 'relay-iterator-age'
  | 'oldest-undispatched-outbox-item'
  | 'function-errors'
  | 'function-throttles'
  | 'api-5xx'
  | 'fault-plan-changed'
  | 'malformed-outbox-item'
  | 'consumer-deliveries-failing'
  | 'consumer-duration-near-deadline'
  | 'relay-dropped-records';

/**
 * What an alarm added with `Monitoring.addAlarm` says: it fires at `threshold` or above, and its
 * description (what broke, where to look) ends with a link to its runbook section.
 *
 * @example The fault-plan alarm ExactlyOnce adds when faults can be injected (packages/cdk/src/exactly-once.ts)
 * ```ts
 * monitoring.addAlarm('fault-plan-active', this.faultSwitch.activePlanMetric(this.pipelines.map((p) => p.spec.name)), {
 *   threshold: 1,
 *   description: 'Functions are running under a fault plan: failures are being injected into this stack.',
 *   runbook: 'fault-plan-changed',
 * });
 * ```
 */
export interface AlarmOptions {
  /** The value at or above which it fires. */
  readonly threshold: number;
  /** What broke and where to look: the first lines of the notification a person gets. */
  readonly description: string;
  /** The section of docs/runbook.md that says what to do; its link ends the description. */
  readonly runbook: RunbookSection;
  /**
   * How many periods in a row must breach before it fires.
   *
   * @default 1
   */
  readonly evaluationPeriods?: number;
}

/**
 * The share of a consumer's record deadline its p99 duration may reach before an alarm fires: past
 * it, a slower dependency soon cuts records at the deadline, and they come back as retries.
 */
export const DURATION_ALARM_FRACTION_OF_DEADLINE = 0.8;

/** The share of a consumer's delivered messages that may fail, 15 minutes in a row, before an alarm fires. */
export const FAILING_DELIVERIES_ALARM_SHARE = 0.5;

/**
 * What Monitoring watches: every consumer pipeline, the relay and its on-failure queue, the
 * functions given, and the API if given (`watchApi` and `watchFunctions` add them later). `sweepAge` is the relay's: an outbox item older than two sweeps alarms.
 *
 * @example
 * ```ts
 * const props: MonitoringProps = {
 *   alarmEmail: config.alarmEmail,
 *   api: ordersApi.api,
 *   pipelines: pipelines.all,
 *   relay: outbox.streamRelay.fn,
 *   relayMappingId: outbox.streamMappingId,
 *   relayFailureQueue: outbox.failureQueue,
 *   sweepAge: outbox.sweepAge,
 *   functions: this.node.findAll().filter((c): c is FunctionWithDefaults => c instanceof FunctionWithDefaults),
 * };
 * ```
 */
export interface MonitoringProps {
  /**
   * Subscribed to the alarm topic by e-mail (the address must confirm the subscription).
   *
   * @default - no e-mail subscription (subscribe to the topic through the AlarmTopicArn output)
   */
  readonly alarmEmail?: string;
  /**
   * The REST API: its 5xx alarm.
   *
   * @default - none yet: `watchApi` adds it
   */
  readonly api?: apigw.RestApi;
  /** Every consumer pipeline: its DLQ, source-age, deliveries and duration alarms, and its charts. */
  readonly pipelines: ConsumerPipeline[];
  /** The outbox relay's function: its iterator-age alarm. */
  readonly relay: lambda.IFunction;
  /** The relay's stream event source mapping id (OutboxRelay.streamMappingId): its dropped records alarm. */
  readonly relayMappingId: string;
  /** The relay's on-failure queue: its DLQ alarms. */
  readonly relayFailureQueue: sqs.IQueue;
  /** The sweeper's age (OutboxRelay.sweepAge): an outbox item older than two sweeps alarms. */
  readonly sweepAge: Duration;
  /**
   * Each alarms on its errors and throttles, and on its async-invocation DLQ if it has one; named by its
   * name. `watchFunctions` adds more.
   *
   * @default - none yet
   */
  readonly functions?: readonly FunctionWithDefaults[];
  /**
   * The API's own metrics (the functions' EMF metrics, summed) graphed beside the DLQs, e.g. the commands
   * done and the replays served. Only with `api`.
   *
   * @default - no such widget
   */
  readonly apiMetrics?: { readonly title: string; readonly metricNames: readonly string[] };
}

/**
 * Alarms to an encrypted SNS topic, and a dashboard of the exactly-once metrics.
 * What each alarm means is in its description, so the page a human gets says
 * what broke and where to look.
 *
 * @example As ExactlyOnce builds it (packages/cdk/src/exactly-once.ts), then adds the application's API and functions
 * ```ts
 * const monitoring = new Monitoring(this, 'Monitoring', {
 *   alarmEmail: props.alarmEmail,
 *   pipelines: [...this.pipelines],
 *   relay: this.outbox.streamRelay.fn,
 *   relayMappingId: this.outbox.streamMappingId,
 *   relayFailureQueue: this.outbox.failureQueue,
 *   sweepAge: this.outbox.sweepAge,
 *   functions: this.node.findAll().filter((c): c is FunctionWithDefaults => c instanceof FunctionWithDefaults),
 * });
 * monitoring.watchApi(ordersApi.api, { title: 'Orders placed and replays served', metricNames: ['OrderPlaced', 'ReplayServed'] });
 * ```
 */
export class Monitoring extends Construct {
  readonly topic: sns.Topic;
  readonly dashboard: cloudwatch.Dashboard;
  /** Every alarm, in the order of the sections below: the topic policy and the alarm widget list them. */
  readonly alarms: cloudwatch.Alarm[] = [];
  // The alarms by kind, so an alarm added later (a function or the API, after the constructor) takes the
  // place it would have had among the others: the topic policy and the dashboard read the same either way.
  private readonly sections = {
    queues: [] as cloudwatch.Alarm[],
    functionDeadLetters: [] as cloudwatch.Alarm[],
    relay: [] as cloudwatch.Alarm[],
    functions: [] as cloudwatch.Alarm[],
    api: [] as cloudwatch.Alarm[],
    added: [] as cloudwatch.Alarm[],
  };
  private section: keyof Monitoring['sections'] = 'queues';
  private apiWidget?: cloudwatch.IWidget;
  private readonly watched = new Set<FunctionWithDefaults>();

  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const key = new kms.Key(this, 'TopicKey', { enableKeyRotation: true, description: 'Encrypts the alarm topic' });
    // enforceSSL gives the topic a policy of its own, which replaces SNS's default one (the default lets
    // this account's services publish): without the statement below CloudWatch may not publish, and every
    // alarm changes state without telling anyone. The AlarmDelivery aspect refuses a template where that happens.
    this.topic = new sns.Topic(this, 'AlarmTopic', { masterKey: key, enforceSSL: true });
    const cloudWatch = new iam.ServicePrincipal('cloudwatch.amazonaws.com');
    const thisAccount = { 'aws:SourceAccount': Stack.of(this).account };
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsOfThisStackPublish',
        principals: [cloudWatch],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: thisAccount,
          // Exactly the ARNs of the alarms made here (not a name pattern): no other alarm, even one of this
          // account, can use the topic, and an alarm added without `addAlarm` fails synth instead of
          // silently never notifying. Resolved at synth, once every alarm exists.
          ArnEquals: { 'aws:SourceArn': Lazy.list({ produce: () => this.alarms.map((a) => a.alarmArn) }) },
        },
      }),
    );
    // To publish to an encrypted topic, CloudWatch makes a data key and decrypts it; it never needs to
    // encrypt or re-encrypt anything with this key, and only on behalf of this account.
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsUseTopicKey',
        principals: [cloudWatch],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
        conditions: { StringEquals: thisAccount },
      }),
    );
    if (props.alarmEmail !== undefined)
      this.topic.addSubscription(new subscriptions.EmailSubscription(props.alarmEmail));
    // So a pager, chat hook or ticketing system can subscribe without digging the ARN out of the console.
    new CfnOutput(this, 'AlarmTopicArn', {
      value: this.topic.topicArn,
      description: 'The SNS topic every alarm of this stack notifies on ALARM and OK: subscribe to it to be paged.',
    }).overrideLogicalId('AlarmTopicArn');

    for (const pipeline of props.pipelines) {
      const { queue, deadLetterQueue } = pipeline.queues;
      const { name } = pipeline.spec;
      this.deadLetterAlarms(`${name} DLQ`, deadLetterQueue);
      // Above the longest ordinary retry (window + a try held for the visibility timeout + the backoff cap):
      // one failed try and its wait must not page anyone. The RetryBudget rule checks it at synth.
      const longestRetry = longestOrdinaryRetrySeconds({
        capSeconds: pipeline.retryBudget.capSeconds,
        batchingWindowSeconds: pipeline.spec.batchingWindowSeconds,
        visibilityTimeoutSeconds: pipeline.queues.visibilityTimeout.toSeconds(),
      });
      this.addAlarm(
        `${name}-source-oldest-age`,
        queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(1) }),
        {
          threshold: longestRetry + 1,
          description: `${name}: the oldest message has waited over ${longestRetry} s, longer than one failed try and its longest backoff; the consumer keeps failing or is falling behind.`,
          runbook: 'source-queue-age',
        },
      );
    }
    for (const pipeline of props.pipelines) this.consumerAlarms(pipeline);
    this.deadLetterAlarms('relay on-failure queue', props.relayFailureQueue);
    // Records the stream mapping gave up on and could not deliver to the on-failure queue either.
    this.addAlarm('relay-dropped-records', this.mappingMetric(props.relayMappingId, 'DroppedEventCount'), {
      threshold: 1,
      description:
        'Outbox relay: its stream event source mapping dropped records it could not hand to the on-failure queue.',
      runbook: 'relay-dropped-records',
    });
    this.section = 'relay';
    this.addAlarm(
      'relay-iterator-age',
      props.relay.metric('IteratorAge', { statistic: 'Maximum', period: Duration.minutes(1) }),
      {
        threshold: 60_000,
        description: 'Outbox relay: stream records wait over a minute to be relayed (relay failing or throttled).',
        runbook: 'relay-iterator-age',
      },
    );
    this.addAlarm(
      'oldest-undispatched-outbox-item',
      this.appMetric('OldestUndispatchedOutboxAgeSeconds', {}, 'Maximum'),
      {
        threshold: props.sweepAge.toSeconds() * 2,
        description:
          'An outbox item stayed undispatched through two sweeps: neither the relay nor the sweeper can publish.',
        runbook: 'oldest-undispatched-outbox-item',
      },
    );
    // The sweeper skips a pending item it cannot read (so one bad item never stops the sweep) and counts it
    // under the same namespace and dimensions as its age metric. Skipped means never published: page on the first.
    this.addAlarm(
      'malformed-outbox-item',
      this.appMetric('MalformedOutboxItem', {}, 'Sum').with({ period: Duration.minutes(5) }),
      {
        threshold: 1,
        description:
          'The outbox sweeper skipped a malformed pending outbox item: its event is not published until the item is repaired.',
        runbook: 'malformed-outbox-item',
      },
    );
    this.watchFunctions(props.functions ?? []);
    if (props.api !== undefined) this.watchApi(props.api, props.apiMetrics);

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    const perConsumer = (metricName: string) =>
      new cloudwatch.GraphWidget({
        title: metricName,
        width: 12,
        left: props.pipelines.map(({ spec }) => this.appMetric(metricName, { consumer: spec.name }, 'Sum', spec.name)),
      });
    // EffectApplied counts each commit once, in the try that made it; a provider call that commit left
    // owed, made by a later copy, is OwedProviderCallCompleted; DuplicateSuppressed only copies of finished work.
    this.dashboard.addWidgets(
      perConsumer('EffectApplied'),
      perConsumer('OwedProviderCallCompleted'),
      perConsumer('DuplicateSuppressed'),
    );
    for (const pipeline of props.pipelines) this.dashboard.addWidgets(...this.consumerWidgets(pipeline));
    this.dashboard.addWidgets(perConsumer('StaleEventIgnored'), perConsumer('PermanentFailure'));
    const deadLetters = new cloudwatch.GraphWidget({
      title: 'Dead-letter queues: visible messages',
      width: 12,
      left: props.pipelines.map(({ spec, queues }) =>
        queues.deadLetterQueue.metricApproximateNumberOfMessagesVisible({ label: spec.name }),
      ),
    });
    const alarmStatus = new cloudwatch.AlarmStatusWidget({ title: 'Alarms', width: 24, alarms: this.alarms });
    // Laid out when the dashboard is rendered: the API's widget (watchApi) goes beside the DLQs' wherever it was added.
    this.dashboard.addWidgets(
      new RenderedLate(() => [
        this.apiWidget === undefined ? deadLetters : new cloudwatch.Row(this.apiWidget, deadLetters),
        alarmStatus,
      ]),
    );
    this.section = 'added';
  }

  /**
   * Alarms on each function's errors and throttles, and on its async-invocation DLQ if it has one
   * (the application's functions, beside the mechanism's). Each function once.
   *
   * @example
   * ```ts
   * monitoring.watchFunctions([getOrder]);
   * ```
   */
  watchFunctions(functions: readonly FunctionWithDefaults[]): void {
    const current = this.section;
    for (const f of functions) {
      if (this.watched.has(f)) continue;
      this.watched.add(f);
      const { name, fn, asyncDeadLetterQueue } = f;
      this.section = 'functionDeadLetters';
      if (asyncDeadLetterQueue !== undefined) this.deadLetterAlarms(`${name} async DLQ`, asyncDeadLetterQueue);
      this.section = 'functions';
      this.addAlarm(`${name}-errors`, fn.metricErrors({ period: Duration.minutes(5) }), {
        threshold: 1,
        description: `${name}: invocations failed.`,
        runbook: 'function-errors',
      });
      this.addAlarm(`${name}-throttles`, fn.metricThrottles({ period: Duration.minutes(5) }), {
        threshold: 1,
        description: `${name}: invocations were throttled.`,
        runbook: 'function-throttles',
      });
    }
    this.section = current;
  }

  /**
   * The API's 5xx alarm, and its own metrics (`apiMetrics`) graphed beside the DLQs.
   *
   * @example
   * ```ts
   * monitoring.watchApi(ordersApi.api, { title: 'Orders placed', metricNames: ['OrderPlaced'] });
   * ```
   */
  watchApi(api: apigw.RestApi, apiMetrics?: MonitoringProps['apiMetrics']): void {
    if (this.sections.api.length > 0) throw new Error('Monitoring: the API is already watched');
    const current = this.section;
    this.section = 'api';
    this.addAlarm('api-5xx', api.metricServerError({ period: Duration.minutes(5) }), {
      threshold: 1,
      description: 'The API returned 5xx (a dependency is down; bad input never yields 5xx).',
      runbook: 'api-5xx',
    });
    this.section = current;
    if (apiMetrics !== undefined)
      this.apiWidget = new cloudwatch.GraphWidget({
        title: apiMetrics.title,
        width: 12,
        left: apiMetrics.metricNames.map((name) => this.appMetric(name, {}, 'Sum')),
      });
  }

  /**
   * A consumer's delivery health: most of what its mapping delivers failing for 15 minutes (its retry
   * budget is being spent: messages reach the DLQ soon), and its p99 duration near its record deadline
   * (a slower dependency soon cuts records there, and they come back as retries).
   */
  private consumerAlarms(pipeline: ConsumerPipeline): void {
    const { name } = pipeline.spec;
    this.addAlarm(`${name}-deliveries-failing`, this.failedShare(pipeline), {
      threshold: FAILING_DELIVERIES_ALARM_SHARE,
      evaluationPeriods: 3,
      description: `${name}: ${FAILING_DELIVERIES_ALARM_SHARE * 100} % or more of the messages its mapping delivered failed, for 15 minutes.`,
      runbook: 'consumer-deliveries-failing',
    });
    const deadlineMs = consumerRecordDeadlineMs(pipeline);
    this.addAlarm(
      `${name}-duration-near-deadline`,
      pipeline.consumer.fn.metricDuration({ statistic: 'p99', period: Duration.minutes(5) }),
      {
        threshold: Math.round(deadlineMs * DURATION_ALARM_FRACTION_OF_DEADLINE),
        evaluationPeriods: 3,
        description: `${name}: p99 duration reached ${DURATION_ALARM_FRACTION_OF_DEADLINE * 100} % of its ${deadlineMs / 1000} s record deadline for 15 minutes.`,
        runbook: 'consumer-duration-near-deadline',
      },
    );
  }

  /**
   * Per consumer: messages delivered beside events applied and duplicates suppressed (the gap is the
   * duplicate rate); its p99 duration against its record deadline and visibility timeout; its
   * messages' receive counts (a rising mean: tries outliving the visibility timeout).
   */
  private consumerWidgets(pipeline: ConsumerPipeline): cloudwatch.IWidget[] {
    const { name } = pipeline.spec;
    const mappingId = pipeline.eventSourceMappingId;
    const app = (metricName: string, statistic: string, label: string) =>
      this.appMetric(metricName, { consumer: name }, statistic, label).with({ period: Duration.minutes(5) });
    return [
      new cloudwatch.GraphWidget({
        title: `${name}: delivered, applied, owed calls completed, suppressed as duplicates`,
        width: 8,
        left: [
          this.mappingMetric(mappingId, 'InvokedEventCount', 'delivered (invoked)'),
          this.mappingMetric(mappingId, 'DeletedEventCount', 'deleted (acked)'),
          this.mappingMetric(mappingId, 'FailedInvokeEventCount', 'failed'),
          app('EffectApplied', 'Sum', 'applied'),
          app('OwedProviderCallCompleted', 'Sum', 'owed provider calls completed'),
          app('DuplicateSuppressed', 'Sum', 'duplicates suppressed'),
        ],
      }),
      new cloudwatch.GraphWidget({
        title: `${name}: duration p99 against its record deadline and visibility timeout (ms)`,
        width: 8,
        left: [pipeline.consumer.fn.metricDuration({ statistic: 'p99', period: Duration.minutes(5), label: 'p99' })],
        leftAnnotations: [
          { value: consumerRecordDeadlineMs(pipeline), label: 'record deadline' },
          { value: pipeline.queues.visibilityTimeout.toMilliseconds(), label: 'visibility timeout' },
        ],
      }),
      new cloudwatch.GraphWidget({
        title: `${name}: receive count per message`,
        width: 8,
        left: [app('ReceiveCount', 'Average', 'mean'), app('ReceiveCount', 'Maximum', 'max')],
      }),
    ];
  }

  /** Of the messages a consumer's mapping delivered (5 minutes), the share reported failed (batch item failures included). */
  private failedShare(pipeline: ConsumerPipeline): cloudwatch.MathExpression {
    return new cloudwatch.MathExpression({
      expression: 'IF(invoked > 0, failed / invoked, 0)',
      usingMetrics: {
        invoked: this.mappingMetric(pipeline.eventSourceMappingId, 'InvokedEventCount'),
        failed: this.mappingMetric(pipeline.eventSourceMappingId, 'FailedInvokeEventCount'),
      },
      period: Duration.minutes(5),
      label: `${pipeline.spec.name}: failed / delivered`,
    });
  }

  /** One of an event source mapping's own metrics (EventCount group), summed over 5 minutes. */
  private mappingMetric(mappingId: string, metricName: string, label?: string): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: 'AWS/Lambda',
      metricName,
      dimensionsMap: { EventSourceMappingUUID: mappingId },
      statistic: 'Sum',
      period: Duration.minutes(5),
      label,
    });
  }

  private deadLetterAlarms(name: string, queue: sqs.IQueue): void {
    const slug = name.replace(/[^A-Za-z0-9]+/g, '-');
    this.addAlarm(
      `${slug}-not-empty`,
      queue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(1), statistic: 'Maximum' }),
      {
        threshold: 1,
        description: `${name}: holds messages. Read their failureCause attribute, fix, then redrive.`,
        runbook: 'dlq-not-empty',
      },
    );
    this.addAlarm(`${slug}-oldest-age`, queue.metricApproximateAgeOfOldestMessage({ period: Duration.minutes(5) }), {
      threshold: Duration.days(7).toSeconds(),
      description: `${name}: a message has waited 7 days; it is deleted at 14. Redrive or record it now.`,
      runbook: 'dlq-oldest-age',
    });
  }

  private appMetric(
    metricName: string,
    dimensions: Record<string, string>,
    statistic: string,
    label?: string,
  ): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: METRICS_NAMESPACE,
      metricName,
      dimensionsMap: { service: serviceName(this), ...dimensions },
      statistic,
      period: Duration.minutes(1),
      label,
    });
  }

  /**
   * An alarm that notifies the alarm topic when it fires and when it clears, and whose description
   * names its runbook section. Add every alarm through here: the topic policy lets exactly these
   * alarms publish.
   */
  addAlarm(id: string, metric: cloudwatch.IMetric, options: AlarmOptions): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(this, id, {
      metric,
      threshold: options.threshold,
      evaluationPeriods: options.evaluationPeriods ?? 1,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription: `${options.description} Runbook: docs/runbook.md#${options.runbook}`,
    });
    alarm.addAlarmAction(new actions.SnsAction(this.topic));
    alarm.addOkAction(new actions.SnsAction(this.topic));
    this.sections[this.section].push(alarm);
    this.alarms.splice(0, this.alarms.length, ...Object.values(this.sections).flat());
    return alarm;
  }
}

/**
 * A column of widgets made when the dashboard is rendered (CDK renders its body lazily), so a widget
 * added after the dashboard's last row still takes its place in it.
 */
class RenderedLate implements cloudwatch.IWidget {
  readonly warnings = undefined;
  readonly warningsV2 = undefined;
  private column?: cloudwatch.Column;

  // Not `widgets`: the dashboard would take it for a layout's list of widgets and walk into it.
  constructor(private readonly make: () => cloudwatch.IWidget[]) {}

  private get laidOut(): cloudwatch.Column {
    return (this.column ??= new cloudwatch.Column(...this.make()));
  }

  get width(): number {
    return this.laidOut.width;
  }

  get height(): number {
    return this.laidOut.height;
  }

  position(x: number, y: number): void {
    this.laidOut.position(x, y);
  }

  toJson(): unknown[] {
    return this.laidOut.toJson();
  }
}
