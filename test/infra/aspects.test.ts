import { App, ArnFormat, AspectPriority, Aspects, Duration, Stack, type IAspect } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kinesis from 'aws-cdk-lib/aws-kinesis';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { DynamoEventSource, KinesisEventSource, SqsDlq, SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct, type IConstruct } from 'constructs';
import { applyCorrectnessAspects, requiredInboxTtlSeconds, type CorrectnessOptions } from '@exactly-once/cdk/aspects';
import { allowOnlyDeadLetterSenders, allowOnlySenders } from '@exactly-once/cdk/queue-senders';
import { attemptsForBudget, fifoMaxReceiveCount, RETRY_BUDGET } from '@exactly-once/runtime/consumer/retry-budget';
import { maxHorizonForClaimTtl } from '@exactly-once/runtime/consumer/dedupe-horizon';
import { OUTBOX_TTL_ATTRIBUTE } from '@exactly-once/runtime/aws/outbox-table';
import { cdkContext, synthErrors, type SynthFinding } from '../support/cdk-app';
import { buildProbeStack } from '../exactly-once/fixtures/probe-stack';

/*
 * Small stacks of L2 constructs with the project's feature flags. With
 * `@aws-cdk/core:annotationsInValidationReport`, an error annotation makes
 * `app.synth()` throw a validation report (so `Annotations.fromStack` cannot
 * read a failing stack): `synthErrors` returns the report's errors instead.
 */

const DAY = 86_400;
/** Tries the retry budget needs (14 with base 2 s, cap 300 s, 900 s): a standard queue's maxReceiveCount. */
const RETRY_TRIES = attemptsForBudget(RETRY_BUDGET);
const retryEnvOf = (fifo: boolean): Record<string, string> => ({
  BACKOFF_BASE_SECONDS: String(RETRY_BUDGET.baseSeconds),
  BACKOFF_CAP_SECONDS: String(RETRY_BUDGET.capSeconds),
  ...(fifo ? { RETRY_MAX_ATTEMPTS: String(RETRY_TRIES) } : {}),
});
const FOURTEEN_DAYS = 14 * DAY;
const CONSUMER_TIMEOUT = 10;
const BATCHING_WINDOW = 5;

/**
 * Asserts that synth fails with exactly these errors of the correctness rules,
 * in any order. Errors from other validators (CloudFormation Validate also
 * knows a few of these rules) are left out: each rule must stand on its own.
 */
function expectRuleErrors(app: App, expected: SynthFinding[]): void {
  const errors = synthErrors(app).filter((f) => f.message.startsWith('[Correctness/'));
  expect(errors).toHaveLength(expected.length);
  expect(errors).toEqual(expect.arrayContaining(expected));
}

/** The finding `synthErrors` would return for a rule's error on `construct` (its L1 resource). */
function error(construct: IConstruct, rule: string, pattern: RegExp): SynthFinding {
  const l1 = construct instanceof Construct && construct.node.defaultChild ? construct.node.defaultChild : construct;
  return {
    path: l1.node.path,
    message: expect.stringMatching(new RegExp(`^\\[Correctness/${rule}\\] ${pattern.source}`)),
  };
}

function esmOf(fn: lambda.IFunction): lambda.CfnEventSourceMapping {
  const found = fn.node
    .findAll()
    .filter((c): c is lambda.CfnEventSourceMapping => c instanceof lambda.CfnEventSourceMapping);
  expect(found).toHaveLength(1);
  return found[0];
}

function newStack(): { app: App; stack: Stack } {
  const app = new App({ context: cdkContext() });
  return { app, stack: new Stack(app, 'S') };
}

function inlineFunction(scope: Construct, id: string, props: Partial<lambda.FunctionProps> = {}): lambda.Function {
  return new lambda.Function(scope, id, {
    runtime: lambda.Runtime.NODEJS_24_X,
    handler: 'index.handler',
    code: lambda.Code.fromInline('exports.handler = async () => ({ batchItemFailures: [] });'),
    ...props,
  });
}

interface QueuePipelineProps {
  fifo?: boolean;
  /** Default 6 × consumer timeout + window: the boundary. 'unset' leaves the SQS default (30 s). */
  visibilityTimeout?: number | 'unset';
  /** Default 10 s. 'unset' leaves the Lambda default (3 s). */
  consumerTimeout?: number | 'unset';
  /** Default 5 s for a standard queue, none for FIFO (which does not take one). */
  batchingWindow?: number;
  sourceRetention?: number;
  /** Default a DLQ of the same type, 14 days, maxReceiveCount from the retry budget (14, FIFO 150); false for none. */
  dlq?: false | { fifo?: boolean; retention?: number; maxReceiveCount?: number };
  /** Default the retry budget's variables (RETRY_BUDGET); 'unset' for none. */
  retryEnv?: Record<string, string> | 'unset';
  reportBatchItemFailures?: boolean;
  /** Default exactly the required TTL; 'unset' for no variable. */
  inboxTtl?: string | 'unset';
  /** Default the largest horizon the TTL keeps safe (TTL - 1 day); 'unset' for no variable. */
  dedupeHorizon?: string | 'unset';
  /** Default false: the queue denies sending to all but one producer role (allowOnlySenders). */
  openToSenders?: boolean;
  /** Default false: the DLQ denies sending to all but the consumer's role (allowOnlyDeadLetterSenders). */
  dlqOpenToSenders?: boolean;
}

