import { App, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { functionBuildFor, readConfig } from '../../lib/config';
import { configError } from '../support/config-error';

/**
 * The deployment's configuration (lib/config.ts): what each stage means, read once from CDK context,
 * every bad value refused with a one-line error, and the build its bundles carry. It is the
 * application's, not its domain's, so a fork that replaces the example keeps it and these tests. (What
 * the settings do to a stack ExactlyOnce builds: stages.test.ts, fault-injection.test.ts, storage.test.ts.)
 */
/** The configuration a context gives, read as bin/app.ts reads it. */
const configOf = (context: Record<string, unknown>) => readConfig(new App({ context }));

describe('stack names', () => {
  test('the stack is named for its stage, dev by default', () => {
    const stackNameOf = (context: Record<string, unknown>) => configOf(context).stackName;

    expect(stackNameOf({})).toBe('ExactlyOnce-dev');
    expect(stackNameOf({ stage: 'prod' })).toBe('ExactlyOnce-prod');
  });
});

describe('what each stage means', () => {
  test('dev: tables destroyed with the stack, unprotected, logs kept a month, tables capped at 4,000 units a second', () => {
    expect(configOf({})).toMatchObject({
      stage: 'dev',
      removalPolicy: RemovalPolicy.DESTROY,
      deletionProtection: false,
      logRetention: RetentionDays.ONE_MONTH,
      tableThroughputCeiling: 4_000,
    });
  });

  test('prod: tables retained and deletion-protected, logs kept a year, no ceiling unless asked', () => {
    expect(configOf({ stage: 'prod' })).toMatchObject({
      stage: 'prod',
      removalPolicy: RemovalPolicy.RETAIN,
      deletionProtection: true,
      logRetention: RetentionDays.ONE_YEAR,
      tableThroughputCeiling: undefined,
    });
    expect(configOf({ stage: 'prod', tableThroughputCeiling: '500' }).tableThroughputCeiling).toBe(500);
    expect(configOf({ tableThroughputCeiling: 'none' }).tableThroughputCeiling).toBeUndefined();
  });

  test('a ceiling that is not a positive whole number is refused, naming the option', () => {
    expect(configError({ tableThroughputCeiling: '0' })).toBe(
      'Context tableThroughputCeiling must be a positive integer, got "0"',
    );
    expect(configError({ tableThroughputCeiling: 'lots' })).toMatch(
      /^Context tableThroughputCeiling must be a positive integer/,
    );
  });

  test('an unknown removal policy is refused', () => {
    expect(configError({ removalPolicy: 'keep-please' })).toMatch(/^Context removalPolicy must be one of/);
  });
});

describe('fault injection and the local runtime', () => {
  test('fault injection is off by default in dev and prod', () => {
    expect(configOf({}).faultInjection).toBe(false);
    expect(configOf({ stage: 'dev' }).faultInjection).toBe(false);
    expect(configOf({ stage: 'prod' }).faultInjection).toBe(false);
  });

  test('the local runtime build turns fault injection on', () => {
    expect(configOf({ localRuntime: 'true' })).toMatchObject({ faultInjection: true, localRuntime: true });
  });

  test.each([
    [
      { stage: 'prod', faultInjection: 'true' },
      'Context faultInjection=true is not allowed with stage=prod: fault injection never ships to production',
    ],
    [
      { stage: 'prod', localRuntime: 'true' },
      'Context faultInjection=true is not allowed with stage=prod: fault injection never ships to production',
    ],
    [
      { localRuntime: 'true', faultInjection: 'false' },
      'Context localRuntime=true needs fault injection: drop faultInjection=false',
    ],
    [{ localRuntime: 'yes' }, 'Context localRuntime must be true or false, got "yes"'],
  ])('refuses %j with one line', (context, message) => {
    expect(configError(context)).toBe(message);
  });
});

describe('configuration: every bad option stops synth with a one-line error', () => {
  test.each([
    [{ stage: 'staging' }, 'Context stage must be one of dev, prod, got "staging"'],
    [{ removalPolicy: 'keep' }, 'Context removalPolicy must be one of destroy, retain, got "keep"'],
    [
      { removalPolicy: 'snapshot' },
      'Context removalPolicy=snapshot is not supported for DynamoDB tables (no CloudFormation snapshot on delete); use retain',
    ],
    [
      { stage: 'prod', removalPolicy: 'destroy' },
      'Context removalPolicy=destroy is not allowed with stage=prod: prod tables are retained',
    ],
    [
      { stage: 'prod', faultInjection: 'true' },
      'Context faultInjection=true is not allowed with stage=prod: fault injection never ships to production',
    ],
    [{ faultInjection: 'yes' }, 'Context faultInjection must be true or false, got "yes"'],
    [{ apiRateLimit: 'fast' }, 'Context apiRateLimit must be a positive number, got "fast"'],
    [{ apiRateLimit: '0' }, 'Context apiRateLimit must be a positive number, got "0"'],
    [{ apiBurstLimit: '2.5' }, 'Context apiBurstLimit must be a positive integer, got "2.5"'],
    [{ apiBurstLimit: '' }, 'Context apiBurstLimit must be a positive integer, got ""'],
    [{ alarmEmail: 'ops' }, 'Context alarmEmail must be an e-mail address, got "ops"'],
    [
      { apiGatewayAccountRole: 'shared' },
      'Context apiGatewayAccountRole must be one of create, existing, got "shared"',
    ],
    [{ allowReservedConcurrency: 'sure' }, 'Context allowReservedConcurrency must be true or false, got "sure"'],
    [{ openTelemetry: 'on' }, 'Context openTelemetry must be true or false, got "on"'],
    [
      { localRuntime: 'true', openTelemetry: 'true' },
      'Context openTelemetry=true is not allowed with localRuntime=true: the ADOT layer runs on AWS only, and the local runtime records the spans itself',
    ],
    [
      { stackName: 'exactly_once' },
      'Context stackName must be a CloudFormation stack name (a letter, then letters, digits or hyphens), got "exactly_once"',
    ],
  ])('%j', (context, message) => {
    expect(configError(context)).toBe(message);
  });

  test('a deployment made before stages keeps its stack with -c stackName=ExactlyOnceStack', () => {
    expect(configOf({ stackName: 'ExactlyOnceStack' }).stackName).toBe('ExactlyOnceStack');
  });

  test('good values are read as typed settings', () => {
    const config = readConfig(
      new App({
        context: { stage: 'prod', apiRateLimit: '50.5', apiBurstLimit: '100', alarmEmail: 'ops@example.com' },
      }),
    );

    expect(config).toMatchObject({
      stage: 'prod',
      stackName: 'ExactlyOnce-prod',
      deletionProtection: true,
      faultInjection: false,
      apiRateLimit: 50.5,
      apiBurstLimit: 100,
      alarmEmail: 'ops@example.com',
    });
  });

  test('the app prints the error alone on one line and exits 1, without synthesizing', () => {
    const root = path.join(__dirname, '..', '..');
    const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'bin', 'app.ts')], {
      cwd: root,
      encoding: 'utf8',
      env: { ...process.env, CDK_CONTEXT_JSON: JSON.stringify({ stage: 'staging' }), CDK_OUTDIR: '/nonexistent' },
    });

    expect({ status: result.status, stderr: result.stderr, stdout: result.stdout }).toEqual({
      status: 1,
      stderr: 'Context stage must be one of dev, prod, got "staging"\n',
      stdout: '',
    });
  });
});

describe('the build the bundles carry follows the configuration', () => {
  const buildOf = (context: Record<string, unknown>) => functionBuildFor(configOf(context));

  test.each([
    ['default', {}, { faultInjection: false, inboxBypass: false, openTelemetry: false }],
    [
      '-c faultInjection=true',
      { faultInjection: 'true' },
      { faultInjection: true, inboxBypass: false, openTelemetry: false },
    ],
    [
      '-c localRuntime=true',
      { localRuntime: 'true' },
      { faultInjection: true, inboxBypass: true, openTelemetry: false },
    ],
    [
      '-c openTelemetry=true',
      { openTelemetry: 'true' },
      { faultInjection: false, inboxBypass: false, openTelemetry: true },
    ],
  ])('%s', (_, context, expected) => {
    expect(buildOf(context)).toEqual(expected);
  });
});
