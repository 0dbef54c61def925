import { App, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CONSUMERS } from '../../lambdas/shop/consumers';
import { readConfig } from '../../lib/shop/config';
import { FunctionWithDefaults } from '../../lib/exactly-once/function-defaults';
import { ExactlyOnceStack } from '../../lib/shop/shop-stack';
import { THIRD_CONSUMER } from '../support/consumer-pipelines';
import { cdkContext } from '../support/synth';
import { CONFIGURED_PROVIDERS } from '../support/providers';

/**
 * cdk-nag (AwsSolutions) runs as a CDK validation plugin during synthesis:
 * the stack must synthesize with zero unacknowledged findings, every
 * acknowledgement must say why, and the check must be live (an unacknowledged
 * finding fails synthesis).
 */
interface Violation {
  ruleName: string;
  severity: string;
  violatingConstructs: { constructPath: string }[];
}

interface NagResult {
  app: App;
  error?: Error;
  violations: Violation[];
}

const outdirs: string[] = [];

afterAll(() => {
  for (const dir of outdirs) fs.rmSync(dir, { recursive: true, force: true });
});

/** Synthesizes an app with the AwsSolutions checks; returns the error (if any) and the report's violations. */
function synthWithNag(build: (app: App) => void, context: Record<string, unknown> = {}): NagResult {
  const outdir = fs.mkdtempSync(path.join(os.tmpdir(), 'nag-'));
  outdirs.push(outdir);
  const app = new App({ context: cdkContext(context), outdir });
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  build(app);

  let error: Error | undefined;
  // A failing validation prints its report; the assertions below read it from the file instead.
  const quiet = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    app.synth();
  } catch (e) {
    error = e as Error;
  } finally {
    quiet.mockRestore();
  }

  const reportFile = path.join(outdir, 'validation-report.json');
  const report = fs.existsSync(reportFile)
    ? (JSON.parse(fs.readFileSync(reportFile, 'utf8')) as { pluginReports: { violations: Violation[] }[] })
    : { pluginReports: [] };
  return { app, error, violations: report.pluginReports.flatMap((r) => r.violations) };
}

function exactlyOnceStack(app: App): ExactlyOnceStack {
  return new ExactlyOnceStack(app, 'NagStack', { config: readConfig(app) });
}

/** `RuleId @ path` for every finding, for readable failure output. */
function findings(violations: Violation[]): string[] {
  return violations.flatMap((v) => v.violatingConstructs.map((c) => `${v.ruleName} @ ${c.constructPath}`));
}

/** Only cdk-nag's findings (the report also carries other plugins', e.g. the project's correctness aspects). */
function nagFindings(violations: Violation[]): string[] {
  return findings(violations.filter((v) => v.ruleName.startsWith('AwsSolutions-')));
}

function acknowledgementsIn(root: IConstruct): { path: string; id: string; reason: unknown }[] {
  return root.node.findAll().flatMap((construct) =>
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) =>
        Object.entries(entry.data as Record<string, unknown>).map(([id, reason]) => ({
          path: construct.node.path,
          id,
          reason,
        })),
      ),
  );
}

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
    const result = synthWithNag((app) => exactlyOnceStack(app), { providers: CONFIGURED_PROVIDERS });

    expect(findings(result.violations)).toEqual([]);
    expect(result.error).toBeUndefined();
  });
});

describe('the stack with OpenTelemetry (the ADOT layer) on', () => {
  test('synthesizes with zero unacknowledged findings', () => {
    const result = synthWithNag((app) => exactlyOnceStack(app), { openTelemetry: 'true' });

    expect(findings(result.violations)).toEqual([]);
    expect(result.error).toBeUndefined();
  });
});

describe('the stack with a third consumer on the list', () => {
  test('synthesizes with zero unacknowledged findings: its queues, function and grants come with the same defaults', () => {
    const result = synthWithNag(
      (app) =>
        new ExactlyOnceStack(app, 'NagStack', { config: readConfig(app), consumers: [...CONSUMERS, THIRD_CONSUMER] }),
    );

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
          entry: 'lambdas/shop/entry-points/get-order.ts',
          asyncDeadLetterQueue: false,
        });
      });

      expect(findings(result.violations)).toEqual([]);
      expect(result.error).toBeUndefined();
    });

    test('the only IAM5 acknowledgements sit on function roles', () => {
      const result = synthWithNag((app) => exactlyOnceStack(app));
      const iam5 = acknowledgementsIn(result.app).filter((a) => a.id.includes('AwsSolutions-IAM5'));

      expect(iam5.length).toBeGreaterThanOrEqual(9);
      for (const { path: at } of iam5) expect(at).toMatch(/^NagStack\/.+\/Role$/);
    });
  });
});