/** A source queue, its DLQ and an inbox consumer: correct unless told otherwise. */
function queuePipeline(scope: Construct, id: string, props: QueuePipelineProps = {}) {
  const group = new Construct(scope, id);
  const fifo = props.fifo ?? false;
  const timeout = props.consumerTimeout ?? CONSUMER_TIMEOUT;
  const window = props.batchingWindow ?? (fifo ? undefined : BATCHING_WINDOW);
  const dlqProps =
    props.dlq === false
      ? undefined
      : {
          fifo,
          retention: FOURTEEN_DAYS,
          maxReceiveCount: fifo ? fifoMaxReceiveCount(RETRY_TRIES, 10) : RETRY_TRIES,
          ...props.dlq,
        };
  const dlq =
    dlqProps &&
    new sqs.Queue(group, 'Dlq', {
      fifo: dlqProps.fifo || undefined,
      retentionPeriod: Duration.seconds(dlqProps.retention),
    });
  const visibility = props.visibilityTimeout ?? (timeout === 'unset' ? 3 : timeout) * 6 + (window ?? 0);
  const queue = new sqs.Queue(group, 'Queue', {
    fifo: fifo || undefined,
    visibilityTimeout: visibility === 'unset' ? undefined : Duration.seconds(visibility),
    retentionPeriod: props.sourceRetention === undefined ? undefined : Duration.seconds(props.sourceRetention),
    deadLetterQueue: dlq && dlqProps && { queue: dlq, maxReceiveCount: dlqProps.maxReceiveCount },
  });
  if (props.openToSenders !== true) allowOnlySenders(queue, ['arn:aws:iam::123456789012:role/Producer']);
  if (dlq !== undefined && props.dlqOpenToSenders !== true)
    allowOnlyDeadLetterSenders(dlq, ['arn:aws:iam::123456789012:role/Consumer']);
  const inboxTtl =
    props.inboxTtl ??
    String(
      requiredInboxTtlSeconds({
        sourceRetentionSeconds: props.sourceRetention ?? 4 * DAY,
        deadLetterRetentionSeconds: dlqProps?.retention ?? 0,
      }),
    );
  const dedupeHorizon =
    props.dedupeHorizon ?? String(/^\d+$/.test(inboxTtl) ? maxHorizonForClaimTtl(Number(inboxTtl)) : DAY);
  const consumer = inlineFunction(group, 'Consumer', {
    timeout: timeout === 'unset' ? undefined : Duration.seconds(timeout),
    environment: {
      ...(inboxTtl === 'unset' ? {} : { INBOX_TTL_SECONDS: inboxTtl }),
      ...(dedupeHorizon === 'unset' ? {} : { DEDUPE_HORIZON_SECONDS: dedupeHorizon }),
      ...(props.retryEnv === 'unset' ? {} : (props.retryEnv ?? retryEnvOf(fifo))),
    },
  });
  consumer.addEventSource(
    new SqsEventSource(queue, {
      reportBatchItemFailures: props.reportBatchItemFailures ?? true,
      maxBatchingWindow: window === undefined ? undefined : Duration.seconds(window),
    }),
  );
  return { queue, dlq, consumer };
}

interface StreamRelayProps {
  retryAttempts?: number;
  maxRecordAge?: Duration;
  bisect?: boolean;
  onFailure?: boolean;
  reportBatchItemFailures?: boolean;
}

/** A table stream and its relay, with every stream safeguard unless told otherwise. */
function streamRelay(scope: Construct, id: string, props: StreamRelayProps = {}) {
  const group = new Construct(scope, id);
  const table = new dynamodb.Table(group, 'Table', {
    partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
    stream: dynamodb.StreamViewType.NEW_IMAGE,
  });
  // An on-failure destination is a dead-letter queue: it needs no DLQ of its own.
  const failures = new sqs.Queue(group, 'Failures', { retentionPeriod: Duration.days(14) });
  const relay = inlineFunction(group, 'Relay', { timeout: Duration.seconds(30) });
  relay.addEventSource(
    new DynamoEventSource(table, {
      startingPosition: lambda.StartingPosition.TRIM_HORIZON,
      retryAttempts: 'retryAttempts' in props ? props.retryAttempts : 10,
      maxRecordAge: 'maxRecordAge' in props ? props.maxRecordAge : Duration.hours(24),
      bisectBatchOnError: props.bisect ?? true,
      onFailure: props.onFailure === false ? undefined : new SqsDlq(failures),
      reportBatchItemFailures: props.reportBatchItemFailures ?? true,
    }),
  );
  return { table, failures, relay };
}

/** One stack with a standard pipeline, a FIFO pipeline and a stream relay, all correct. */
function baseline(options?: CorrectnessOptions) {
  const { app, stack } = newStack();
  const standard = queuePipeline(stack, 'Standard');
  const fifo = queuePipeline(stack, 'Fifo', { fifo: true });
  const stream = streamRelay(stack, 'Stream');
  applyCorrectnessAspects(stack, options);
  return { app, stack, standard, fifo, stream };
}

/** A stack holding one pipeline built with `props`, with the aspects applied. */
function withPipeline(props: QueuePipelineProps, options?: CorrectnessOptions) {
  const { app, stack } = newStack();
  const pipeline = queuePipeline(stack, 'P', props);
  applyCorrectnessAspects(stack, options);
  return { app, stack, ...pipeline };
}

function withRelay(props: StreamRelayProps) {
  const { app, stack } = newStack();
  const relay = streamRelay(stack, 'R', props);
  applyCorrectnessAspects(stack);
  return { app, stack, ...relay };
}

