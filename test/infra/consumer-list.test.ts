import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Template } from 'aws-cdk-lib/assertions';
import { consumerOutputNames, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { ENV } from '@exactly-once/runtime/env-names';
import { FAULT_TARGET_TAG } from '@exactly-once/cdk/fault-injection';
import type { ConsumerPipelines } from '@exactly-once/cdk/consumer-pipelines';
import {
  PROBE_STACK_CONSUMERS,
  probeStackTemplate,
  synthProbeStack,
  THIRD_PROBE_CONSUMER,
  type ProbeStack,
} from '../exactly-once/fixtures/probe-stack';
import {
  dashboardMetrics,
  dynamoDbGrants,
  expectedRoutes,
  pipelineOf,
  referencedId,
  referencedIds,
  resourceById,
  resourcesOfType,
  roleOfFunction,
  routesOf,
  statementsOfRole,
  tableNamesOf,
  type TemplatePipeline,
} from '../support/template';

/**
 * The stack is built from the consumer list: on the probe stack (a standard
 * and a FIFO probe consumer), a third consumer, added as one more spec, gets
 * everything the first two have (queue and DLQ with the
 * secure defaults, event source mapping with its own batch settings, grants,
 * alarms, dashboard widgets, outputs, the fault switch, a relay route), and
 * the first two keep their logical ids. A list the specs' validation refuses
 * fails synth with its reason.
 */

const AUDIT = THIRD_PROBE_CONSUMER;
const AUDIT_OUTPUTS = consumerOutputNames(AUDIT.name);
const CONSUMERS = PROBE_STACK_CONSUMERS;
const WITH_AUDIT: readonly ConsumerSpec[] = [...CONSUMERS, AUDIT];
const DAY = 86_400;

function build(consumers: readonly ConsumerSpec[], settings: { faultInjection?: boolean } = {}) {
  return synthProbeStack({ consumers, settings });
}

let stack: ProbeStack;
let template: Template;
let audit: TemplatePipeline;

beforeAll(() => {
  ({ stack, template } = build(WITH_AUDIT, { faultInjection: true }));
  audit = pipelineOf(template, AUDIT.name);
});

const propsOf = (id: string) => resourceById(template, id).Properties ?? {};
const envOf = (id: string) => (propsOf(id).Environment as { Variables: Record<string, unknown> }).Variables;
const alarms = () =>
  resourcesOfType(template, 'AWS::CloudWatch::Alarm').map(([, a]) => a.Properties as Record<string, unknown>);
const alarmsOn = (metricName: string, dimension: string, targetId: string) =>
  alarms().filter(
    (a) =>
      a.MetricName === metricName &&
      (a.Dimensions as { Name: string; Value: unknown }[]).some(
        (d) => d.Name === dimension && referencedId(d.Value) === targetId,
      ),
  );
const sqsTargets = (functionId: string, action: string) =>
  statementsOfRole(template, roleOfFunction(template, functionId))
    .filter((s) => s.Effect === 'Allow' && s.Action.includes(action))
    .flatMap((s) => s.Resource.map((r) => referencedId(r)));
const publishers = () => {
  const relay = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping')
    .map(([, m]) => m.Properties as { EventSourceArn: { 'Fn::GetAtt'?: string[] }; FunctionName: unknown })
    .filter((m) => m.EventSourceArn['Fn::GetAtt']?.[1] === 'StreamArn')
    .map((m) => referencedId(m.FunctionName) as string);
  const sweeper = resourcesOfType(template, 'AWS::Lambda::Function')
    .filter(([id]) => envOf(id)[ENV.outboxSweepAgeSeconds] !== undefined)
    .map(([id]) => id);
  expect([relay.length, sweeper.length]).toEqual([1, 1]);
  return [...relay, ...sweeper];
};

describe('a third consumer on the list', () => {
  test(`gets its outputs ${AUDIT_OUTPUTS.queueUrl} and ${AUDIT_OUTPUTS.deadLetterQueueUrl}, a standard queue and a standard DLQ`, () => {
    expect(propsOf(audit.queueId).FifoQueue).toBeUndefined();
    expect(propsOf(audit.dlqId).FifoQueue).toBeUndefined();
    expect(referencedId(envOf(audit.functionId)[ENV.queueUrl])).toBe(audit.queueId);
    expect(referencedId(envOf(audit.functionId)[ENV.deadLetterQueueUrl])).toBe(audit.dlqId);
  });

  test('its queue and DLQ are encrypted and TLS-only; the queue redrives to the DLQ, which keeps messages 14 days', () => {
    for (const queueId of [audit.queueId, audit.dlqId]) {
      expect(propsOf(queueId).SqsManagedSseEnabled).toBe(true);
      const tlsDenials = resourcesOfType(template, 'AWS::SQS::QueuePolicy')
        .map(
          ([, p]) =>
            p.Properties as {
              Queues: unknown[];
              PolicyDocument: { Statement: { Effect: string; Condition?: unknown }[] };
            },
        )
        .filter((p) => referencedIds(p.Queues).includes(queueId))
        .flatMap((p) => p.PolicyDocument.Statement)
        .filter(
          (s) =>
            s.Effect === 'Deny' &&
            JSON.stringify(s.Condition) === JSON.stringify({ Bool: { 'aws:SecureTransport': 'false' } }),
        );
      expect({ queueId, tlsDenials: tlsDenials.length }).toEqual({ queueId, tlsDenials: 1 });
    }
    expect(propsOf(audit.queueId).RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [audit.dlqId, 'Arn'] },
      maxReceiveCount: 14,
    });
    expect(propsOf(audit.dlqId).MessageRetentionPeriod).toBe(14 * DAY);
  });

  test("its event source mapping reports batch item failures with the spec's batch size, window and concurrency", () => {
    expect(audit.mapping).toMatchObject({
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      BatchSize: 5,
      MaximumBatchingWindowInSeconds: 3,
      ScalingConfig: { MaximumConcurrency: 4 },
    });
    // 6 x the 30 s consumer timeout + its 3 s batching window.
    expect(propsOf(audit.queueId).VisibilityTimeout).toBe(183);
  });

  test('its consumer may claim and apply in Effects, record in ProviderLog and send to its own DLQ only', () => {
    const tables = tableNamesOf(stack);

    expect(dynamoDbGrants(template, roleOfFunction(template, audit.functionId), tables)).toEqual({
      Effects: ['dynamodb:PutItem', 'dynamodb:UpdateItem'],
      ProviderLog: ['dynamodb:UpdateItem'],
    });
    expect(sqsTargets(audit.functionId, 'sqs:SendMessage')).toEqual([audit.dlqId]);
  });

  test('its DLQ alarms when it holds a message and on its oldest message; its queue on a message older than its longest ordinary retry', () => {
    expect(alarmsOn('ApproximateNumberOfMessagesVisible', 'QueueName', audit.dlqId)).toHaveLength(1);
    expect(alarmsOn('ApproximateAgeOfOldestMessage', 'QueueName', audit.dlqId)).toHaveLength(1);
    const [sourceAge, ...others] = alarmsOn('ApproximateAgeOfOldestMessage', 'QueueName', audit.queueId);
    expect(others).toEqual([]);
    // Batching window 3 s + visibility timeout 183 s + backoff cap 300 s, and then some.
    expect(sourceAge.Threshold).toBe(3 + 183 + 300 + 1);
  });

  test('its function alarms on errors and throttles, though it runs the same entry point as probe', () => {
    for (const metric of ['Errors', 'Throttles'])
      expect({ metric, alarms: alarmsOn(metric, 'FunctionName', audit.functionId).length }).toEqual({
        metric,
        alarms: 1,
      });
  });

  test('the dashboard graphs its consumer metrics and its DLQ', () => {
    const metrics = dashboardMetrics(template);
    const dimensionPairs = (m: unknown[]) => {
      const strings = m.slice(2).filter((x): x is string => typeof x === 'string');
      return Object.fromEntries(
        Array.from({ length: strings.length / 2 }, (_, i) => [strings[2 * i], strings[2 * i + 1]]),
      );
    };

    for (const metricName of [
      'EffectApplied',
      'OwedProviderCallCompleted',
      'DuplicateSuppressed',
      'StaleEventIgnored',
      'PermanentFailure',
    ]) {
      const graphed = metrics.some((m) => m[1] === metricName && dimensionPairs(m).consumer === AUDIT.name);
      expect({ metricName, graphed }).toEqual({ metricName, graphed: true });
    }
    const dlqGraphed = metrics.some(
      (m) => m[1] === 'ApproximateNumberOfMessagesVisible' && String(dimensionPairs(m).QueueName).includes(audit.dlqId),
    );
    expect(dlqGraphed).toBe(true);
  });

  test('with fault injection, it reads the fault switch and the active-plan alarm counts it', () => {
    expect(JSON.stringify(envOf(audit.functionId))).toContain('FAULT_');
    const [faultAlarm] = alarms().filter((a) => JSON.stringify(a).includes('FaultPlanActive'));
    const consumers = (
      faultAlarm.Metrics as { MetricStat?: { Metric: { Dimensions: { Name: string; Value: string }[] } } }[]
    )
      .flatMap((m) => m.MetricStat?.Metric.Dimensions ?? [])
      .filter((d) => d.Name === 'consumer')
      .map((d) => d.Value);
    expect(consumers.sort()).toEqual(WITH_AUDIT.map((c) => c.name).sort());
  });

  test('the relay and the sweeper route ThingHappened to its queue, and may send to it', () => {
    for (const publisher of publishers()) {
      expect(routesOf(template, publisher)).toEqual(expectedRoutes(template, WITH_AUDIT));
      expect(routesOf(template, publisher)).toContainEqual({
        consumer: AUDIT.name,
        queueUrl: audit.queueId,
        fifo: false,
        eventTypes: ['ThingHappened'],
      });
      expect(sqsTargets(publisher, 'sqs:SendMessage')).toContain(audit.queueId);
    }
  });

  test('it and every other consumer carry the fault-target tag, as the relay does; the FIS template selects by that tag', () => {
    const tagOf = (functionId: string) =>
      ((propsOf(functionId).Tags ?? []) as { Key: string; Value: string }[]).find((t) => t.Key === FAULT_TARGET_TAG)
        ?.Value;
    const consumerIds = WITH_AUDIT.map((spec) => pipelineOf(template, spec.name).functionId);
    const relayId = publishers()[0];
    const fis = JSON.parse(
      fs.readFileSync(path.join(__dirname, '../../packages/tools/src/proof-kit/aws/fis-lambda-faults.json'), 'utf8'),
    );

    for (const id of consumerIds) expect(tagOf(id)).toBe(`${stack.stackName}:consumer`);
    expect(tagOf(relayId)).toBe(`${stack.stackName}:relay`);
    const tagged = resourcesOfType(template, 'AWS::Lambda::Function')
      .map(([id]) => id)
      .filter((id) => tagOf(id) !== undefined);
    expect(tagged.sort()).toEqual([...consumerIds, relayId].sort());
    // Nothing but functions: FIS would not pick the roles, but the tag says "aim faults here".
    const taggedOther = Object.values(
      template.toJSON().Resources as Record<string, { Type: string; Properties?: { Tags?: unknown } }>,
    )
      .filter((r) => r.Type !== 'AWS::Lambda::Function')
      .filter((r) => JSON.stringify(r.Properties?.Tags ?? []).includes(FAULT_TARGET_TAG));
    expect(taggedOther).toEqual([]);
    expect(fis.targets.Consumers.resourceTags).toEqual({ [FAULT_TARGET_TAG]: 'STACK_NAME:consumer' });
    expect(fis.targets.Relay.resourceTags).toEqual({ [FAULT_TARGET_TAG]: 'STACK_NAME:relay' });
  });

  test('the pipelines look it up by name', () => {
    const pipelines = stack.node.findChild('Default').node.findChild('Pipelines') as ConsumerPipelines;

    expect(pipelines.all.map((p) => p.spec.name)).toEqual(WITH_AUDIT.map((c) => c.name));
    expect(pipelines.byName(AUDIT.name).spec).toBe(AUDIT);
    expect(() => pipelines.byName('nobody')).toThrow('No consumer pipeline named "nobody"');
  });

  test('every resource of the stack built from the list alone keeps its logical id', () => {
    const before = Object.keys(probeStackTemplate().Resources as object);
    const after = new Set(Object.keys((template.toJSON() as { Resources: object }).Resources));

    expect(before.filter((id) => !after.has(id))).toEqual([]);
  });
});

describe('a list the specs refuse fails synth with the reason', () => {
  test.each([
    [
      'an event type nobody produces',
      [...CONSUMERS, { ...AUDIT, eventTypes: ['ThingVanished'] }],
      `consumer "${AUDIT.name}": takes "ThingVanished", which no producer writes (known: ThingHappened, ThingUndone)`,
    ],
    [
      'a name used twice',
      [...CONSUMERS, { ...AUDIT, name: 'probe-fifo' }],
      'consumer "probe-fifo": the name is used twice',
    ],
    [
      'a FIFO consumer with a batching window',
      [...CONSUMERS, { ...AUDIT, fifo: true }],
      `consumer "${AUDIT.name}": FIFO event sources take no batching window (set 0)`,
    ],
    ['no consumer at all', [], 'No consumers: the consumer list needs at least one spec'],
  ])('%s', (_, consumers, message) => {
    expect(() => build(consumers as ConsumerSpec[])).toThrow(message);
  });
});
