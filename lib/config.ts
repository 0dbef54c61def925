import { RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import {
  callerRule,
  CallerRuleError,
  DEFAULT_HUMAN_ROLE_PATTERNS,
  parseHumanRolePatterns,
} from '@exactly-once/runtime/api';
import { DEFAULT_SPAN_SAMPLING, type SpanSampling } from '@exactly-once/runtime/runtime';
import {
  ALLOW_RESERVED_CONCURRENCY_CONTEXT,
  providerEndpointsOf,
  PROVIDERS_CONTEXT,
  type FunctionBuild,
  type ProviderEndpoints,
} from '@exactly-once/cdk';

/*
 * The deployment's configuration: what a stage is and every option read from CDK context. It belongs to
 * the application, not to its domain: bin/app.ts reads it once and hands it to the stack, whose
 * ExactlyOnce construct takes the settings under the same names. A fork that replaces the example keeps
 * this file; it edits it to add a stage or rename the stacks.
 */

/** A deployment stage. Each deploys as its own stack (`ExactlyOnce-<stage>`), side by side in one account. */
export type Stage = 'dev' | 'prod';
export const STAGES: readonly Stage[] = ['dev', 'prod'];

/**
 * Who provides the account-wide API Gateway CloudWatch Logs role (one per
 * account and region, shared by every REST API there): `create` makes the stack
 * create it and set it on the account, and keeps both when the stack is
 * destroyed, so another stage's access logs keep working; `existing` trusts
 * that the account already has one (set by another stage or by your platform).
 */
export type ApiGatewayAccountRole = 'create' | 'existing';

/**
 * Deployment settings, read once from CDK context (cdk.json or `-c key=value`).
 * `cdk synth` works with no arguments (stage `dev`); every value is checked,
 * and a bad one stops synth with a one-line `ConfigError`.
 */
export interface AppConfig {
  stage: Stage;
  /**
   * The CloudFormation stack name: `ExactlyOnce-<stage>`, or `-c stackName=...` (e.g. `ExactlyOnceStack`
   * to keep updating a deployment made before stages existed). Every generated resource name starts with it.
   */
  stackName: string;
  /** Tables: `destroy` in dev; `retain` in prod (and only `retain` there). */
  removalPolicy: RemovalPolicy;
  /** Tables refuse DeleteTable (prod). */
  deletionProtection: boolean;
  /** Retention of every log group of the stack. */
  logRetention: RetentionDays;
  /**
   * The proof kit's fault switch: an SSM parameter, and fault code in the relay's and consumers' bundles.
   * Off unless `-c faultInjection=true`; never in prod.
   */
  faultInjection: boolean;
  /**
   * A build for the local runtime only (`npm start` and the runtime tests set `-c localRuntime=true`):
   * fault injection on, plus the test-only switch that turns the inbox claim off, which proves the
   * proof kit's verification can fail. Its template refuses to deploy. Never in prod.
   */
  localRuntime: boolean;
  /**
   * OpenTelemetry on AWS through the ADOT Lambda layer (`-c openTelemetry=true`): every function gets
   * AWS's optimized `AWSOpenTelemetryDistroJs` layer, its wrapper and the role policy it needs, and sends
   * its traces, the mechanism's hops among them, to X-Ray (cost: docs/cost.md). Off by default in
   * every stage; refused with localRuntime (the local runtime records the spans itself).
   */
  openTelemetry: boolean;
  /**
   * Which `Span` log lines the functions write (packages/runtime/src/trace/span-sampling.ts): the
   * fraction of traces kept whole (`-c spanSampleRate=0.25`, 0 to 1) and the duration from which a
   * span is slow and kept whatever the rate (`-c slowSpanMs=500`). Failed spans and a retried or
   * dead-lettered record's spans are always kept. dev: every trace; prod: one in ten (the span lines
   * are most of an order's log bytes, docs/cost.md).
   */
  spanSampling: SpanSampling;
  /** Optional e-mail address subscribed to the alarm topic; synth warns when prod has none. */
  alarmEmail?: string;
  /**
   * An on-demand throughput ceiling on every table and index, in read and in write request units per
   * second (`-c tableThroughputCeiling=N`, or `none`): a runaway load test is throttled instead of
   * billed. dev: 4,000 by default; prod: none unless asked.
   */
  tableThroughputCeiling?: number;
  /** API Gateway stage throttling: steady rate (requests/s) and burst. */
  apiRateLimit: number;
  apiBurstLimit: number;
  apiGatewayAccountRole: ApiGatewayAccountRole;
  /** Lets functions reserve concurrency (refused at synth otherwise; see packages/cdk/src/aspects/reserved-concurrency.ts). */
  allowReservedConcurrency: boolean;
  /**
   * Who a caller is (packages/runtime/src/api/caller.ts): the role-name patterns whose sessions are people, so each
   * session is a caller of its own; every other role's sessions are one caller, the role. `-c
   * humanRolePatterns=AWSReservedSSO_*,MySamlRole` (comma-separated, `*` a wildcard; cdk.json may give a list)
   * replaces the default, IAM Identity Center permission sets only (`AWSReservedSSO_*`).
   */
  humanRolePatterns: readonly string[];
  /**
   * This stage's external providers (the warehouse API, the mail API): endpoint and the SSM
   * SecureString parameter holding the API key, from the `providers` context keyed by stage (see
   * docs/deploying.md). A provider the stage does not configure is the recording test double (a
   * table, not an e-mail or a warehouse): synth warns about each one in prod.
   */
  providers: ProviderEndpoints;
  /**
   * Roles that may send to the consumers' queues besides the outbox relay and sweeper: whoever
   * redrives dead-lettered messages (the DLQ tool's `redrive`, SQS's DLQ redrive, the proof kit's
   * resend fault on a deployed stack) runs as one of them. `-c operatorRoleArns=arn:aws:iam::<acct>:role/<Name>`
   * (comma-separated; cdk.json may give a list). Default: none, so only the producers can send.
   */
  operatorRoleArns: readonly string[];
  /**
   * The stack refuses `cdk destroy` and a DeleteStack until it is switched off (prod), so the tables,
   * the DLQs and their events are not one command away from a wrong terminal.
   */
  terminationProtection: boolean;
  /**
   * Where this stage deploys, pinned by context (`-c prodAccount=111122223333 -c prodRegion=eu-west-1`, or
   * `prodAccount`/`prodRegion` in cdk.json; `dev` likewise). Unpinned, the stage goes wherever CDK resolves
   * (`CDK_DEFAULT_ACCOUNT`, `CDK_DEFAULT_REGION`: the deployer's credentials); see {@link stackEnvironment}.
   */
  pin: { account?: string; region?: string };
}

/** A bad context value. bin/app.ts prints its message alone, on one line. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

export const STACK_NAME_PREFIX = 'ExactlyOnce';

export function stackNameOf(stage: Stage): string {
  return `${STACK_NAME_PREFIX}-${stage}`;
}

/** The context key of the local runtime's build (see {@link AppConfig.localRuntime}). */
export const LOCAL_RUNTIME_CONTEXT = 'localRuntime';

/** What each stage means when no option overrides it. dev is the demo: easy to tear down. */
const STAGE_DEFAULTS: Record<
  Stage,
  {
    removal: 'destroy' | 'retain';
    logRetention: RetentionDays;
    tableThroughputCeiling?: number;
    spanSampleRate: number;
  }
> = {
  // 4,000 request units a second per table: above the soak profile's 100 orders/s, below a runaway's bill.
  dev: { removal: 'destroy', logRetention: RetentionDays.ONE_MONTH, tableThroughputCeiling: 4_000, spanSampleRate: 1 },
  // One trace in ten: failed, retried, dead-lettered and slow records are written whatever the rate.
  prod: { removal: 'retain', logRetention: RetentionDays.ONE_YEAR, spanSampleRate: 0.1 },
};

const REMOVAL_POLICIES = { destroy: RemovalPolicy.DESTROY, retain: RemovalPolicy.RETAIN } as const;

/**
 * The stage's settings from CDK context (cdk.json or `-c key=value`), each checked; a bad value throws a
 * one-line {@link ConfigError}.
 *
 * @example bin/app.ts
 * ```ts
 * const config = readConfig(app);
 * new ExactlyOnceStack(app, config.stackName, { config });
 * ```
 */
export function readConfig(scope: Construct): AppConfig {
  const ctx = (key: string): unknown => scope.node.tryGetContext(key);

  const stage = oneOf('stage', ctx('stage'), STAGES, 'dev');
  const defaults = STAGE_DEFAULTS[stage];

  if (ctx('removalPolicy') === 'snapshot') {
    // CloudFormation has no Snapshot deletion policy for DynamoDB tables; point-in-time recovery covers backups.
    throw new ConfigError(
      'Context removalPolicy=snapshot is not supported for DynamoDB tables (no CloudFormation snapshot on delete); use retain',
    );
  }
  const removal = oneOf('removalPolicy', ctx('removalPolicy'), ['destroy', 'retain'] as const, defaults.removal);
  if (stage === 'prod' && removal !== 'retain') {
    throw new ConfigError(`Context removalPolicy=${removal} is not allowed with stage=prod: prod tables are retained`);
  }

  // Off by default in every stage: a deployed fault switch is one PutParameter away from switching faults on.
  const localRuntime = flag(LOCAL_RUNTIME_CONTEXT, ctx(LOCAL_RUNTIME_CONTEXT), false);
  const faultInjection = flag('faultInjection', ctx('faultInjection'), localRuntime);
  if (stage === 'prod' && faultInjection) {
    throw new ConfigError(
      'Context faultInjection=true is not allowed with stage=prod: fault injection never ships to production',
    );
  }
  if (stage === 'prod' && localRuntime) {
    throw new ConfigError('Context localRuntime=true is not allowed with stage=prod: it is a test build');
  }
  if (localRuntime && !faultInjection) {
    throw new ConfigError('Context localRuntime=true needs fault injection: drop faultInjection=false');
  }

  const openTelemetry = flag('openTelemetry', ctx('openTelemetry'), false);
  if (openTelemetry && localRuntime) {
    throw new ConfigError(
      'Context openTelemetry=true is not allowed with localRuntime=true: the ADOT layer runs on AWS only, and the local runtime records the spans itself',
    );
  }

  let providers: ProviderEndpoints;
  try {
    providers = providerEndpointsOf(ctx(PROVIDERS_CONTEXT), stage);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }

  const apiRateLimit = positiveNumber('apiRateLimit', ctx('apiRateLimit'), 200, { integer: false });
  const apiBurstLimit = positiveNumber('apiBurstLimit', ctx('apiBurstLimit'), 400, { integer: true });

  return {
    stage,
    stackName: cloudFormationStackName('stackName', ctx('stackName')) ?? stackNameOf(stage),
    removalPolicy: REMOVAL_POLICIES[removal],
    deletionProtection: stage === 'prod',
    logRetention: defaults.logRetention,
    faultInjection,
    localRuntime,
    openTelemetry,
    spanSampling: {
      rate: fraction('spanSampleRate', ctx('spanSampleRate'), defaults.spanSampleRate),
      slowMs: positiveNumber('slowSpanMs', ctx('slowSpanMs'), DEFAULT_SPAN_SAMPLING.slowMs, { integer: true }),
    },
    alarmEmail: email('alarmEmail', ctx('alarmEmail')),
    tableThroughputCeiling:
      ctx('tableThroughputCeiling') === 'none'
        ? undefined
        : ctx('tableThroughputCeiling') === undefined
          ? defaults.tableThroughputCeiling
          : positiveNumber('tableThroughputCeiling', ctx('tableThroughputCeiling'), 0, { integer: true }),
    apiRateLimit,
    apiBurstLimit,
    apiGatewayAccountRole: oneOf(
      'apiGatewayAccountRole',
      ctx('apiGatewayAccountRole'),
      ['create', 'existing'] as const,
      'create',
    ),
    allowReservedConcurrency: flag(ALLOW_RESERVED_CONCURRENCY_CONTEXT, ctx(ALLOW_RESERVED_CONCURRENCY_CONTEXT), false),
    humanRolePatterns: humanRolePatterns('humanRolePatterns', ctx('humanRolePatterns')),
    providers,
    operatorRoleArns: roleArns('operatorRoleArns', ctx('operatorRoleArns')),
    terminationProtection: stage === 'prod',
    pin: {
      account: accountId(`${stage}Account`, ctx(`${stage}Account`)),
      region: regionName(`${stage}Region`, ctx(`${stage}Region`)),
    },
  };
}

/**
 * What a stage's stack is given besides its resources: where it deploys ({@link stackEnvironment}) and
 * whether it refuses deletion.
 *
 * @example bin/app.ts
 * ```ts
 * new ExactlyOnceStack(app, config.stackName, { config, ...stackPropsFor(config) });
 * ```
 */
export function stackPropsFor(
  config: Pick<AppConfig, 'stage' | 'pin' | 'terminationProtection'>,
  resolved?: { account?: string; region?: string },
): { env: { account?: string; region?: string }; terminationProtection: boolean } {
  return { env: stackEnvironment(config, resolved), terminationProtection: config.terminationProtection };
}

/**
 * The account and region the stage's stack deploys to: its pin, checked against what CDK resolves from the
 * deployer's credentials (`CDK_DEFAULT_ACCOUNT`, `CDK_DEFAULT_REGION`). A mismatch is refused at synth,
 * naming both, so credentials for another account cannot put a pinned stage there. prod must be pinned
 * once CDK resolves an account (credentials that could deploy it); with none resolved (offline synth, the
 * tests, CI without AWS credentials) an unpinned prod synthesizes environment-agnostic, deployable nowhere
 * by accident: a deploy resolves an account, and is refused until prod is pinned.
 *
 * @example
 * ```ts
 * stackEnvironment({ stage: 'prod', pin: { account: '111122223333', region: 'eu-west-1' } });
 * // { account: '111122223333', region: 'eu-west-1' }, or a ConfigError if the credentials are another account's
 * ```
 */
export function stackEnvironment(
  config: Pick<AppConfig, 'stage' | 'pin'>,
  resolved: { account?: string; region?: string } = {
    account: process.env.CDK_DEFAULT_ACCOUNT,
    region: process.env.CDK_DEFAULT_REGION,
  },
): { account?: string; region?: string } {
  const { stage, pin } = config;
  const [accountKey, regionKey] = [`${stage}Account`, `${stage}Region`];
  if (stage === 'prod' && resolved.account !== undefined && (pin.account === undefined || pin.region === undefined))
    throw new ConfigError(
      `Stage prod is not pinned: pass -c ${accountKey}=<account id> -c ${regionKey}=<region> (or set them in cdk.json) ` +
        `so that prod deploys where it is meant to, not wherever your credentials point (account ${resolved.account})`,
    );
  if (pin.account !== undefined && resolved.account !== undefined && pin.account !== resolved.account)
    throw new ConfigError(
      `Stage ${stage} is pinned to account ${pin.account} (${accountKey}), but your credentials resolve account ` +
        `${resolved.account} (CDK_DEFAULT_ACCOUNT): use credentials for ${pin.account}, or change ${accountKey}`,
    );
  if (pin.region !== undefined && resolved.region !== undefined && pin.region !== resolved.region)
    throw new ConfigError(
      `Stage ${stage} is pinned to region ${pin.region} (${regionKey}), but CDK resolves region ${resolved.region} ` +
        `(CDK_DEFAULT_REGION, from your profile or AWS_REGION): switch to ${pin.region}, or change ${regionKey}`,
    );
  return { account: pin.account ?? resolved.account, region: pin.region ?? resolved.region };
}

/**
 * The optional code the stage's bundles carry: fault injection when asked for, the inbox-claim bypass in
 * the local runtime's build only, the ADOT wrapper with OpenTelemetry. A stack sets it before its first
 * function; a stack that builds it by hand can forget one, and its functions then run without it.
 *
 * @example
 * ```ts
 * setFunctionBuild(this, functionBuildFor(config));
 * ```
 */
export function functionBuildFor(config: AppConfig): FunctionBuild {
  const { spanSampling } = config;
  const sampled =
    spanSampling.rate !== DEFAULT_SPAN_SAMPLING.rate || spanSampling.slowMs !== DEFAULT_SPAN_SAMPLING.slowMs;
  return {
    faultInjection: config.faultInjection,
    inboxBypass: config.localRuntime,
    openTelemetry: config.openTelemetry,
    // Only when it differs from what a function does without it: a dev template stays as it was.
    ...(sampled ? { spanSampling } : {}),
  };
}

function oneOf<T extends string>(key: string, value: unknown, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (typeof value === 'string' && (allowed as readonly string[]).includes(value)) return value as T;
  throw new ConfigError(`Context ${key} must be one of ${allowed.join(', ')}, got ${JSON.stringify(value)}`);
}

/** `-c key=true|false` arrives as a string; cdk.json and tests may pass a boolean. */
function flag(key: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new ConfigError(`Context ${key} must be true or false, got ${JSON.stringify(value)}`);
}

function positiveNumber(key: string, value: unknown, fallback: number, options: { integer: boolean }): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isFinite(n) || n <= 0 || (options.integer && !Number.isInteger(n))) {
    const what = options.integer ? 'a positive integer' : 'a positive number';
    throw new ConfigError(`Context ${key} must be ${what}, got ${JSON.stringify(value)}`);
  }
  return n;
}

