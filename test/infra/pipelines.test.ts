import {
  attemptsForBudget,
  FIFO_CRASH_ALLOWANCE,
  honourRetryHint,
  RETRY_BUDGET,
  retryBackoffSeconds,
} from '@exactly-once/runtime/consumer/retry-budget';
import type { Template } from 'aws-cdk-lib/assertions';
import { INBOX_TTL_ATTRIBUTE } from '@exactly-once/runtime/aws/inbox-table';
import { PENDING_OUTBOX_INDEX } from '@exactly-once/runtime/aws/outbox-table';
import type { ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { ENV } from '@exactly-once/runtime/env-names';
import { THING_PK_PREFIX } from '../exactly-once/fixtures/probe-stack-things';
import { PROBE_STACK_CONSUMERS, synthProbeStack } from '../exactly-once/fixtures/probe-stack';
import {
  dynamoDbGrants,
  expectedRoutes,
  pipelineOf as pipelineIn,
  referencedId,
  referencedIds,
  resourceById,
  resourcesOfType,
  roleOfFunction,
  routesOf,
  statementsOfRole,
  tableNamesOf,
  type CfnResource,
} from '../support/template';

/**
 * The messaging half, read from the probe stack's template (the mechanism with a
 * standard and a FIFO probe consumer, its outbox table Things): queues, event source
 * mappings, the relay and sweeper, alarms, dashboard and grants. Everything is
 * found by following references (output -> queue -> mapping -> function,
 * queue -> DLQ), never by logical id, and every limit is computed from the
 * template itself. Per-consumer checks run for every spec of the stack's list.
 */

const CONSUMERS = PROBE_STACK_CONSUMERS;
/** The probe stack's outbox table: its entities and their outbox items. */
const OUTBOX_TABLE = 'Things';

const DAY = 86_400;
const SQS_DEFAULT_RETENTION = 4 * DAY;
const SQS_DEFAULT_VISIBILITY = 30;
const LAMBDA_DEFAULT_TIMEOUT = 3;
const CONSUMER_METRICS = [
  'EffectApplied',
  'OwedProviderCallCompleted',
  'DuplicateSuppressed',
  'StaleEventIgnored',
  'PermanentFailure',
  'ReceiveCount',
];

interface QueueProps {
  FifoQueue?: boolean;
  ContentBasedDeduplication?: boolean;
  DeduplicationScope?: string;
  FifoThroughputLimit?: string;
  MessageRetentionPeriod?: number;
  VisibilityTimeout?: number;
  RedrivePolicy?: { deadLetterTargetArn: unknown; maxReceiveCount: number };
  SqsManagedSseEnabled?: boolean;
  KmsMasterKeyId?: unknown;
}

interface MappingProps {
  EventSourceArn: unknown;
  FunctionName: unknown;
  BatchSize?: number;
  MaximumBatchingWindowInSeconds?: number;
  FunctionResponseTypes?: string[];
  ScalingConfig?: { MaximumConcurrency?: number };
  FilterCriteria?: { Filters: { Pattern: string }[] };
  BisectBatchOnFunctionError?: boolean;
  MaximumRetryAttempts?: number;
  MaximumRecordAgeInSeconds?: number;
  DestinationConfig?: { OnFailure?: { Destination: unknown } };
  StartingPosition?: string;
  ParallelizationFactor?: number;
  MetricsConfig?: { Metrics: string[] };
}

interface FunctionProps {
  Timeout?: number;
  ReservedConcurrentExecutions?: number;
  Environment?: { Variables?: Record<string, unknown> };
  DeadLetterConfig?: { TargetArn: unknown };
}

interface AlarmProps {
  MetricName?: string;
  Namespace?: string;
  Dimensions?: { Name: string; Value: unknown }[];
  ExtendedStatistic?: string;
  EvaluationPeriods?: number;
  Metrics?: {
    Id: string;
    Expression?: string;
    MetricStat?: { Metric: { MetricName: string; Dimensions?: { Name: string; Value: unknown }[] } };
  }[];
  Threshold: number;
  ComparisonOperator: string;
  AlarmActions?: unknown[];
}

let template: Template;
let tables: Record<string, string>;
let resources: Record<string, CfnResource>;

beforeAll(() => {
  const synth = synthProbeStack();
  template = synth.template;
  tables = tableNamesOf(synth.stack);
  resources = (template.toJSON() as { Resources: Record<string, CfnResource> }).Resources;
});

const propsOf = <T>(id: string): T => (resourceById(template, id).Properties ?? {}) as T;
const idsOfType = (type: string) => resourcesOfType(template, type).map(([id]) => id);
const isType = (id: string | undefined, type: string) => id !== undefined && resources[id]?.Type === type;
const envOf = (functionId: string) => propsOf<FunctionProps>(functionId).Environment?.Variables ?? {};
const timeoutOf = (functionId: string) => propsOf<FunctionProps>(functionId).Timeout ?? LAMBDA_DEFAULT_TIMEOUT;
const retentionOf = (queueId: string) => propsOf<QueueProps>(queueId).MessageRetentionPeriod ?? SQS_DEFAULT_RETENTION;
const visibilityOf = (queueId: string) => propsOf<QueueProps>(queueId).VisibilityTimeout ?? SQS_DEFAULT_VISIBILITY;
const tableId = (name: string) => {
  const id = Object.keys(tables).find((k) => tables[k] === name);
  if (id === undefined) throw new Error(`No table ${name}`);
  return id;
};

interface Pipeline {
  mapping: MappingProps;
  queueId: string;
  dlqId: string;
  functionId: string;
}

/** The SQS-sourced mappings, each with its queue, the queue's DLQ and the consumer function. */
function sqsPipelines(): Pipeline[] {
  return resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')
    .map(([, m]) => m.Properties as unknown as MappingProps)
    .filter((m) => isType(referencedId(m.EventSourceArn), 'AWS::SQS::Queue'))
    .map((mapping) => {
      const queueId = referencedId(mapping.EventSourceArn) as string;
      const dlqId = referencedId(propsOf<QueueProps>(queueId).RedrivePolicy?.deadLetterTargetArn);
      if (dlqId === undefined) throw new Error(`Queue ${queueId} has no dead-letter queue`);
      return { mapping, queueId, dlqId, functionId: referencedId(mapping.FunctionName) as string };
    });
}

/** A consumer's pipeline, found from its stack outputs. */
function pipeline(name: string): Pipeline {
  const found = pipelineIn(template, name);
  return { ...found, mapping: found.mapping as unknown as MappingProps };
}

const specOf = (name: string): ConsumerSpec => {
  const spec = CONSUMERS.find((c) => c.name === name);
  if (spec === undefined) throw new Error(`No consumer ${name}`);
  return spec;
};
const isFifo = (spec: ConsumerSpec) => spec.fifo;
const isStandard = (spec: ConsumerSpec) => !spec.fifo;

/**
 * test.each over the names of the consumers `which` selects. A list with none
 * of them (a fork with no FIFO consumer) skips the test instead of failing on
 * an empty table.
 */
function eachConsumer(which: (spec: ConsumerSpec) => boolean = () => true) {
  const names: string[] = CONSUMERS.filter(which).map((c) => c.name);
  return (names.length > 0 ? test : test.skip).each(names.length > 0 ? names : ['(none)']);
}

function streamMapping(): { mapping: MappingProps; functionId: string } {
  const mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')
    .map(([, m]) => m.Properties as unknown as MappingProps)
    .filter((m) => (m.EventSourceArn as { 'Fn::GetAtt'?: string[] })['Fn::GetAtt']?.[1] === 'StreamArn');
  expect(mappings).toHaveLength(1);
  return { mapping: mappings[0], functionId: referencedId(mappings[0].FunctionName) as string };
}

/** The one function whose environment has `variable` (the relay has no OUTBOX_SWEEP_AGE_SECONDS, the sweeper has it). */
function functionWithEnv(variable: string): string {
  const ids = idsOfType('AWS::Lambda::Function').filter((id) => envOf(id)[variable] !== undefined);
  expect(ids).toHaveLength(1);
  return ids[0];
}
const sweeperId = () => functionWithEnv('OUTBOX_SWEEP_AGE_SECONDS');

/** Every queue something dead-letters into: redrive targets, on-failure destinations, async-invocation and rule DLQs. */
function deadLetterQueueIds(): Set<string> {
  const ids = new Set<string>();
  const add = (value: unknown) => {
    const id = referencedId(value);
    if (isType(id, 'AWS::SQS::Queue')) ids.add(id as string);
  };
  for (const id of idsOfType('AWS::SQS::Queue')) add(propsOf<QueueProps>(id).RedrivePolicy?.deadLetterTargetArn);
  for (const [, m] of resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')) {
    add((m.Properties as unknown as MappingProps).DestinationConfig?.OnFailure?.Destination);
  }
  for (const id of idsOfType('AWS::Lambda::Function')) add(propsOf<FunctionProps>(id).DeadLetterConfig?.TargetArn);
  for (const id of idsOfType('AWS::Events::Rule')) {
    for (const target of propsOf<{ Targets: { DeadLetterConfig?: { Arn: unknown } }[] }>(id).Targets)
      add(target.DeadLetterConfig?.Arn);
  }
  return ids;
}

const alarms = () =>
  resourcesOfType(template, 'AWS::CloudWatch::Alarm').map(([id, a]) => ({
    id,
    ...(a.Properties as unknown as AlarmProps),
  }));

/** Alarms on `metric` whose dimension `dimension` refers to `targetId` (or equals it, for literal values). */
function alarmsOn(metric: string, dimension: string, target: string) {
  return alarms().filter(
    (a) =>
      a.MetricName === metric &&
      (a.Dimensions ?? []).some(
        (d) => d.Name === dimension && (referencedId(d.Value) === target || d.Value === target),
      ),
  );
}

function breaches(alarm: AlarmProps, value: number): boolean {
  switch (alarm.ComparisonOperator) {
    case 'GreaterThanOrEqualToThreshold':
      return value >= alarm.Threshold;
    case 'GreaterThanThreshold':
      return value > alarm.Threshold;
    default:
      throw new Error(`unexpected operator ${alarm.ComparisonOperator}`);
  }
}

function onlyAlarm(metric: string, dimension: string, target: string): AlarmProps {
  const found = alarmsOn(metric, dimension, target);
  expect(found.map((a) => a.id)).toHaveLength(1);
  return found[0];
}

// ---------------------------------------------------------------- queues

describe('queues', () => {
  eachConsumer(isFifo)(
    '%s (FIFO): a FIFO queue with the high-throughput settings, content dedup off (the relay sets eventId), and a FIFO DLQ',
    (name) => {
      const { queueId, dlqId, functionId } = pipeline(name);

      expect(propsOf<QueueProps>(queueId)).toMatchObject({
        FifoQueue: true,
        ContentBasedDeduplication: false,
        DeduplicationScope: 'messageGroup',
        FifoThroughputLimit: 'perMessageGroupId',
      });
      expect(propsOf<QueueProps>(dlqId).FifoQueue).toBe(true);
      expect(referencedId(envOf(functionId)[ENV.queueUrl])).toBe(queueId);
      expect(referencedId(envOf(functionId)[ENV.deadLetterQueueUrl])).toBe(dlqId);
    },
  );

  eachConsumer(isStandard)('%s (standard): a standard queue with a standard DLQ', (name) => {
    const { queueId, dlqId, functionId } = pipeline(name);

    expect(propsOf<QueueProps>(queueId).FifoQueue).toBeUndefined();
    expect(propsOf<QueueProps>(dlqId).FifoQueue).toBeUndefined();
    expect(referencedId(envOf(functionId)[ENV.queueUrl])).toBe(queueId);
    expect(referencedId(envOf(functionId)[ENV.deadLetterQueueUrl])).toBe(dlqId);
  });

  eachConsumer()('%s: maxReceiveCount >= 5; DLQ keeps messages 14 days, longer than the source', (name) => {
    const { queueId, dlqId } = pipeline(name);

    expect(propsOf<QueueProps>(queueId).RedrivePolicy?.maxReceiveCount).toBeGreaterThanOrEqual(5);
    expect(retentionOf(dlqId)).toBe(14 * DAY);
    expect(retentionOf(dlqId)).toBeGreaterThan(retentionOf(queueId));
  });

  eachConsumer()(
    "%s: visibility >= 6 x consumer timeout + batching window, so no try outlives its message's visibility (no heartbeat needed)",
    (name) => {
      const { queueId, functionId, mapping } = pipeline(name);
      const window = mapping.MaximumBatchingWindowInSeconds ?? 0;
      const required = 6 * timeoutOf(functionId) + window;

      expect(visibilityOf(queueId)).toBeGreaterThanOrEqual(required);
      // Lambda stops an invocation at its timeout: one invocation ends well before the visibility lapses.
      expect(timeoutOf(functionId) + window).toBeLessThan(visibilityOf(queueId));
      // The old heartbeat's period (visibility / 2) was longer than the function could ever run.
      expect(visibilityOf(queueId) / 2).toBeGreaterThan(timeoutOf(functionId));
      expect(envOf(functionId).VISIBILITY_TIMEOUT_SECONDS).toBeUndefined();
    },
  );

  describe('retry budget, from the deployed numbers', () => {
    /** Sum over tries 1..tries-1 of the guaranteed wait floor(min(cap, base * 2^(n-1)) / 2), computed here on its own. */
    const guaranteed = (tries: number, base: number, cap: number) =>
      Array.from({ length: tries - 1 }, (_, i) => Math.floor(Math.min(cap, base * 2 ** i) / 2)).reduce(
        (a, b) => a + b,
        0,
      );
    const ceilings = (tries: number, base: number, cap: number) =>
      Array.from({ length: tries - 1 }, (_, i) => Math.min(cap, base * 2 ** i)).reduce((a, b) => a + b, 0);

    eachConsumer(isStandard)(
      '%s (standard): 14 receives, base 2 s, cap 300 s: 1005 s (> 15 min) of backoff guaranteed before the DLQ, 2010 s at most',
      (name) => {
        const { queueId, functionId } = pipeline(name);
        const env = envOf(functionId);
        const receives = propsOf<QueueProps>(queueId).RedrivePolicy?.maxReceiveCount ?? 0;
        const [base, cap] = [Number(env.BACKOFF_BASE_SECONDS), Number(env.BACKOFF_CAP_SECONDS)];

        expect({ receives, base, cap }).toEqual({ receives: 14, base: 2, cap: 300 });
        expect(guaranteed(receives, base, cap)).toBe(1005);
        expect(guaranteed(receives, base, cap)).toBeGreaterThanOrEqual(15 * 60);
        expect(guaranteed(receives - 1, base, cap)).toBeLessThan(15 * 60); // the fewest receives that do
        expect(ceilings(receives, base, cap)).toBe(2010);
        expect(env.RETRY_MAX_ATTEMPTS).toBeUndefined(); // SQS's redrive counts; the consumer keeps no count
      },
    );

    eachConsumer(isFifo)(
      '%s (FIFO): the consumer dead-letters after 14 tries of its own (1005 s guaranteed); the queue backstop is 14 x batch size receives + a crash allowance',
      (name) => {
        const { queueId, functionId, mapping } = pipeline(name);
        const env = envOf(functionId);
        const tries = Number(env.RETRY_MAX_ATTEMPTS);
        const [base, cap] = [Number(env.BACKOFF_BASE_SECONDS), Number(env.BACKOFF_CAP_SECONDS)];
        const receives = propsOf<QueueProps>(queueId).RedrivePolicy?.maxReceiveCount ?? 0;
        const batchSize = mapping.BatchSize ?? 10;

        expect({ tries, base, cap, batchSize }).toEqual({
          tries: 14,
          base: 2,
          cap: 300,
          batchSize: specOf(name).batchSize,
        });
        expect(guaranteed(tries, base, cap)).toBeGreaterThanOrEqual(15 * 60);
        // A record behind up to batchSize - 1 failing records is received, untried, at most once per their tries;
        // crashes and kills (a receive, no try) get an allowance on top.
        expect(receives).toBe(tries * batchSize + FIFO_CRASH_ALLOWANCE);
        expect(receives).toBeLessThanOrEqual(1000); // SQS's largest maxReceiveCount
      },
    );

    eachConsumer()('%s: every wait fits SQS (cap <= 5 min <= 12 h visibility limit)', (name) => {
      const { functionId } = pipeline(name);

      expect(Number(envOf(functionId).BACKOFF_CAP_SECONDS)).toBeLessThanOrEqual(300);
      expect(Number(envOf(functionId).BACKOFF_BASE_SECONDS)).toBeGreaterThanOrEqual(1);
    });
  });

  test('every queue is encrypted at rest', () => {
    const queues = idsOfType('AWS::SQS::Queue');

    expect(queues.length).toBeGreaterThanOrEqual(5);
    for (const id of queues) {
      const p = propsOf<QueueProps>(id);
      expect({ id, encrypted: p.SqsManagedSseEnabled === true || p.KmsMasterKeyId !== undefined }).toEqual({
        id,
        encrypted: true,
      });
    }
  });

  test('every queue has a policy denying any request not over TLS', () => {
    const policies = resourcesOfType(template, 'AWS::SQS::QueuePolicy').map(
      ([, p]) =>
        p.Properties as {
          Queues: unknown[];
          PolicyDocument: {
            Statement: {
              Effect: string;
              Action: unknown;
              Principal: unknown;
              Condition?: unknown;
              Resource: unknown;
            }[];
          };
        },
    );

    for (const queueId of idsOfType('AWS::SQS::Queue')) {
      const statements = policies
        .filter((p) => referencedIds(p.Queues).includes(queueId))
        .flatMap((p) => p.PolicyDocument.Statement);
      const tlsOnly = statements.filter(
        (s) =>
          s.Effect === 'Deny' &&
          s.Action === 'sqs:*' &&
          JSON.stringify(s.Principal) === JSON.stringify({ AWS: '*' }) &&
          JSON.stringify(s.Condition) === JSON.stringify({ Bool: { 'aws:SecureTransport': 'false' } }) &&
          referencedId(s.Resource) === queueId,
      );
      expect({ queueId, tlsOnly: tlsOnly.length }).toEqual({ queueId, tlsOnly: 1 });
    }
  });

  test('every queue is either a source with a dead-letter queue or itself a dead-letter queue', () => {
    const dlqs = deadLetterQueueIds();

    for (const id of idsOfType('AWS::SQS::Queue')) {
      expect({ id, covered: dlqs.has(id) || propsOf<QueueProps>(id).RedrivePolicy !== undefined }).toEqual({
        id,
        covered: true,
      });
    }
  });
});

// ---------------------------------------------------------------- consumers

describe('consumer event sources', () => {
  test('one SQS-sourced mapping per consumer on the list, each on its own queue', () => {
    const queues = CONSUMERS.map((c) => pipeline(c.name).queueId);

    expect(
      sqsPipelines()
        .map((p) => p.queueId)
        .sort(),
    ).toEqual([...queues].sort());
    expect(new Set(queues).size).toBe(CONSUMERS.length);
  });

  test("every event source mapping, the stream relay's included, publishes its own metrics (EventCount)", () => {
    const mappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').map(
      ([id, m]) => [id, (m.Properties as unknown as MappingProps).MetricsConfig] as const,
    );

    expect(mappings.length).toBe(CONSUMERS.length + 1);
    for (const [id, metrics] of mappings) expect({ id, metrics }).toEqual({ id, metrics: { Metrics: ['EventCount'] } });
  });

  eachConsumer()("%s: reports batch item failures, with its spec's batch size and maximum concurrency", (name) => {
    const { mapping } = pipeline(name);

    expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(mapping.BatchSize).toBe(specOf(name).batchSize);
    expect(mapping.ScalingConfig?.MaximumConcurrency).toBe(specOf(name).maxConcurrency);
  });

  eachConsumer()("%s: waits up to its spec's batching window to fill a batch (FIFO: none)", (name) => {
    const { batchingWindowSeconds } = specOf(name);

    expect(pipeline(name).mapping.MaximumBatchingWindowInSeconds).toBe(
      batchingWindowSeconds > 0 ? batchingWindowSeconds : undefined,
    );
  });

  eachConsumer()('%s: inbox claims outlive source retention + DLQ retention (redrive time on top)', (name) => {
    const { queueId, dlqId, functionId } = pipeline(name);

    expect(Number(envOf(functionId).INBOX_TTL_SECONDS)).toBeGreaterThan(retentionOf(queueId) + retentionOf(dlqId));
  });

  test('the Effects table, where every consumer claims and applies, expires claims by the attribute the ledgers write', () => {
    for (const { functionId } of sqsPipelines())
      expect(referencedId(envOf(functionId).EFFECTS_TABLE_NAME)).toBe(tableId('Effects'));

    expect(propsOf<{ TimeToLiveSpecification?: unknown }>(tableId('Effects')).TimeToLiveSpecification).toEqual({
      AttributeName: INBOX_TTL_ATTRIBUTE,
      Enabled: true,
    });
    expect(INBOX_TTL_ATTRIBUTE).toBe('expiresAt');
  });
});

