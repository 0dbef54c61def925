import { Stack, type App } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { FunctionWithDefaults } from '@exactly-once/cdk/function-defaults';
import {
  PROBE_PRODUCER_ENTRY,
  PROBE_STACK_CONSUMERS,
  ProbeStack,
  probeStage,
  THIRD_PROBE_CONSUMER,
  type ProbeSettings,
} from '../exactly-once/fixtures/probe-stack';
import {
  acknowledgementsIn,
  findings,
  nagFindings,
  removeNagOutdirs,
  synthWithNag,
  type NagResult,
} from '../support/nag';

/**
 * cdk-nag (AwsSolutions) runs as a CDK validation plugin during synthesis:
 * a stack ExactlyOnce builds (the probe stack: the mechanism with its neutral
 * fixture) must synthesize with zero unacknowledged findings, every
 * acknowledgement must say why, and the check must be live (an unacknowledged
 * finding fails synthesis). (The shop's stack: shop-stack.test.ts.)
 */
afterAll(removeNagOutdirs);

function exactlyOnceStack(app: App, settings: Partial<ProbeSettings> = {}, consumers = PROBE_STACK_CONSUMERS): Stack {
  return new ProbeStack(app, 'NagStack', { settings: probeStage('dev', settings), consumers });
}

/** Each probe consumer's provider, configured: an endpoint and the SSM parameter holding its API key. */
const CONFIGURED_PROVIDERS = Object.fromEntries(
  PROBE_STACK_CONSUMERS.map(({ name }) => [
    name,
    { endpoint: `https://${name}.example/v1/calls`, apiKeyParameter: `/exactly-once/dev/${name}-api-key` },
  ]),
);

describe('the stack', () => {
  let result: NagResult;

  beforeAll(() => {
    result = synthWithNag((app) => exactlyOnceStack(app));
  });

  test('synthesizes with the AwsSolutions checks and zero unacknowledged findings', () => {
    expect(findings(result.violations)).toEqual([]);
    expect(result.error).toBeUndefined();
  });

  test('every acknowledgement says why', () => {
    const acknowledgements = acknowledgementsIn(result.app);

    expect(acknowledgements.length).toBeGreaterThan(0);
    for (const { path: at, id, reason } of acknowledgements) {
      expect({ at, id, reason }).toEqual({ at, id, reason: expect.stringMatching(/\S.{14,}/) });
    }
  });
});

describe('the stack with its providers configured', () => {
  test('synthesizes with zero unacknowledged findings: each consumer reads its one API-key parameter', () => {
    const result = synthWithNag((app) => exactlyOnceStack(app, { providers: CONFIGURED_PROVIDERS }));

    expect(findings(result.violations)).toEqual([]);
    expect(result.error).toBeUndefined();
  });
});

describe('the stack with OpenTelemetry (the ADOT layer) on', () => {
  test('synthesizes with zero unacknowledged findings', () => {
    const result = synthWithNag((app) => exactlyOnceStack(app, { openTelemetry: true }));

    expect(findings(result.violations)).toEqual([]);
    expect(result.error).toBeUndefined();
  });
});

describe('the stack with a third consumer on the list', () => {
  test('synthesizes with zero unacknowledged findings: its queues, function and grants come with the same defaults', () => {
    const result = synthWithNag((app) => exactlyOnceStack(app, {}, [...PROBE_STACK_CONSUMERS, THIRD_PROBE_CONSUMER]));

    expect(findings(result.violations)).toEqual([]);
    expect(result.error).toBeUndefined();
  });
});

describe('the check is live', () => {
  test('an unacknowledged finding in the stack fails synthesis, and names the construct', () => {
    const result = synthWithNag((app) => {
      const stack = exactlyOnceStack(app);
      // An SQS queue with no DLQ and no TLS-only policy: AwsSolutions-SQS3 and -SQS4.
      new sqs.Queue(stack, 'UnacknowledgedQueue');
    });

    expect(result.error?.message).toContain('AwsSolutions-SQS4');
    expect(nagFindings(result.violations).sort()).toEqual([
      'AwsSolutions-SQS3 @ NagStack/UnacknowledgedQueue/Resource',
      'AwsSolutions-SQS4 @ NagStack/UnacknowledgedQueue/Resource',
    ]);
  });

  describe('Resource::* is acknowledged per function role (X-Ray, ListStreams), not stack-wide', () => {
    test('a wildcard resource anywhere else in the stack fails synthesis', () => {
      const result = synthWithNag((app) => {
        const stack = exactlyOnceStack(app);
        const role = new iam.Role(stack, 'WildcardRole', {
          assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
        });
        role.addToPolicy(new iam.PolicyStatement({ actions: ['sqs:SendMessage'], resources: ['*'] }));
      });

      expect(result.error?.message).toContain('AwsSolutions-IAM5[Resource::*]');
      expect(nagFindings(result.violations)).toEqual([
        'AwsSolutions-IAM5[Resource::*] @ NagStack/WildcardRole/DefaultPolicy/Resource',
      ]);
    });

    test('a function with the defaults passes on its own: its role carries the acknowledgement', () => {
      const result = synthWithNag((app) => {
        const stack = new Stack(app, 'ProbeStack');
        new FunctionWithDefaults(stack, 'Probe', {
          entry: PROBE_PRODUCER_ENTRY,
          asyncDeadLetterQueue: false,
        });
      });

      expect(findings(result.violations)).toEqual([]);
      expect(result.error).toBeUndefined();
    });

    test('the only IAM5 acknowledgements sit on function roles', () => {
      const result = synthWithNag((app) => exactlyOnceStack(app));
      const iam5 = acknowledgementsIn(result.app).filter((a) => a.id.includes('AwsSolutions-IAM5'));
      const functions = result.app.node.findAll().filter((c) => c instanceof FunctionWithDefaults);

      // One per function at least: the relay, the sweeper, each consumer and the API's producer.
      expect(functions.length).toBeGreaterThanOrEqual(PROBE_STACK_CONSUMERS.length + 3);
      expect(iam5.length).toBeGreaterThanOrEqual(functions.length);
      for (const { path: at } of iam5) expect(at).toMatch(/^NagStack\/.+\/Role$/);
    });
  });
});