/** A number from 0 to 1 (`-c spanSampleRate=0.1`). */
function fraction(key: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const n = typeof value === 'number' ? value : typeof value === 'string' && value.trim() !== '' ? Number(value) : NaN;
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new ConfigError(`Context ${key} must be a number from 0 to 1, got ${JSON.stringify(value)}`);
  return n;
}

function cloudFormationStackName(key: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === 'string' && /^[A-Za-z][A-Za-z0-9-]{0,127}$/.test(value)) return value;
  throw new ConfigError(
    `Context ${key} must be a CloudFormation stack name (a letter, then letters, digits or hyphens), got ${JSON.stringify(value)}`,
  );
}

/** A comma-separated string (`-c`) or a list of strings (cdk.json); unset is the default. */
function humanRolePatterns(key: string, value: unknown): readonly string[] {
  if (value === undefined) return DEFAULT_HUMAN_ROLE_PATTERNS;
  const patterns =
    typeof value === 'string'
      ? parseHumanRolePatterns(value)
      : Array.isArray(value) && value.every((p) => typeof p === 'string')
        ? value.map((p: string) => p.trim())
        : undefined;
  if (patterns === undefined) {
    throw new ConfigError(
      `Context ${key} must be role-name patterns, comma-separated or a list, got ${JSON.stringify(value)}`,
    );
  }
  try {
    return callerRule(patterns).humanRolePatterns;
  } catch (error) {
    if (!(error instanceof CallerRuleError)) throw error;
    throw new ConfigError(`Context ${key}: ${error.message}, got ${JSON.stringify(value)}`);
  }
}

