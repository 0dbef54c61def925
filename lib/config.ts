import { RemovalPolicy } from 'aws-cdk-lib';
import type { Construct } from 'constructs';

/**
 * Deployment settings, read from CDK context (cdk.json or `-c key=value`).
 * Every value has a safe default so `cdk synth` works with no arguments.
 */
export interface AppConfig {
  /** `destroy` for a demo stack (the default), `retain` or `snapshot` for data you keep. */
  removalPolicy: RemovalPolicy;
  /** Optional e-mail address subscribed to the alarm topic. */
  alarmEmail?: string;
  /** API Gateway stage throttling. */
  apiRateLimit: number;
  apiBurstLimit: number;
}

const REMOVAL_POLICIES: Record<string, RemovalPolicy> = {
  destroy: RemovalPolicy.DESTROY,
  retain: RemovalPolicy.RETAIN,
  snapshot: RemovalPolicy.SNAPSHOT,
};

export function readConfig(scope: Construct): AppConfig {
  const ctx = (key: string): unknown => scope.node.tryGetContext(key);
  const removal = String(ctx('removalPolicy') ?? 'destroy');
  const removalPolicy = REMOVAL_POLICIES[removal];
  if (removalPolicy === undefined) {
    throw new Error(`Context removalPolicy must be one of ${Object.keys(REMOVAL_POLICIES).join(', ')}, got "${removal}"`);
  }
  const email = ctx('alarmEmail');
  return {
    removalPolicy,
    alarmEmail: typeof email === 'string' && email.length > 0 ? email : undefined,
    apiRateLimit: Number(ctx('apiRateLimit') ?? 200),
    apiBurstLimit: Number(ctx('apiBurstLimit') ?? 400),
  };
}
