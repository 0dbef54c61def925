import { CfnResource, type App, type Stack } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import { buildProbeStack, PROBE_STACK_CONSUMERS, synthProbeStack } from '../exactly-once/fixtures/probe-stack';
import { synthErrors } from '../support/cdk-app';
import { referencedId, resourceById, resourcesOfType } from '../support/template';

/**
 * What the README promises, pinned on a stack ExactlyOnce builds (the probe
 * stack: the mechanism with a standard and a FIFO probe consumer), not on a
 * hand-built one: the correctness Aspects are applied to it (a broken override
 * fails synth), and the numbers the README states are the deployed ones. (The
 * shop's Idempotency-Key expiry: shop-stack.test.ts.)
 */
const DAY = 86_400;

function realStack(): { app: App; stack: Stack } {
  return buildProbeStack({ stackName: 'TestStack' });
}

/** The L1 resource whose construct path under the stack starts with `path`, for an escape-hatch override. */
function l1At(stack: Stack, path: string): CfnResource {
  const found = stack.node
    .findAll()
    .find((c) => c instanceof CfnResource && c.node.path.startsWith(`${stack.node.path}/${path}`));
  if (!(found instanceof CfnResource)) throw new Error(`No L1 resource at ${path}`);
  return found;
}

/** The [Correctness/...] errors synth reports, as "path: message". */
function correctnessErrors(app: App): string[] {
  return synthErrors(app)
    .filter((f) => f.message.startsWith('[Correctness/'))
    .map((f) => `${f.path}: ${f.message}`);
}

describe('the real stack refuses a broken override at synth (the correctness Aspects are applied to it)', () => {
  test('as built, it synthesizes with no correctness error', () => {
    const { app } = realStack();

    expect(correctnessErrors(app)).toEqual([]);
  });

  test.each([
    [
      "an escape hatch setting the FIFO probe queue's maxReceiveCount to 1",
      'Default/Pipelines/ProbeFifoQueues/Queue/Resource',
      'RedrivePolicy.maxReceiveCount',
      1,
      /DeadLetterQueue/,
    ],
    [
      "an escape hatch setting the probe queue's visibility timeout below its consumer's 30 s timeout",
      'Default/Pipelines/ProbeQueues/Queue/Resource',
      'VisibilityTimeout',
      20,
      /VisibilityTimeout/,
    ],
    [
      "an escape hatch shortening the probe consumer's INBOX_TTL_SECONDS to one day",
      'Default/Pipelines/ProbeConsumer/Fn/Resource',
      'Environment.Variables.INBOX_TTL_SECONDS',
      String(DAY),
      /InboxTtl/,
    ],
    [
      "an escape hatch letting the relay's stream mapping retry forever",
      'Default/OutboxRelay/Relay/Fn/DynamoDBEventSource:',
      'MaximumRetryAttempts',
      -1,
      /StreamSource/,
    ],
  ])('%s fails synth', (_what, path, property, value, rule) => {
    const { app, stack } = realStack();
    l1At(stack, path).addPropertyOverride(property, value);

    const errors = correctnessErrors(app);

    expect(errors.length).toBeGreaterThan(0);
    expect(errors.every((e) => e.startsWith(`TestStack/${path}`))).toBe(true);
    expect(errors.join('\n')).toMatch(rule);
  });
});

describe('the numbers the README states are the synthesized ones', () => {
  let template: Template;
  beforeAll(() => {
    template = synthProbeStack().template;
  });

  const functionsWithVariable = (name: string) =>
    resourcesOfType(template, 'AWS::Lambda::Function').filter(
      ([, fn]) =>
        (fn.Properties?.Environment as { Variables?: Record<string, unknown> })?.Variables?.[name] !== undefined,
    );
  const variable = (fn: { Properties?: Record<string, unknown> }, name: string) =>
    (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables[name];

  test('each consumer keeps inbox claims 1,900,800 s: a dedupe horizon of its source queue (4 d) + its DLQ (14 d) + a 3-day redrive allowance, plus a 1-day clock-skew margin', () => {
    const consumers = functionsWithVariable('INBOX_TTL_SECONDS');

    // One function per consumer on the list (the stack is built from it), and no other function keeps claims.
    expect(consumers).toHaveLength(PROBE_STACK_CONSUMERS.length);
    for (const [functionId, fn] of consumers) {
      const [, mapping] = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').find(
        ([, m]) => referencedId(m.Properties?.FunctionName) === functionId,
      )!;
      const source = resourceById(template, referencedId(mapping.Properties?.EventSourceArn)!);
      const redrive = source.Properties?.RedrivePolicy as { deadLetterTargetArn: unknown };
      const dlq = resourceById(template, referencedId(redrive.deadLetterTargetArn)!);
      const sourceRetention = Number(source.Properties?.MessageRetentionPeriod);
      const dlqRetention = Number(dlq.Properties?.MessageRetentionPeriod);

      expect([sourceRetention, dlqRetention]).toEqual([4 * DAY, 14 * DAY]);
      // The horizon covers a first trip and one redrive; the claim outlives it by the 1-day clock-skew margin.
      expect(Number(variable(fn, 'DEDUPE_HORIZON_SECONDS'))).toBe(sourceRetention + dlqRetention + 3 * DAY);
      expect(Number(variable(fn, 'INBOX_TTL_SECONDS'))).toBe(sourceRetention + dlqRetention + 3 * DAY + DAY);
      expect(variable(fn, 'INBOX_TTL_SECONDS')).toBe('1900800');
    }
  });

  test('the relay reads the stream with bisect, 8 retries, a 6 h maximum record age and an on-failure queue', () => {
    const streamMappings = resourcesOfType(template, 'AWS::Lambda::EventSourceMapping').filter(([, m]) =>
      JSON.stringify(m.Properties?.EventSourceArn).includes('StreamArn'),
    );

    expect(streamMappings).toHaveLength(1);
    const [, mapping] = streamMappings[0];
    expect(mapping.Properties).toMatchObject({
      BisectBatchOnFunctionError: true,
      MaximumRetryAttempts: 8,
      MaximumRecordAgeInSeconds: 6 * 3600,
      DestinationConfig: { OnFailure: { Destination: expect.anything() } },
    });
    const destination = (mapping.Properties?.DestinationConfig as { OnFailure: { Destination: unknown } }).OnFailure;
    expect(resourceById(template, referencedId(destination.Destination)!).Type).toBe('AWS::SQS::Queue');
  });
});