/** IAM role ARNs, comma-separated (`-c`) or a list (cdk.json); unset is none. */
function roleArns(key: string, value: unknown): readonly string[] {
  if (value === undefined || value === '') return [];
  const arns =
    typeof value === 'string'
      ? value.split(',').map((arn) => arn.trim())
      : Array.isArray(value) && value.every((arn) => typeof arn === 'string')
        ? value.map((arn: string) => arn.trim())
        : undefined;
  const roleArn = /^arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@\/-]+$/;
  if (arns === undefined || !arns.every((arn) => roleArn.test(arn)))
    throw new ConfigError(
      `Context ${key} must be IAM role ARNs (arn:aws:iam::<account>:role/<name>), comma-separated or a list, got ${JSON.stringify(value)}`,
    );
  return arns;
}

function accountId(key: string, value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  // cdk.json may hold it as a number; leading zeros are part of an account id, so only a string keeps them.
  if (typeof value === 'string' && /^\d{12}$/.test(value)) return value;
  throw new ConfigError(`Context ${key} must be a 12-digit AWS account id (a string), got ${JSON.stringify(value)}`);
}

function regionName(key: string, value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'string' && /^[a-z]{2}(-[a-z]+)+-\d+$/.test(value)) return value;
  throw new ConfigError(`Context ${key} must be an AWS region such as eu-west-1, got ${JSON.stringify(value)}`);
}

function email(key: string, value: unknown): string | undefined {
  if (value === undefined || value === '') return undefined;
  // A shape check only: SNS sends a confirmation mail, which is the real test.
  if (typeof value === 'string' && /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(value)) return value;
  throw new ConfigError(`Context ${key} must be an e-mail address, got ${JSON.stringify(value)}`);
}