describe('correctness aspects', () => {
  test('a correct stack synthesizes with no error or warning from the rules', () => {
    const { app, stack } = baseline();

    const errors = synthErrors(app);

    expect(errors).toEqual([]);
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('Correctness/'));
  });

  test('the aspects are registered at READONLY priority, since they change nothing', () => {
    const { stack } = newStack();

    const aspects = applyCorrectnessAspects(stack);

    expect(aspects.map((a) => a.rule)).toEqual([
      'VisibilityTimeout',
      'DeadLetterQueue',
      'ReportBatchItemFailures',
      'StreamSource',
      'InboxTtl',
      'DedupeHorizon',
      'AlarmDelivery',
      'RetryBudget',
      'ReservedConcurrency',
      'QueueSenders',
      'OutboxRetention',
    ]);
    // Every aspect registered only reads.
    expect(Aspects.of(stack).applied.map((a) => a.aspect)).toEqual(expect.arrayContaining(aspects));
    expect(Aspects.of(stack).applied.map((a) => a.priority)).toEqual(
      Aspects.of(stack).applied.map(() => AspectPriority.READONLY),
    );
  });

  describe('OutboxRetention', () => {
    /** A table and a function that marks its outbox items dispatched (OUTBOX_TABLE_NAME), as told. */
    function withOutboxPublisher(props: { ttlAttribute?: string; retention?: string }) {
      const { app, stack } = newStack();
      const table = new dynamodb.Table(stack, 'Outbox', {
        partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
        timeToLiveAttribute: props.ttlAttribute,
      });
      const fn = inlineFunction(stack, 'Relay', {
        environment: {
          OUTBOX_TABLE_NAME: table.tableName,
          ...(props.retention === undefined ? {} : { OUTBOX_DISPATCHED_RETENTION_SECONDS: props.retention }),
        },
      });
      applyCorrectnessAspects(stack);
      return { app, fn };
    }

    test('a dispatched item kept a day or more, on a table whose TTL attribute is the outbox one, passes', () => {
      const { app } = withOutboxPublisher({ ttlAttribute: OUTBOX_TTL_ATTRIBUTE, retention: '86400' });

      expect(synthErrors(app)).toEqual([]);
    });

    test('a retention shorter than the stream keeps its records, or none, fails on the function', () => {
      const short = withOutboxPublisher({ ttlAttribute: OUTBOX_TTL_ATTRIBUTE, retention: '86399' });
      const unset = withOutboxPublisher({ ttlAttribute: OUTBOX_TTL_ATTRIBUTE });

      expectRuleErrors(short.app, [
        error(
          short.fn,
          'OutboxRetention',
          /Function .*Relay.* marks outbox items dispatched but has OUTBOX_DISPATCHED_RETENTION_SECONDS "86399": .* at least 86400/,
        ),
      ]);
      expectRuleErrors(unset.app, [
        error(unset.fn, 'OutboxRetention', /.* has OUTBOX_DISPATCHED_RETENTION_SECONDS unset: /),
      ]);
    });

    test('a table without the outbox TTL attribute fails: dispatched items would be kept forever', () => {
      const none = withOutboxPublisher({ retention: '604800' });
      const other = withOutboxPublisher({ ttlAttribute: 'expiresAt', retention: '604800' });

      for (const { app, fn } of [none, other])
        expectRuleErrors(app, [
          error(
            fn,
            'OutboxRetention',
            /Table .*Outbox.* has TimeToLiveSpecification .*: .* kept forever\. Set the table's TTL attribute to dispatchedExpiresAt/,
          ),
        ]);
    });
  });

  describe('VisibilityTimeout', () => {
    test('visibility exactly 6 × timeout + batching window passes', () => {
      const { app } = withPipeline({ consumerTimeout: 10, batchingWindow: 5, visibilityTimeout: 65 });

      expect(synthErrors(app)).toEqual([]);
    });

    test('one second less fails, naming the queue, the consumer and the numbers', () => {
      const { app, queue } = withPipeline({ consumerTimeout: 10, batchingWindow: 5, visibilityTimeout: 64 });

      const errors = synthErrors(app);

      expect(errors).toEqual([
        error(
          queue,
          'VisibilityTimeout',
          /Queue S\/P\/Queue has visibility timeout 64 s, below 6 × 10 s \(timeout of consumer S\/P\/Consumer\) \+ 5 s \(maximum batching window of S\/P\/Consumer\/SqsEventSource:.*\) = 65 s: .* at least 65 s\./,
        ),
      ]);
    });

    test('unset values take the service defaults: Lambda 3 s, SQS 30 s', () => {
      const atLimit = withPipeline({ consumerTimeout: 'unset', visibilityTimeout: 'unset', batchingWindow: 12 });
      const overLimit = withPipeline({ consumerTimeout: 'unset', visibilityTimeout: 'unset', batchingWindow: 13 });

      expect(synthErrors(atLimit.app)).toEqual([]);
      expectRuleErrors(overLimit.app, [
        error(
          overLimit.queue,
          'VisibilityTimeout',
          /Queue S\/P\/Queue has visibility timeout 30 s, below 6 × 3 s .* = 31 s/,
        ),
      ]);
    });

    test('a FIFO queue is held to the same rule', () => {
      const { app, queue } = withPipeline({ fifo: true, consumerTimeout: 10, visibilityTimeout: 59 });

      expectRuleErrors(app, [error(queue, 'VisibilityTimeout', /.* 59 s, below 6 × 10 s .* = 60 s/)]);
    });

    test('an L1 override made after the L2 is caught', () => {
      const { app, queue } = withPipeline({});
      (queue.node.defaultChild as sqs.CfnQueue).addPropertyOverride('VisibilityTimeout', 30);

      expectRuleErrors(app, [error(queue, 'VisibilityTimeout', /.* 30 s, below 6 × 10 s .* = 65 s/)]);
    });

    test('a consumer reached through an alias is resolved to its function', () => {
      const { app, stack } = newStack();
      const dlq = new sqs.Queue(stack, 'Dlq', { retentionPeriod: Duration.days(14) });
      const queue = new sqs.Queue(stack, 'Queue', {
        visibilityTimeout: Duration.seconds(60),
        deadLetterQueue: { queue: dlq, maxReceiveCount: RETRY_TRIES },
      });
      allowOnlySenders(queue, ['arn:aws:iam::123456789012:role/Producer']);
      allowOnlyDeadLetterSenders(dlq, ['arn:aws:iam::123456789012:role/Consumer']);
      const fn = inlineFunction(stack, 'Fn', {
        timeout: Duration.seconds(20),
        environment: {
          INBOX_TTL_SECONDS: String(30 * DAY),
          DEDUPE_HORIZON_SECONDS: String(29 * DAY),
          ...retryEnvOf(false),
        },
      });
      const alias = new lambda.Alias(stack, 'Live', { aliasName: 'live', version: fn.currentVersion });
      alias.addEventSource(new SqsEventSource(queue, { reportBatchItemFailures: true }));
      applyCorrectnessAspects(stack);

      expectRuleErrors(app, [
        error(
          queue,
          'VisibilityTimeout',
          /Queue S\/Queue has visibility timeout 60 s, below 6 × 20 s \(timeout of consumer S\/Fn\) .* = 120 s/,
        ),
      ]);
    });

    // Priorities order aspects on each node, not across the tree: the queue is visited after the
    // checks visited the event source mapping that reads it. Checking at validation time sees the change.
    test('a mutating aspect that shortens the timeout during synth is still caught', () => {
      const { app, stack, queue } = withPipeline({});
      const shorten: IAspect = {
        visit: (node) => {
          if (node instanceof sqs.CfnQueue && node.node.path === 'S/P/Queue/Resource') node.visibilityTimeout = 40;
        },
      };
      Aspects.of(stack).add(shorten, { priority: AspectPriority.MUTATING });

      expectRuleErrors(app, [error(queue, 'VisibilityTimeout', /.* 40 s, below .* = 65 s/)]);
    });
  });

  describe('DeadLetterQueue', () => {
    test('a source queue without a redrive policy fails', () => {
      const { app, queue } = withPipeline({ dlq: false });

      expectRuleErrors(app, [error(queue, 'DeadLetterQueue', /Queue S\/P\/Queue has no redrive policy: .*/)]);
    });

    test('maxReceiveCount 4 fails', () => {
      const { app, queue } = withPipeline({ dlq: { maxReceiveCount: 4 } });

      expectRuleErrors(app, [
        error(
          queue,
          'DeadLetterQueue',
          /Queue S\/P\/Queue has maxReceiveCount 4, below 5: .* S\/P\/Dlq\. Set maxReceiveCount to at least 5\./,
        ),
        error(queue, 'RetryBudget', /maxReceiveCount of S\/P\/Queue is 4: .*/),
      ]);
    });

    test('maxReceiveCount 5 passes (this rule; the retry budget asks for more)', () => {
      const { app } = withPipeline({ dlq: { maxReceiveCount: 5 } });

      expect(synthErrors(app).filter((f) => f.message.startsWith('[Correctness/DeadLetterQueue]'))).toEqual([]);
    });

    test('a FIFO source with a standard dead-letter queue fails', () => {
      const { app, queue } = withPipeline({ fifo: true, dlq: { fifo: false } });

      expectRuleErrors(app, [
        error(
          queue,
          'DeadLetterQueue',
          /Queue S\/P\/Queue is FIFO but its dead-letter queue S\/P\/Dlq is standard: .* Use a FIFO dead-letter queue\./,
        ),
      ]);
    });

    test('a standard source with a FIFO dead-letter queue fails', () => {
      const { app, queue } = withPipeline({ fifo: false, dlq: { fifo: true } });

      expectRuleErrors(app, [
        error(queue, 'DeadLetterQueue', /Queue S\/P\/Queue is standard but its dead-letter queue S\/P\/Dlq is FIFO: /),
      ]);
    });

    test('a dead-letter queue that keeps messages no longer than its source fails (default 4 days each)', () => {
      const { app, queue } = withPipeline({ dlq: { retention: 4 * DAY } });

      expectRuleErrors(app, [
        error(
          queue,
          'DeadLetterQueue',
          /Queue S\/P\/Queue retains messages for 345600 s and its dead-letter queue S\/P\/Dlq for 345600 s, not longer: /,
        ),
      ]);
    });

    test('one second more in the dead-letter queue passes', () => {
      const { app } = withPipeline({ sourceRetention: 7 * DAY, dlq: { retention: 7 * DAY + 1 } });

      expect(synthErrors(app)).toEqual([]);
    });

    test('each violation is its own error', () => {
      const { app, queue } = withPipeline({ fifo: true, dlq: { fifo: false, maxReceiveCount: 1, retention: 60 } });

      expectRuleErrors(app, [
        error(queue, 'DeadLetterQueue', /.* is FIFO but .* is standard/),
        error(queue, 'DeadLetterQueue', /.* has maxReceiveCount 1, below 5/),
        error(queue, 'DeadLetterQueue', /.* retains messages for 345600 s and .* for 60 s, not longer/),
        error(queue, 'RetryBudget', /FIFO queue .* has maxReceiveCount 1, below 14 tries x 10 .*/),
      ]);
    });

    test('queues used as dead-letter queues need none of their own', () => {
      const { app, stack } = newStack();
      // A Lambda async DeadLetterConfig target, an on-failure destination (in the baseline relay)
      // and a queue that declares itself a DLQ with a RedriveAllowPolicy.
      inlineFunction(stack, 'Async', { deadLetterQueueEnabled: true });
      streamRelay(stack, 'R');
      new sqs.Queue(stack, 'Declared', { redriveAllowPolicy: { redrivePermission: sqs.RedrivePermission.ALLOW_ALL } });
      applyCorrectnessAspects(stack);

      expect(synthErrors(app)).toEqual([]);
    });

    test('a RedriveAllowPolicy of denyAll does not make a queue a dead-letter queue', () => {
      const { app, stack } = newStack();
      const queue = new sqs.Queue(stack, 'Denied', {
        redriveAllowPolicy: { redrivePermission: sqs.RedrivePermission.DENY_ALL },
      });
      applyCorrectnessAspects(stack);

      expectRuleErrors(app, [error(queue, 'DeadLetterQueue', /Queue S\/Denied has no redrive policy/)]);
    });

    test('a raw L1 queue is read too, numbers as strings included', () => {
      const { app, stack } = newStack();
      const dlq = new sqs.CfnQueue(stack, 'RawDlq', { messageRetentionPeriod: FOURTEEN_DAYS });
      // CloudFormation takes numbers as strings too.
      const queue = new sqs.CfnQueue(stack, 'Raw', {
        redrivePolicy: { deadLetterTargetArn: dlq.attrArn, maxReceiveCount: '3' },
      });
      applyCorrectnessAspects(stack);

      expectRuleErrors(app, [error(queue, 'DeadLetterQueue', /Queue S\/Raw has maxReceiveCount 3, below 5/)]);
    });
  });

  describe('ReportBatchItemFailures', () => {
    test('an SQS event source without it fails', () => {
      const { app, consumer } = withPipeline({ reportBatchItemFailures: false });

      expectRuleErrors(app, [
        error(
          esmOf(consumer),
          'ReportBatchItemFailures',
          /Event source mapping S\/P\/Consumer\/SqsEventSource:.* has FunctionResponseTypes unset, without ReportBatchItemFailures: /,
        ),
      ]);
    });

    test('a DynamoDB stream source without it fails', () => {
      const { app, relay } = withRelay({ reportBatchItemFailures: false });

      expectRuleErrors(app, [
        error(
          esmOf(relay),
          'ReportBatchItemFailures',
          /Event source mapping S\/R\/Relay\/DynamoDBEventSource:.* without ReportBatchItemFailures/,
        ),
      ]);
    });

    test('an L1 mapping built by hand is checked too', () => {
      const { app, stack, queue, consumer } = withPipeline({});
      const raw = new lambda.CfnEventSourceMapping(stack, 'RawMapping', {
        eventSourceArn: queue.queueArn,
        functionName: consumer.functionName,
        functionResponseTypes: [],
      });

      expectRuleErrors(app, [
        error(raw, 'ReportBatchItemFailures', /Event source mapping S\/RawMapping has FunctionResponseTypes \[\]/),
      ]);
    });
  });

  describe('StreamSource', () => {
    test('unbounded retries (unset) fail', () => {
      const { app, relay } = withRelay({ retryAttempts: undefined });

      expectRuleErrors(app, [
        error(
          esmOf(relay),
          'StreamSource',
          /Event source mapping S\/R\/Relay\/DynamoDBEventSource:.* \(DynamoDB stream of S\/R\/Table\) has MaximumRetryAttempts unset \(infinite\): /,
        ),
      ]);
    });

    test('retries of -1 (infinite) fail', () => {
      const { app, relay } = withRelay({});
      esmOf(relay).maximumRetryAttempts = -1;

      expectRuleErrors(app, [error(esmOf(relay), 'StreamSource', /.* has MaximumRetryAttempts -1 \(infinite\)/)]);
    });

    test('unbounded record age (unset or -1) fails', () => {
      const unset = withRelay({ maxRecordAge: undefined });
      const infinite = withRelay({});
      esmOf(infinite.relay).addPropertyOverride('MaximumRecordAgeInSeconds', -1);

      expectRuleErrors(unset.app, [
        error(esmOf(unset.relay), 'StreamSource', /.* has MaximumRecordAgeInSeconds unset \(infinite\)/),
      ]);
      expectRuleErrors(infinite.app, [
        error(esmOf(infinite.relay), 'StreamSource', /.* has MaximumRecordAgeInSeconds -1 \(infinite\)/),
      ]);
    });

    test('no bisect on error fails', () => {
      const { app, relay } = withRelay({ bisect: false });

      expectRuleErrors(app, [error(esmOf(relay), 'StreamSource', /.* has BisectBatchOnFunctionError false: /)]);
    });

    test('no on-failure destination fails', () => {
      const { app, relay, failures } = withRelay({ onFailure: false });

      expectRuleErrors(app, [
        error(esmOf(relay), 'StreamSource', /.* has no DestinationConfig\.OnFailure\.Destination: /),
        // Without the destination, the failures queue is no longer a DLQ, so it needs one of its own.
        error(failures, 'DeadLetterQueue', /Queue S\/R\/Failures has no redrive policy/),
      ]);
    });

    test('a Kinesis source with the defaults fails every stream rule', () => {
      const { app, stack } = newStack();
      const stream = new kinesis.Stream(stack, 'Stream');
      const fn = inlineFunction(stack, 'Fn');
      fn.addEventSource(
        new KinesisEventSource(stream, {
          startingPosition: lambda.StartingPosition.LATEST,
          reportBatchItemFailures: true,
        }),
      );
      applyCorrectnessAspects(stack);

      const esm = esmOf(fn);
      expectRuleErrors(app, [
        error(esm, 'StreamSource', /.* \(Kinesis stream S\/Stream\) has MaximumRetryAttempts unset/),
        error(esm, 'StreamSource', /.* has MaximumRecordAgeInSeconds unset/),
        error(esm, 'StreamSource', /.* has BisectBatchOnFunctionError unset/),
        error(esm, 'StreamSource', /.* has no DestinationConfig\.OnFailure\.Destination/),
      ]);
    });
  });

  describe('InboxTtl', () => {
    // 4 days (source) + 14 days (DLQ) + 3 days (the default redrive allowance, the pipelines' too)
    const required = 4 * DAY + FOURTEEN_DAYS + 3 * DAY;

    test('exactly source + DLQ retention + redrive allowance passes', () => {
      const { app } = withPipeline({ inboxTtl: String(required) });

      expect(synthErrors(app)).toEqual([]);
    });

    test('one second less fails, with the breakdown', () => {
      const { app, consumer } = withPipeline({ inboxTtl: String(required - 1) });

      expectRuleErrors(app, [
        error(
          consumer,
          'InboxTtl',
          /Function S\/P\/Consumer consumes queue S\/P\/Queue with INBOX_TTL_SECONDS 1814399, below 345600 s \(retention of S\/P\/Queue\) \+ 1209600 s \(retention of S\/P\/Dlq\) \+ 259200 s \(redrive allowance\) = 1814400 s: a message redriven after its inbox record expired would have its effect applied a second time\./,
        ),
      ]);
    });

    test('a missing INBOX_TTL_SECONDS fails', () => {
      const { app, consumer } = withPipeline({ inboxTtl: 'unset' });

      expectRuleErrors(app, [
        error(
          consumer,
          'InboxTtl',
          /Function S\/P\/Consumer consumes queue S\/P\/Queue but has no INBOX_TTL_SECONDS environment variable; .* at least 1814400\./,
        ),
      ]);
    });

    test('a value that is not a whole number of seconds fails', () => {
      const { app, consumer } = withPipeline({ inboxTtl: '19d' });

      expectRuleErrors(app, [
        error(
          consumer,
          'InboxTtl',
          /Function S\/P\/Consumer has INBOX_TTL_SECONDS "19d", not a whole number of seconds/,
        ),
      ]);
    });

    test('the redrive allowance is an option', () => {
      const passes = withPipeline({ inboxTtl: String(required) }, { redriveAllowanceSeconds: DAY });
      const fails = withPipeline({ inboxTtl: String(required) }, { redriveAllowanceSeconds: 4 * DAY });

      expect(synthErrors(passes.app)).toEqual([]);
      expectRuleErrors(fails.app, [
        error(fails.consumer, 'InboxTtl', /.* \+ 345600 s \(redrive allowance\) = 1900800 s/),
      ]);
    });
  });

  describe('QueueSenders', () => {
    test('a consumed queue open to any principal with sqs:SendMessage fails, on its mapping, naming the queue and the fix', () => {
      const { app } = withPipeline({ openToSenders: true });

      const errors = synthErrors(app).filter((e) => e.message.startsWith('[Correctness/QueueSenders]'));

      expect(errors).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(
            /Queue S\/P\/Queue, consumed by S\/P\/Consumer, lets any principal with sqs:SendMessage send to it.*allowOnlySenders/,
          ),
        }),
      ]);
    });

    test('a deny that names no senders (no aws:PrincipalArn condition) does not count', () => {
      const { app, stack } = newStack();
      const { queue } = queuePipeline(stack, 'P', { openToSenders: true });
      queue.addToResourcePolicy(
        new iam.PolicyStatement({
          effect: iam.Effect.DENY,
          principals: [new iam.AnyPrincipal()],
          actions: ['sqs:SendMessage'],
          resources: [queue.queueArn],
          conditions: { Bool: { 'aws:SecureTransport': 'false' } },
        }),
      );
      applyCorrectnessAspects(stack);

      expect(synthErrors(app).map((e) => e.message.slice(0, 27))).toEqual(['[Correctness/QueueSenders] ']);
    });

    test('a DLQ open to any principal with sqs:SendMessage fails, on its mapping, naming the DLQ, its queue and the fix', () => {
      const { app } = withPipeline({ dlqOpenToSenders: true });

      const errors = synthErrors(app).filter((e) => e.message.startsWith('[Correctness/QueueSenders]'));

      expect(errors).toEqual([
        expect.objectContaining({
          message: expect.stringMatching(
            /Dead-letter queue S\/P\/Dlq of S\/P\/Queue, consumed by S\/P\/Consumer, lets any principal with sqs:SendMessage send to it.*redrive.*allowOnlyDeadLetterSenders/,
          ),
        }),
      ]);
    });

    test('a guarded queue and a guarded DLQ pass; a queue without a DLQ is left to the DeadLetterQueue rule', () => {
      const guarded = withPipeline({});
      const noDlq = withPipeline({ dlq: false });

      const rules = (app: App) => synthErrors(app).map((e) => e.message.slice(0, e.message.indexOf(']') + 1));

      expect(rules(guarded.app)).toEqual([]);
      expect(rules(noDlq.app)).toEqual(['[Correctness/DeadLetterQueue]']);
    });

    test('allowOnlyDeadLetterSenders denies SendMessage to every principal outside its list, but not to an AWS service acting as itself', () => {
      const { stack } = newStack();
      const dlq = new sqs.Queue(stack, 'Dlq');

      allowOnlyDeadLetterSenders(dlq, ['arn:aws:iam::123456789012:role/Consumer']);

      Template.fromStack(stack).hasResourceProperties('AWS::SQS::QueuePolicy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Sid: 'OnlyConsumerDeadLetters',
              Effect: 'Deny',
              Principal: { AWS: '*' },
              Action: 'sqs:SendMessage',
              Condition: {
                ArnNotEquals: { 'aws:PrincipalArn': ['arn:aws:iam::123456789012:role/Consumer'] },
                BoolIfExists: { 'aws:PrincipalIsAWSService': 'false' },
              },
            }),
          ]),
        },
      });
    });

    test('allowOnlySenders denies SendMessage to every principal outside its list', () => {
      const { stack } = newStack();
      const queue = new sqs.Queue(stack, 'Q');

      allowOnlySenders(queue, ['arn:aws:iam::123456789012:role/Relay']);

      Template.fromStack(stack).hasResourceProperties('AWS::SQS::QueuePolicy', {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Effect: 'Deny',
              Principal: { AWS: '*' },
              Action: 'sqs:SendMessage',
              Condition: {
                ArnNotEquals: { 'aws:PrincipalArn': ['arn:aws:iam::123456789012:role/Relay'] },
                BoolIfExists: { 'aws:PrincipalIsAWSService': 'false' },
              },
            }),
          ]),
        },
      });
    });
  });

  describe('DedupeHorizon', () => {
    const ttl = 22 * DAY;

    test('a horizon of TTL minus the 1-day clock-skew margin passes', () => {
      const { app } = withPipeline({ inboxTtl: String(ttl), dedupeHorizon: String(ttl - DAY) });

      expect(synthErrors(app)).toEqual([]);
    });

    test('one second more fails: an event that young could find its claim expired', () => {
      const { app, consumer } = withPipeline({ inboxTtl: String(ttl), dedupeHorizon: String(ttl - DAY + 1) });

      expectRuleErrors(app, [
        error(
          consumer,
          'DedupeHorizon',
          /Function S\/P\/Consumer has DEDUPE_HORIZON_SECONDS 1814401, above its INBOX_TTL_SECONDS 1900800 minus 86400 s \(clock-skew margin\) = 1814400 s: an event redriven after its inbox claim expired would be claimed again/,
        ),
      ]);
    });

    test('its error states the margins it relies on: claims counted from occurredAt, events more than 300 s ahead refused', () => {
      const { app, consumer } = withPipeline({ inboxTtl: String(ttl), dedupeHorizon: String(ttl) });

      expectRuleErrors(app, [
        error(
          consumer,
          'DedupeHorizon',
          /.*later of claim time and occurredAt, and on events stamped more than 300 s ahead being refused as OccurredInFuture/,
        ),
      ]);
    });

    test.each([
      ['missing', 'unset', /Function S\/P\/Consumer consumes queue S\/P\/Queue with no DEDUPE_HORIZON_SECONDS/],
      [
        'not whole seconds',
        '21d',
        /Function S\/P\/Consumer consumes queue S\/P\/Queue with DEDUPE_HORIZON_SECONDS "21d"/,
      ],
    ])('a %s horizon fails', (_what, dedupeHorizon, message) => {
      const { app, consumer } = withPipeline({ inboxTtl: String(ttl), dedupeHorizon });

      expectRuleErrors(app, [error(consumer, 'DedupeHorizon', message)]);
    });
  });

  describe('RetryBudget', () => {
    const standardEnv = (base: number, cap: number) => ({
      BACKOFF_BASE_SECONDS: String(base),
      BACKOFF_CAP_SECONDS: String(cap),
    });

    test('standard queue: maxReceiveCount 14 passes (base 2 s, cap 300 s: 1005 s guaranteed before the 14th try)', () => {
      const { app } = withPipeline({ dlq: { maxReceiveCount: 14 } });

      expect(synthErrors(app)).toEqual([]);
    });

    test('standard queue: maxReceiveCount 13 fails (855 s guaranteed), on the queue, with the numbers and the fix', () => {
      const { app, queue } = withPipeline({ dlq: { maxReceiveCount: 13 } });

      expectRuleErrors(app, [
        error(
          queue,
          'RetryBudget',
          /maxReceiveCount of S\/P\/Queue is 13: with backoff base 2 s and cap 300 s, a transiently failing message is dead-lettered after a guaranteed 855 s of backoff \(at most 1710 s\), below the retry budget of 900 s: .* Set it to at least 14\./,
        ),
      ]);
    });

    test('the old settings (maxReceiveCount 5, base 2 s) fail: 15 s guaranteed', () => {
      const { app, queue } = withPipeline({ dlq: { maxReceiveCount: 5 }, retryEnv: standardEnv(2, 60) });

      expectRuleErrors(app, [error(queue, 'RetryBudget', /.* is 5: .* guaranteed 15 s of backoff \(at most 30 s\)/)]);
    });

    test("FIFO: the consumer's own try limit is what must reach the budget; 13 fails on the function", () => {
      const { app, consumer } = withPipeline({
        fifo: true,
        retryEnv: { ...standardEnv(2, 300), RETRY_MAX_ATTEMPTS: '13' },
      });

      expectRuleErrors(app, [
        error(
          consumer,
          'RetryBudget',
          /RETRY_MAX_ATTEMPTS of S\/P\/Consumer is 13: .* guaranteed 855 s .* at least 14\./,
        ),
      ]);
    });

    test('FIFO: maxReceiveCount below tries x batch size + the crash allowance fails (one crash could dead-letter a record with tries left); at it passes', () => {
      const below = withPipeline({ fifo: true, dlq: { maxReceiveCount: 149 } });
      const at = withPipeline({ fifo: true, dlq: { maxReceiveCount: 150 } });

      expectRuleErrors(below.app, [
        error(
          below.queue,
          'RetryBudget',
          /FIFO queue S\/P\/Queue has maxReceiveCount 149, below 14 tries x 10 \(batch size of .*\) \+ 10 \(crash allowance\) = 150: .* before its own tries are spent\. Set maxReceiveCount to at least 150\./,
        ),
      ]);
      expect(synthErrors(at.app)).toEqual([]);
    });

    test("a cap above 5 minutes fails; above 12 h it names SQS's limit", () => {
      const five = withPipeline({ retryEnv: standardEnv(2, 301) });
      const sqsLimit = withPipeline({ retryEnv: standardEnv(2, 43_201) });

      expectRuleErrors(five.app, [error(five.consumer, 'RetryBudget', /.* BACKOFF_CAP_SECONDS 301, above 300 s: /)]);
      expectRuleErrors(sqsLimit.app, [
        error(sqsLimit.consumer, 'RetryBudget', /.* BACKOFF_CAP_SECONDS 43201, above SQS's largest visibility timeout/),
      ]);
    });

    test('an age alarm on the source queue that fires at the longest ordinary retry fails, on the alarm, with the sum and the fix; above it passes', () => {
      // Window 5 s + visibility 65 s (6 x 10 s timeout + window) + cap 300 s = 370 s.
      const withAgeAlarm = (threshold: number) => {
        const built = withPipeline({});
        const alarm = new cloudwatch.Alarm(built.stack, 'SourceAge', {
          metric: built.queue.metricApproximateAgeOfOldestMessage(),
          threshold,
          evaluationPeriods: 1,
        });
        return { ...built, alarm };
      };
      const at = withAgeAlarm(370);
      const above = withAgeAlarm(371);

      expectRuleErrors(at.app, [
        error(
          at.alarm,
          'RetryBudget',
          /Alarm .*SourceAge fires when the oldest message of S\/P\/Queue is 370 s old, not above the longest ordinary retry of S\/P\/Consumer: 5 s batching window \+ 65 s visibility timeout \(a try that crashed or timed out\) \+ 300 s backoff cap = 370 s, .* Set its threshold above 370\.$/,
        ),
      ]);
      expect(synthErrors(above.app).filter((f) => f.message.includes('RetryBudget'))).toEqual([]);
    });

    test('a base of 0 fails: it guarantees no wait', () => {
      const { app, consumer } = withPipeline({ retryEnv: standardEnv(0, 300) });

      expectRuleErrors(app, [error(consumer, 'RetryBudget', /.* BACKOFF_BASE_SECONDS 0: .* guarantees no wait/)]);
    });

    test('a consumer without the retry variables fails, naming each', () => {
      const { app, consumer } = withPipeline({ fifo: true, retryEnv: 'unset' });

      expectRuleErrors(app, [
        error(consumer, 'RetryBudget', /.* has no BACKOFF_BASE_SECONDS environment variable/),
        error(consumer, 'RetryBudget', /.* has no BACKOFF_CAP_SECONDS environment variable/),
      ]);
    });

    test('a visibility timeout shorter than one invocation fails: there is no heartbeat to extend it', () => {
      const { app, queue } = withPipeline({ consumerTimeout: 60, batchingWindow: 5, visibilityTimeout: 64 });

      expectRuleErrors(app, [
        error(queue, 'VisibilityTimeout', /.* 64 s, below 6 × 60 s/),
        error(
          queue,
          'RetryBudget',
          /Queue S\/P\/Queue has visibility timeout 64 s, shorter than one invocation of S\/P\/Consumer \(60 s timeout \+ 5 s batching window\)/,
        ),
      ]);
    });
  });

  describe('what cannot be verified', () => {
    function importedSource(options?: CorrectnessOptions) {
      const { app, stack } = newStack();
      const queue = sqs.Queue.fromQueueArn(stack, 'Imported', 'arn:aws:sqs:eu-west-1:123456789012:orders');
      const fn = inlineFunction(stack, 'Fn', { environment: { INBOX_TTL_SECONDS: String(30 * DAY) } });
      fn.addEventSource(new SqsEventSource(queue, { reportBatchItemFailures: true }));
      applyCorrectnessAspects(stack, options);
      return { app, stack, esm: esmOf(fn) };
    }

    test('an imported source queue is an error by default, not a crash', () => {
      const { app, esm } = importedSource();

      const cannot =
        /Cannot verify S\/Fn\/SqsEventSource:.*: its event source \(arn:aws:sqs:eu-west-1:123456789012:orders\) is not a queue defined in this stack\./;
      expectRuleErrors(app, [
        error(esm, 'VisibilityTimeout', cannot),
        error(esm, 'InboxTtl', cannot),
        error(esm, 'DedupeHorizon', cannot),
        error(esm, 'RetryBudget', cannot),
        error(esm, 'QueueSenders', cannot),
      ]);
    });

    test("with { unverifiable: 'warning' } it is a warning and synth succeeds", () => {
      const { app, stack, esm } = importedSource({ unverifiable: 'warning' });
      // The validation report prints warnings to stderr; they are what this test reads, not noise to show.
      const stderr = jest.spyOn(console, 'error').mockImplementation(() => undefined);

      try {
        expect(synthErrors(app)).toEqual([]);
        const annotations = Annotations.fromStack(stack);
        for (const rule of ['VisibilityTimeout', 'InboxTtl']) {
          annotations.hasWarning(
            `/${esm.node.path}`,
            Match.stringLikeRegexp(
              `\\[Correctness/${rule}\\] Cannot verify .* Make sure it is right outside this app\\.`,
            ),
          );
        }
      } finally {
        stderr.mockRestore();
      }
    });

    test('an imported dead-letter queue cannot be verified', () => {
      const { app, stack } = newStack();
      const dlq = sqs.Queue.fromQueueArn(stack, 'ImportedDlq', 'arn:aws:sqs:eu-west-1:123456789012:orders-dlq');
      const queue = new sqs.Queue(stack, 'Queue', { deadLetterQueue: { queue: dlq, maxReceiveCount: 5 } });
      applyCorrectnessAspects(stack);

      expectRuleErrors(app, [
        error(
          queue,
          'DeadLetterQueue',
          /Cannot verify S\/Queue: the dead-letter queue of S\/Queue \(arn:aws:sqs:eu-west-1:123456789012:orders-dlq\) is not a queue defined in this stack/,
        ),
      ]);
    });
  });
});