// ---------------------------------------------------------------- relay and sweeper

describe('outbox relay', () => {
  test('reads the outbox table stream from the trim horizon', () => {
    const { mapping } = streamMapping();

    expect(referencedId(mapping.EventSourceArn)).toBe(tableId(OUTBOX_TABLE));
    expect(mapping.StartingPosition).toBe('TRIM_HORIZON');
  });

  test('its stream filter pattern is eventName = INSERT and NewImage.entity.S = OUTBOX', () => {
    const filters = streamMapping().mapping.FilterCriteria?.Filters ?? [];

    expect(filters.map((f) => JSON.parse(f.Pattern))).toEqual([
      { eventName: ['INSERT'], dynamodb: { NewImage: { entity: { S: ['OUTBOX'] } } } },
    ]);
  });

  test('bisects on error, retries a bounded number of times for a bounded age, then sends to an on-failure queue', () => {
    const { mapping } = streamMapping();

    expect(mapping.BisectBatchOnFunctionError).toBe(true);
    expect(mapping.MaximumRetryAttempts).toBeGreaterThanOrEqual(0);
    expect(mapping.MaximumRetryAttempts).toBeLessThanOrEqual(10);
    expect(mapping.MaximumRecordAgeInSeconds).toBeGreaterThanOrEqual(60);
    // Under the stream's 24 h retention, so a record is sent to the on-failure queue before it is trimmed.
    expect(mapping.MaximumRecordAgeInSeconds).toBeLessThan(DAY);
    expect(isType(referencedId(mapping.DestinationConfig?.OnFailure?.Destination), 'AWS::SQS::Queue')).toBe(true);
  });

  test('reports batch item failures, one batch per shard at a time (order per entity)', () => {
    const { mapping } = streamMapping();

    expect(mapping.FunctionResponseTypes).toEqual(['ReportBatchItemFailures']);
    expect(mapping.ParallelizationFactor).toBe(1);
  });

  test("relay and sweeper route by CONSUMER_ROUTES: one route per consumer, with its queue, its queue's type and the event types it takes", () => {
    for (const functionId of [streamMapping().functionId, sweeperId()]) {
      expect(routesOf(template, functionId)).toEqual(expectedRoutes(template, CONSUMERS));
      expect(referencedId(envOf(functionId)[ENV.outboxTable])).toBe(tableId(OUTBOX_TABLE));
      // An entity's outbox items live in its partition: the relay and the sweeper mark them there.
      expect(envOf(functionId)[ENV.outboxEntityPartitionPrefix]).toBe(THING_PK_PREFIX);
    }
  });
});

