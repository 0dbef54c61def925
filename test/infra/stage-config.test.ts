import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';
import { functionBuildFor, readConfig, stackPropsFor } from '../../lib/config';
import { cdkContext } from '../support/cdk-app';
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

describe('span sampling is a stage option', () => {
  test('dev writes every trace (no sampling in the build); prod one in ten; both overridable, slow spans from 1 s', () => {
    expect(configOf({}).spanSampling).toEqual({ rate: 1, slowMs: 1000 });
    expect(functionBuildFor(configOf({})).spanSampling).toBeUndefined();
    expect(functionBuildFor(configOf({ stage: 'prod' })).spanSampling).toEqual({ rate: 0.1, slowMs: 1000 });
    expect(configOf({ stage: 'prod', spanSampleRate: '1', slowSpanMs: '500' }).spanSampling).toEqual({
      rate: 1,
      slowMs: 500,
    });
    expect(configOf({ spanSampleRate: 0 }).spanSampling.rate).toBe(0);
  });

  test('a rate outside 0 to 1, or a slow bound that is not a positive whole number, is refused naming the option', () => {
    expect(configError({ spanSampleRate: '1.5' })).toBe(
      'Context spanSampleRate must be a number from 0 to 1, got "1.5"',
    );
    expect(configError({ spanSampleRate: 'half' })).toMatch(/^Context spanSampleRate must be a number from 0 to 1/);
    expect(configError({ slowSpanMs: '0' })).toBe('Context slowSpanMs must be a positive integer, got "0"');
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

describe('prod stays where it is pinned and refuses deletion', () => {
  const PROD_PIN = { stage: 'prod', prodAccount: '111122223333', prodRegion: 'eu-west-1' };
  const propsOf = (context: Record<string, unknown>, resolved: { account?: string; region?: string } = {}) =>
    stackPropsFor(configOf(context), resolved);
  const refusal = (context: Record<string, unknown>, resolved: { account?: string; region?: string }) => {
    try {
      propsOf(context, resolved);
      return undefined;
    } catch (error) {
      return (error as Error).message;
    }
  };

  test('prod has termination protection on its stack, as bin/app.ts builds it; dev does not', () => {
    const stackOf = (context: Record<string, unknown>) => {
      const app = new App({ context: cdkContext(context) });
      const config = readConfig(app);
      // bin/app.ts spreads these props into the application's stack (a Stack).
      return new Stack(app, config.stackName, stackPropsFor(config, {}));
    };

    expect(stackOf({ stage: 'prod' }).terminationProtection).toBe(true);
    expect(stackOf({}).terminationProtection).toBe(false);
  });

  test('a pinned stage deploys to its pin, with or without credentials that agree', () => {
    expect(propsOf(PROD_PIN).env).toEqual({ account: '111122223333', region: 'eu-west-1' });
    expect(propsOf(PROD_PIN, { account: '111122223333', region: 'eu-west-1' }).env).toEqual({
      account: '111122223333',
      region: 'eu-west-1',
    });
    expect(propsOf({ devAccount: '444455556666', devRegion: 'us-east-2' }).env).toEqual({
      account: '444455556666',
      region: 'us-east-2',
    });
  });

  test('credentials for another account or region are refused at synth, naming both and the context key', () => {
    expect(refusal(PROD_PIN, { account: '999988887777', region: 'eu-west-1' })).toBe(
      'Stage prod is pinned to account 111122223333 (prodAccount), but your credentials resolve account 999988887777 (CDK_DEFAULT_ACCOUNT): use credentials for 111122223333, or change prodAccount',
    );
    expect(refusal(PROD_PIN, { account: '111122223333', region: 'us-east-1' })).toBe(
      'Stage prod is pinned to region eu-west-1 (prodRegion), but CDK resolves region us-east-1 (CDK_DEFAULT_REGION, from your profile or AWS_REGION): switch to eu-west-1, or change prodRegion',
    );
  });

  test('prod without a pin: refused once credentials resolve an account; offline (tests, CI) it synthesizes environment-agnostic', () => {
    expect(refusal({ stage: 'prod' }, { account: '999988887777', region: 'us-east-1' })).toMatch(
      /^Stage prod is not pinned: pass -c prodAccount=<account id> -c prodRegion=<region> \(or set them in cdk\.json\)/,
    );
    expect(refusal({ stage: 'prod', prodAccount: '111122223333' }, { account: '111122223333' })).toMatch(
      /^Stage prod is not pinned/,
    );
    expect(propsOf({ stage: 'prod' }).env).toEqual({ account: undefined, region: undefined });
    // dev needs no pin: it goes where the credentials point.
    expect(propsOf({}, { account: '999988887777', region: 'us-east-1' }).env).toEqual({
      account: '999988887777',
      region: 'us-east-1',
    });
  });

  test.each([
    [{ prodAccount: '1111' }, 'Context prodAccount must be a 12-digit AWS account id (a string), got "1111"'],
    [
      { prodAccount: 111122223333 },
      'Context prodAccount must be a 12-digit AWS account id (a string), got 111122223333',
    ],
    [{ prodRegion: 'Europe' }, 'Context prodRegion must be an AWS region such as eu-west-1, got "Europe"'],
  ])('a malformed pin is refused: %j', (pin, message) => {
    expect(configError({ stage: 'prod', ...pin })).toBe(message);
  });

  test('the app refuses a mismatch before it synthesizes: one line, exit 1', () => {
    const root = path.join(__dirname, '..', '..');
    const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(root, 'bin', 'app.ts')], {
      cwd: root,
      encoding: 'utf8',
      env: {
        ...process.env,
        CDK_CONTEXT_JSON: JSON.stringify(PROD_PIN),
        CDK_DEFAULT_ACCOUNT: '999988887777',
        CDK_DEFAULT_REGION: 'eu-west-1',
        CDK_OUTDIR: '/nonexistent',
      },
    });

    expect({ status: result.status, stdout: result.stdout }).toEqual({ status: 1, stdout: '' });
    expect(result.stderr).toMatch(
      /^Stage prod is pinned to account 111122223333 \(prodAccount\), but your credentials resolve account 999988887777/,
    );
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
  });
});