describe('AlarmDelivery', () => {
  const CLOUDWATCH = new iam.ServicePrincipal('cloudwatch.amazonaws.com');

  interface AlarmTopicProps {
    /** Default true: a customer-managed key on the topic. */
    encrypted?: boolean;
    /** Default true: the topic policy lets CloudWatch publish for this account and the alarm's ARN. */
    publishAllowed?: boolean;
    /** Default ['kms:Decrypt', 'kms:GenerateDataKey*']; [] for no CloudWatch statement in the key policy. */
    keyActions?: string[];
  }

  /** The alarm S/Alarm, notifying `topic`. */
  function alarmNotifying(stack: Stack, topic: sns.ITopic): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(stack, 'Alarm', {
      metric: new cloudwatch.Metric({ namespace: 'Test', metricName: 'Failures' }),
      threshold: 1,
      evaluationPeriods: 1,
    });
    alarm.addAlarmAction(new actions.SnsAction(topic));
    return alarm;
  }

  /** An alarm notifying an encrypted topic whose policies let CloudWatch publish, unless told otherwise. */
  function alarmToTopic(props: AlarmTopicProps = {}) {
    const { app, stack } = newStack();
    const key = props.encrypted === false ? undefined : new kms.Key(stack, 'Key');
    const topic = new sns.Topic(stack, 'Topic', { masterKey: key, enforceSSL: true });
    const alarm = alarmNotifying(stack, topic);
    const account = { 'aws:SourceAccount': stack.account };
    if (props.publishAllowed ?? true) {
      topic.addToResourcePolicy(
        new iam.PolicyStatement({
          principals: [CLOUDWATCH],
          actions: ['sns:Publish'],
          resources: [topic.topicArn],
          conditions: { StringEquals: account, ArnEquals: { 'aws:SourceArn': alarm.alarmArn } },
        }),
      );
    }
    const keyActions = props.keyActions ?? ['kms:Decrypt', 'kms:GenerateDataKey*'];
    if (key !== undefined && keyActions.length > 0) {
      key.addToResourcePolicy(
        new iam.PolicyStatement({
          principals: [CLOUDWATCH],
          actions: keyActions,
          resources: ['*'],
          conditions: { StringEquals: account },
        }),
      );
    }
    applyCorrectnessAspects(stack);
    return { app, stack, topic, alarm, key };
  }

  test('an alarm whose topic and key policies let CloudWatch publish passes', () => {
    const { app } = alarmToTopic();

    expect(synthErrors(app)).toEqual([]);
  });

  test('the real stack passes, and every one of its alarms notifies the topic', () => {
    // A stack ExactlyOnce builds: the probe stack, the mechanism with its neutral fixture.
    const { app, stack } = buildProbeStack({ stackName: 'Real' });

    const errors = synthErrors(app).filter((f) => f.message.startsWith('[Correctness/AlarmDelivery]'));

    expect(errors).toEqual([]);
    const alarms = Object.values(
      app.synth().getStackByName(stack.stackName).template.Resources as Record<
        string,
        { Type: string; Properties: { AlarmActions?: unknown[] } }
      >,
    ).filter((r) => r.Type === 'AWS::CloudWatch::Alarm');
    expect(alarms.length).toBeGreaterThan(20);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toHaveLength(1);
  });

  test('a topic policy with only the TLS Deny (enforceSSL alone) fails, naming the alarm, the topic and the policy', () => {
    const { app, alarm } = alarmToTopic({ publishAllowed: false });

    expectRuleErrors(app, [
      error(
        alarm,
        'AlarmDelivery',
        /Alarm S\/Alarm notifies topic S\/Topic, but CloudWatch could not publish to it: no statement of the topic policy S\/Topic\/Policy allows cloudwatch\.amazonaws\.com sns:Publish for alarm .*/,
      ),
    ]);
  });

  test('an Allow for another alarm only (aws:SourceArn) fails', () => {
    const { app, stack, topic, alarm } = alarmToTopic({ publishAllowed: false });
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [CLOUDWATCH],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: 'other-*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );

    expectRuleErrors(app, [
      error(alarm, 'AlarmDelivery', /.* no statement of the topic policy S\/Topic\/Policy allows/),
    ]);
  });

  test('an Allow for any alarm of this account (aws:SourceArn pattern) passes', () => {
    const { app, stack, topic } = alarmToTopic({ publishAllowed: false });
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [CLOUDWATCH],
        actions: ['sns:Publish'],
        resources: [topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );

    expect(synthErrors(app)).toEqual([]);
  });

  test('a Deny that covers CloudWatch fails even next to the Allow', () => {
    const { app, topic, alarm } = alarmToTopic();
    topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'NoServices',
        effect: iam.Effect.DENY,
        principals: [new iam.AnyPrincipal()],
        actions: ['sns:*'],
        resources: [topic.topicArn],
      }),
    );

    expectRuleErrors(app, [
      error(
        alarm,
        'AlarmDelivery',
        /.* statement NoServices of the topic policy S\/Topic\/Policy denies cloudwatch\.amazonaws\.com sns:Publish/,
      ),
    ]);
  });

  test('a key policy without CloudWatch fails, for Decrypt and for GenerateDataKey*', () => {
    const { app, alarm } = alarmToTopic({ keyActions: [] });

    expectRuleErrors(app, [
      error(
        alarm,
        'AlarmDelivery',
        /.* no statement of the key policy of S\/Key allows cloudwatch\.amazonaws\.com kms:Decrypt .*; no statement of the key policy of S\/Key allows cloudwatch\.amazonaws\.com kms:GenerateDataKey\* /,
      ),
    ]);
  });

  test('a key policy that lets CloudWatch encrypt but not decrypt fails', () => {
    const { app, alarm } = alarmToTopic({ keyActions: ['kms:Encrypt', 'kms:GenerateDataKey*'] });

    expectRuleErrors(app, [
      error(alarm, 'AlarmDelivery', /.* key policy of S\/Key allows cloudwatch\.amazonaws\.com kms:Decrypt /),
    ]);
  });

  test('a topic with no policy of its own and no key passes: the SNS default lets the account publish', () => {
    const { app, stack } = newStack();
    const topic = new sns.Topic(stack, 'Topic');
    alarmNotifying(stack, topic);
    applyCorrectnessAspects(stack);

    expect(synthErrors(app)).toEqual([]);
  });

  test('a topic encrypted with the AWS-managed key fails', () => {
    const { app, stack } = newStack();
    const topic = new sns.Topic(stack, 'Topic', {
      masterKey: kms.Alias.fromAliasName(stack, 'Managed', 'alias/aws/sns'),
    });
    const alarm = alarmNotifying(stack, topic);
    applyCorrectnessAspects(stack);

    expectRuleErrors(app, [error(alarm, 'AlarmDelivery', /.* the AWS-managed key alias\/aws\/sns/)]);
  });

  test('a topic outside the stack cannot be verified', () => {
    const { app, stack } = newStack();
    const topic = sns.Topic.fromTopicArn(stack, 'Imported', 'arn:aws:sns:eu-west-1:123456789012:ops');
    const alarm = alarmNotifying(stack, topic);
    applyCorrectnessAspects(stack);

    expectRuleErrors(app, [
      error(
        alarm,
        'AlarmDelivery',
        /Cannot verify S\/Alarm: .* arn:aws:sns:eu-west-1:123456789012:ops is not an SNS topic of this template/,
      ),
    ]);
  });
});