describe('outbox sweeper', () => {
  test('a schedule rule invokes it (with retries and a DLQ) more often than its sweep age', () => {
    const rules = resourcesOfType(template, 'AWS::Events::Rule')
      .map(([id, r]) => ({
        id,
        ...(r.Properties as { ScheduleExpression?: string; Targets: { Arn: unknown; DeadLetterConfig?: unknown }[] }),
      }))
      .filter((r) => r.Targets.some((t) => referencedId(t.Arn) === sweeperId()));

    expect(rules).toHaveLength(1);
    const [, amount, unit] =
      /^rate\((\d+) (minute|minutes|hour|hours)\)$/.exec(String(rules[0].ScheduleExpression)) ?? [];
    const periodSeconds = Number(amount) * (unit.startsWith('minute') ? 60 : 3_600);
    expect(periodSeconds).toBeLessThanOrEqual(Number(envOf(sweeperId()).OUTBOX_SWEEP_AGE_SECONDS));
    expect(rules[0].Targets[0].DeadLetterConfig).toBeDefined();

    const permissions = resourcesOfType(template, 'AWS::Lambda::Permission')
      .map(([, p]) => p.Properties as { FunctionName: unknown; Principal: string; SourceArn: unknown })
      .filter((p) => referencedId(p.FunctionName) === sweeperId() && p.Principal === 'events.amazonaws.com');
    expect(permissions.map((p) => referencedId(p.SourceArn))).toEqual([rules[0].id]);
  });

  test('reserves no concurrency: an overlapping sweep only republishes what consumers dedupe on eventId', () => {
    expect(propsOf<FunctionProps>(sweeperId()).ReservedConcurrentExecutions).toBeUndefined();
  });
});

// ---------------------------------------------------------------- alarms and dashboard

describe('alarms', () => {
  const topicId = () => {
    const topics = idsOfType('AWS::SNS::Topic');
    expect(topics).toHaveLength(1);
    return topics[0];
  };

  test('every alarm notifies the one alarm topic', () => {
    expect(alarms().length).toBeGreaterThan(0);
    for (const alarm of alarms())
      expect({ id: alarm.id, actions: referencedIds(alarm.AlarmActions) }).toEqual({
        id: alarm.id,
        actions: [topicId()],
      });
  });

  test('every dead-letter queue alarms as soon as it holds a message, and on its oldest message well before it is deleted', () => {
    const dlqs = [...deadLetterQueueIds()];

    // Every consumer's DLQ, the relay's on-failure queue, the sweeper's async DLQ.
    expect(dlqs).toEqual(expect.arrayContaining(CONSUMERS.map((c) => pipeline(c.name).dlqId)));
    expect(dlqs.length).toBeGreaterThanOrEqual(CONSUMERS.length + 2);
    for (const dlq of dlqs) {
      const notEmpty = onlyAlarm('ApproximateNumberOfMessagesVisible', 'QueueName', dlq);
      expect([breaches(notEmpty, 1), breaches(notEmpty, 0)]).toEqual([true, false]);
      const oldest = onlyAlarm('ApproximateAgeOfOldestMessage', 'QueueName', dlq);
      expect(breaches(oldest, retentionOf(dlq) - DAY)).toBe(true);
    }
  });

  test('the relay on-failure queue is among the alarmed dead-letter queues', () => {
    const failureQueue = referencedId(streamMapping().mapping.DestinationConfig?.OnFailure?.Destination) as string;

    expect(alarmsOn('ApproximateNumberOfMessagesVisible', 'QueueName', failureQueue)).toHaveLength(1);
  });

  test.each([...CONSUMERS])(
    '$name source queue: alarms on an oldest message older than the longest ordinary retry, never at it',
    (spec) => {
      const { queueId } = pipeline(spec.name);
      // One failed try and its wait: the batching window, a try held for the whole visibility timeout
      // (a crash), then the longest backoff there is (the cap, a provider's Retry-After included).
      const longestWait = honourRetryHint(
        retryBackoffSeconds(attemptsForBudget(RETRY_BUDGET), RETRY_BUDGET, () => 0.999_999),
        Number.MAX_SAFE_INTEGER,
        RETRY_BUDGET,
      );
      const ordinaryRetryAge = spec.batchingWindowSeconds + visibilityOf(queueId) + longestWait;

      const alarm = onlyAlarm('ApproximateAgeOfOldestMessage', 'QueueName', queueId);
      expect(breaches(alarm, ordinaryRetryAge)).toBe(false);
      expect(breaches(alarm, ordinaryRetryAge + 60)).toBe(true);
    },
  );

  eachConsumer()(
    "%s: alarms when half of what its mapping delivers fails for 15 minutes (the mapping's own metrics)",
    (name) => {
      const { mappingId } = pipelineIn(template, name);
      const onItsMapping = (metricName: string) => (a: AlarmProps) =>
        (a.Metrics ?? []).some(
          (m) =>
            m.MetricStat?.Metric.MetricName === metricName &&
            (m.MetricStat.Metric.Dimensions ?? []).some(
              (d) => d.Name === 'EventSourceMappingUUID' && referencedId(d.Value) === mappingId,
            ),
        );

      const found = alarms().filter(
        (a) => onItsMapping('InvokedEventCount')(a) && onItsMapping('FailedInvokeEventCount')(a),
      );

      expect(found).toHaveLength(1);
      expect(found[0].Metrics?.find((m) => m.Expression !== undefined)?.Expression).toBe(
        'IF(invoked > 0, failed / invoked, 0)',
      );
      expect(found[0].EvaluationPeriods).toBe(3);
      expect(breaches(found[0], 0.5)).toBe(true);
      expect(breaches(found[0], 0.4)).toBe(false);
    },
  );

  eachConsumer()('%s: alarms when its p99 duration reaches 80 %% of its record deadline', (name) => {
    const { functionId } = pipeline(name);
    const timeoutMs = propsOf<{ Timeout: number }>(functionId).Timeout * 1000;
    const deadlineMs = timeoutMs - Math.min(5_000, timeoutMs / 5);

    const alarm = onlyAlarm('Duration', 'FunctionName', functionId);

    expect(alarm.ExtendedStatistic).toBe('p99');
    expect(alarm.EvaluationPeriods).toBe(3);
    expect(breaches(alarm, 0.8 * deadlineMs)).toBe(true);
    expect(breaches(alarm, 0.8 * deadlineMs - 1)).toBe(false);
  });

  test('relay: alarms on the first record its stream mapping dropped (neither relayed nor handed to its on-failure queue)', () => {
    const [[mappingId]] = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').filter(
      ([, m]) =>
        ((m.Properties as { EventSourceArn: { 'Fn::GetAtt'?: string[] } }).EventSourceArn['Fn::GetAtt'] ?? [])[1] ===
        'StreamArn',
    );

    const alarm = onlyAlarm('DroppedEventCount', 'EventSourceMappingUUID', mappingId);

    expect(alarm.Namespace).toBe('AWS/Lambda');
    expect(breaches(alarm, 1)).toBe(true);
  });

  test('relay iterator age alarms long before records reach their maximum age', () => {
    const { mapping, functionId } = streamMapping();

    const alarm = onlyAlarm('IteratorAge', 'FunctionName', functionId);
    expect(alarm.Namespace).toBe('AWS/Lambda');
    expect(breaches(alarm, (mapping.MaximumRecordAgeInSeconds ?? DAY) * 1000 * 0.5)).toBe(true);
  });

  test("the oldest undispatched outbox item alarms on the sweeper's own metric, after the sweep age", () => {
    const env = envOf(sweeperId());
    const found = alarms().filter((a) => a.MetricName === 'OldestUndispatchedOutboxAgeSeconds');

    expect(found).toHaveLength(1);
    // The namespace and the service dimension Powertools puts on the sweeper's metric.
    expect(found[0].Namespace).toBe(env.POWERTOOLS_METRICS_NAMESPACE);
    expect(found[0].Dimensions).toEqual([{ Name: 'service', Value: env.POWERTOOLS_SERVICE_NAME }]);
    const sweepAge = Number(env.OUTBOX_SWEEP_AGE_SECONDS);
    expect(breaches(found[0], sweepAge)).toBe(false);
    expect(breaches(found[0], 4 * sweepAge)).toBe(true);
  });

  test('every function alarms on its errors and its throttles', () => {
    const functions = idsOfType('AWS::Lambda::Function');

    // The relay, the sweeper, one per consumer, and the API's producer.
    expect(functions.length).toBeGreaterThanOrEqual(CONSUMERS.length + 3);
    for (const fn of functions) {
      for (const metric of ['Errors', 'Throttles']) {
        const alarm = onlyAlarm(metric, 'FunctionName', fn);
        expect({ fn, metric, namespace: alarm.Namespace, onFirst: breaches(alarm, 1) }).toEqual({
          fn,
          metric,
          namespace: 'AWS/Lambda',
          onFirst: true,
        });
      }
    }
  });

  test('the API alarms on any 5xx', () => {
    const [[, api]] = resourcesOfType(template, 'AWS::ApiGateway::RestApi');
    const name = (api.Properties as { Name: string }).Name;

    const alarm = onlyAlarm('5XXError', 'ApiName', name);
    expect(alarm.Namespace).toBe('AWS/ApiGateway');
    expect(breaches(alarm, 1)).toBe(true);
  });

  test('the topic is encrypted with a customer key that CloudWatch may use', () => {
    const keyId = referencedId(propsOf<{ KmsMasterKeyId?: unknown }>(topicId()).KmsMasterKeyId);

    expect(isType(keyId, 'AWS::KMS::Key')).toBe(true);
    const key = propsOf<{
      EnableKeyRotation?: boolean;
      KeyPolicy: { Statement: { Effect: string; Principal?: { Service?: string }; Action: string | string[] }[] };
    }>(keyId as string);
    expect(key.EnableKeyRotation).toBe(true);
    const forCloudWatch = key.KeyPolicy.Statement.filter(
      (s) => s.Effect === 'Allow' && s.Principal?.Service === 'cloudwatch.amazonaws.com',
    ).flatMap((s) => s.Action);
    expect(forCloudWatch).toEqual(expect.arrayContaining(['kms:Decrypt', 'kms:GenerateDataKey*']));
  });

  test('no e-mail subscription unless alarmEmail is configured', () => {
    template.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  test('with context alarmEmail, the topic gets that e-mail subscription', () => {
    const withEmail = synthProbeStack({ settings: { alarmEmail: 'ops@example.com' } }).template;

    const subscriptions = resourcesOfType(withEmail, 'AWS::SNS::Subscription').map(
      ([, s]) => s.Properties as Record<string, unknown>,
    );
    const [topic] = resourcesOfType(withEmail, 'AWS::SNS::Topic');
    expect(subscriptions).toEqual([{ Protocol: 'email', Endpoint: 'ops@example.com', TopicArn: { Ref: topic[0] } }]);
  });
});

describe('dashboard', () => {
  type Widget = {
    properties: {
      title?: string;
      metrics?: unknown[][];
      annotations?: { horizontal?: { value: number; label: string }[] };
    };
  };
  /** The dashboard's widgets, from its body as JSON (each token, a region or a mapping id, as 'us-east-1'). */
  function dashboardWidgets(): Widget[] {
    const [[, dashboard]] = resourcesOfType(template, 'AWS::CloudWatch::Dashboard');
    const body = (dashboard.Properties as { DashboardBody: { 'Fn::Join': [string, unknown[]] } }).DashboardBody[
      'Fn::Join'
    ][1]
      .map((part) => (typeof part === 'string' ? part : 'us-east-1'))
      .join('');
    return (JSON.parse(body) as { widgets: Widget[] }).widgets;
  }
  const dashboardMetrics = (): unknown[][] => dashboardWidgets().flatMap((w) => w.properties.metrics ?? []);

  eachConsumer()('%s: its p99 duration is drawn against its record deadline and its visibility timeout', (name) => {
    const { functionId, queueId } = pipeline(name);
    const timeoutMs = propsOf<{ Timeout: number }>(functionId).Timeout * 1000;
    const widgets = dashboardWidgets();

    const chart = widgets.find((w) => w.properties.title?.startsWith(`${name}: duration p99`));

    expect(chart?.properties.annotations?.horizontal).toEqual([
      expect.objectContaining({ value: timeoutMs - Math.min(5_000, timeoutMs / 5), label: 'record deadline' }),
      expect.objectContaining({ value: visibilityOf(queueId) * 1000, label: 'visibility timeout' }),
    ]);
  });

  test.each(CONSUMER_METRICS)('graphs %s for each consumer, as the consumers emit it', (metricName) => {
    const metrics = dashboardMetrics();

    for (const { name: consumer } of CONSUMERS) {
      const env = envOf(pipeline(consumer).functionId);
      const match = metrics.find((m) => {
        const [namespace, name, ...rest] = m;
        const dims = rest.filter((x) => typeof x === 'string') as string[];
        const pairs = Object.fromEntries(
          Array.from({ length: dims.length / 2 }, (_, i) => [dims[2 * i], dims[2 * i + 1]]),
        );
        return (
          namespace === env.POWERTOOLS_METRICS_NAMESPACE &&
          name === metricName &&
          pairs.consumer === consumer &&
          pairs.service === env.POWERTOOLS_SERVICE_NAME
        );
      });
      expect({ consumer, metricName, found: match !== undefined }).toEqual({ consumer, metricName, found: true });
    }
  });
});

describe('code version', () => {
  test("every function's CODE_VERSION is its bundle's asset hash, so a DLQ copy says which code wrote it", () => {
    const ids = idsOfType('AWS::Lambda::Function').filter((id) => envOf(id).CODE_VERSION !== undefined);

    expect(ids.length).toBeGreaterThanOrEqual(CONSUMERS.length + 2);
    for (const id of ids) {
      const key = (propsOf<{ Code: { S3Key?: string } }>(id).Code.S3Key ?? '').replace(/\.zip$/, '');
      expect({ id, codeVersion: envOf(id).CODE_VERSION }).toEqual({ id, codeVersion: key.slice(0, 12) });
    }
    for (const { name } of CONSUMERS) expect(envOf(pipeline(name).functionId).CODE_VERSION).toMatch(/^[0-9a-f]{12}$/);
  });
});

// ---------------------------------------------------------------- grants

describe('least privilege', () => {
  const sqsResources = (functionId: string, action: string) =>
    statementsOfRole(template, roleOfFunction(template, functionId))
      .filter(
        (s) =>
          s.Effect === 'Allow' && (s.Action.includes(action) || s.Action.includes('sqs:*') || s.Action.includes('*')),
      )
      .flatMap((s) => s.Resource.map((r) => (r === '*' ? '*' : referencedId(r))))
      .sort();

  eachConsumer()('%s consumer: only PutItem/UpdateItem on Effects and UpdateItem on ProviderLog', (name) => {
    const { functionId } = pipeline(name);

    expect(dynamoDbGrants(template, roleOfFunction(template, functionId), tables)).toEqual({
      Effects: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
      ProviderLog: ['dynamodb:UpdateItem'],
    });
  });

  eachConsumer()('%s consumer: sends only to its own DLQ, changes visibility only on its own queue', (name) => {
    const { functionId, queueId, dlqId } = pipeline(name);

    expect(sqsResources(functionId, 'sqs:SendMessage')).toEqual([dlqId]);
    expect(sqsResources(functionId, 'sqs:ChangeMessageVisibility')).toEqual([queueId]);
  });

  test("relay and sweeper may send to every consumer's queue, and to no consumer's dead-letter queue", () => {
    for (const functionId of [streamMapping().functionId, sweeperId()]) {
      const targets = sqsResources(functionId, 'sqs:SendMessage');
      expect(targets).toEqual(expect.arrayContaining(CONSUMERS.map((c) => pipeline(c.name).queueId)));
      for (const { name } of CONSUMERS) expect(targets).not.toContain(pipeline(name).dlqId);
      expect(targets).not.toContain('*');
    }
  });

  test("the relay reads the outbox table's stream and only updates its items (the dispatch mark)", () => {
    const grants = dynamoDbGrants(template, roleOfFunction(template, streamMapping().functionId), tables);

    expect(grants[OUTBOX_TABLE]).toEqual(['dynamodb:UpdateItem']);
    expect(grants[`${OUTBOX_TABLE}(stream)`]).toEqual([
      'dynamodb:DescribeStream',
      'dynamodb:GetRecords',
      'dynamodb:GetShardIterator',
    ]);
    expect(Object.keys(grants).sort()).toEqual(['*', OUTBOX_TABLE, `${OUTBOX_TABLE}(stream)`]);
    expect(grants['*']).toEqual(['dynamodb:ListStreams']);
  });

  test('the sweeper queries the pendingOutbox index only, re-reads its candidates (BatchGetItem) and only updates outbox table items', () => {
    const grants = dynamoDbGrants(template, roleOfFunction(template, sweeperId()), tables);

    expect(grants).toEqual({
      [OUTBOX_TABLE]: ['dynamodb:BatchGetItem', 'dynamodb:UpdateItem'],
      [`${OUTBOX_TABLE}/index/${PENDING_OUTBOX_INDEX}`]: ['dynamodb:Query'],
    });
  });
});

describe('authenticated channel', () => {
  /** The Deny statements on a queue's policies that name who may still send. */
  function sendDenials(source: Template, queueId: string): { Condition?: Record<string, Record<string, unknown>> }[] {
    return resourcesOfType(source, 'AWS::SQS::QueuePolicy')
      .map(([, policy]) => policy.Properties as { Queues: unknown[]; PolicyDocument: { Statement: unknown[] } })
      .filter((policy) => policy.Queues.some((q) => referencedId(q) === queueId))
      .flatMap((policy) => policy.PolicyDocument.Statement as Record<string, unknown>[])
      .filter(
        (s) => s.Effect === 'Deny' && s.Action === 'sqs:SendMessage' && (s.Principal as { AWS?: string }).AWS === '*',
      );
  }
  const allowedSenders = (source: Template, queueId: string) =>
    sendDenials(source, queueId).flatMap((s) => {
      const arns = s.Condition?.ArnNotEquals?.['aws:PrincipalArn'];
      return (Array.isArray(arns) ? arns : []).map((arn) => referencedId(arn) ?? arn);
    });

  test.each(CONSUMERS.map((spec) => [spec.name]))(
    "%s: its queue denies sqs:SendMessage to every principal but the relay's and the sweeper's roles",
    (name) => {
      const { queueId } = pipelineIn(template, name);

      const senders = allowedSenders(template, queueId);

      expect(senders.sort()).toEqual(
        [roleOfFunction(template, streamMapping().functionId), roleOfFunction(template, sweeperId())].sort(),
      );
    },
  );

  test('an operator role given with -c operatorRoleArns may send too (the DLQ tool redrives as it)', () => {
    const operator = 'arn:aws:iam::123456789012:role/DlqOperator';
    const withOperator = synthProbeStack({ settings: { operatorRoleArns: [operator] } }).template;

    const senders = allowedSenders(withOperator, pipelineIn(withOperator, CONSUMERS[0].name).queueId);

    expect(senders).toContain(operator);
    expect(senders).toHaveLength(3);
  });

  test.each(CONSUMERS.map((spec) => [spec.name]))(
    "%s: its DLQ denies sqs:SendMessage to every principal but its consumer's role, and the operator roles",
    (name) => {
      const operator = 'arn:aws:iam::123456789012:role/DlqOperator';
      const withOperator = synthProbeStack({ settings: { operatorRoleArns: [operator] } }).template;
      const plain = pipelineIn(template, name);
      const operated = pipelineIn(withOperator, name);

      const senders = allowedSenders(template, plain.dlqId);
      const withOperatorSenders = allowedSenders(withOperator, operated.dlqId);

      expect(senders).toEqual([roleOfFunction(template, plain.functionId)]);
      expect(withOperatorSenders.sort()).toEqual([roleOfFunction(withOperator, operated.functionId), operator].sort());
    },
  );

  test("the DLQs' deny leaves SQS's own dead-lettering alone: it does not match an AWS service acting as itself", () => {
    const denials = CONSUMERS.flatMap((spec) => sendDenials(template, pipelineIn(template, spec.name).dlqId));

    const conditions = denials.map((s) => s.Condition?.BoolIfExists);

    expect(conditions).toEqual(CONSUMERS.map(() => ({ 'aws:PrincipalIsAWSService': 'false' })));
  });
});
