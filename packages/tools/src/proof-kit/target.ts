import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import {
  callerPrincipal,
  callerRule,
  DEFAULT_CALLER_RULE,
  parseHumanRolePatterns,
} from '@exactly-once/runtime/api/caller';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import * as path from 'node:path';
import {
  deployedStackOutputs,
  LOCAL_CREDENTIALS,
  LOCAL_OUTPUTS_FILE,
  localStackOutputs,
  requiredOutput,
} from '../stack';
import { STACK_OUTPUTS } from '@exactly-once/runtime/stack-outputs';
import { LOCAL_SECRET_ACCESS_KEY } from '../local-runtime/api/verify-signature';
import type { ExampleTooling } from '../domain';
import type { CredentialSource } from './request-signer';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';

/**
 * Where the load goes and how to look inside afterwards. Both targets expose
 * the same stack outputs (ApiUrl, table names, queue URLs), locally resolved by
 * the runtime into `.local/outputs.json`, on AWS read from CloudFormation.
 */
export interface Caller {
  /** The identity API Gateway will see, which scopes keys and orders. */
  arn: string;
  /**
   * Its credentials, or their provider: on AWS the SDK's default chain, asked again while a run lasts
   * (it refreshes SSO and assumed-role credentials before they expire).
   */
  credentials: CredentialSource;
}

export interface Target {
  kind: 'local' | 'aws';
  name: string;
  region: string;
  apiUrl: string;
  outputs: Record<string, string>;
  callers: Caller[];
  dynamodb: DynamoDBClient;
  sqs: SQSClient;
  /** The domain the stack runs: its consumers, outbox output, events and proof domain. */
  domain: ExampleTooling;
  /**
   * Local: the file the functions read their fault plan from. AWS: the SSM
   * parameter, present only on a stack synthesized with `-c faultInjection=true`.
   */
  faultSwitch?: { file: string } | { parameterName: string };
  close(): void;
}

export { LOCAL_OUTPUTS_FILE };
export const LOCAL_FAULTS_FILE = path.resolve(
  process.env.FAULTS_FILE ?? path.join(PROJECT_DIR, '.local', 'faults.json'),
);

/** The local runtime, as `npm start` (or a test) left it in its outputs file. */
export function localTarget(options: {
  domain: ExampleTooling;
  outputsFile?: string;
  faultsFile?: string;
  callers?: number;
}): Target {
  const outputs = localStackOutputs(options.outputsFile ?? LOCAL_OUTPUTS_FILE);
  const credentials = LOCAL_CREDENTIALS;
  // Locally the access key id is the caller (signed with the local API's one secret); several callers exercise
  // per-caller key scoping.
  const callers = Array.from({ length: options.callers ?? 3 }, (_, i) => {
    const accessKeyId = `AKIALOADTEST${String(i + 1).padStart(4, '0')}`;
    return {
      arn: `arn:aws:iam::000000000000:user/${accessKeyId}`,
      credentials: { accessKeyId, secretAccessKey: LOCAL_SECRET_ACCESS_KEY },
    };
  });
  return {
    kind: 'local',
    name: outputs.name,
    region: outputs.region!,
    apiUrl: requiredOutput(outputs.outputs, STACK_OUTPUTS.apiUrl),
    outputs: outputs.outputs,
    callers,
    domain: options.domain,
    ...clients(
      new DynamoDBClient({ endpoint: outputs.endpoints.dynamodb, region: outputs.region, credentials }),
      // An explicit endpoint, or SDK v3 follows fauxqs's queue-URL host (sqs.<region>.localhost), which may not resolve.
      new SQSClient({ endpoint: outputs.endpoints.sqs, region: outputs.region, credentials }),
    ),
    // Only a build with fault injection (npm start's) reads the file: the FaultParameterName output says so.
    ...(outputs.outputs[STACK_OUTPUTS.faultParameterName]
      ? { faultSwitch: { file: options.faultsFile ?? LOCAL_FAULTS_FILE } }
      : {}),
  };
}

/** A deployed stack: outputs from CloudFormation, requests signed with the user's own credentials. */
export async function awsTarget(stackName: string, domain: ExampleTooling): Promise<Target> {
  const { outputs } = await deployedStackOutputs(stackName);
  const sts = new STSClient({});
  const identity = await sts.send(new GetCallerIdentityCommand({}));
  const region = await sts.config.region();
  sts.destroy();
  // The provider, not what it resolves to now: it is memoized and refreshes credentials that near expiry.
  const credentials = defaultProvider();
  return {
    kind: 'aws',
    name: stackName,
    region,
    apiUrl: requiredOutput(outputs, STACK_OUTPUTS.apiUrl),
    outputs,
    // The API scopes keys and orders to the principal (a workload role's sessions collapse to the role), so the
    // kit derives its order ids from the same principal, by the stage's rule (older stacks: the default rule).
    callers: [{ arn: deployedCaller(identity.Arn!, outputs[STACK_OUTPUTS.humanRolePatterns]), credentials }],
    domain,
    ...clients(new DynamoDBClient({}), new SQSClient({})),
    // A stack deployed without fault injection has no switch: runs without in-function faults still work.
    ...(outputs[STACK_OUTPUTS.faultParameterName]
      ? { faultSwitch: { parameterName: outputs[STACK_OUTPUTS.faultParameterName] } }
      : {}),
  };
}

/** The caller the deployed API sees for the STS identity `arn`: its principal by the stage's caller rule. */
export function deployedCaller(arn: string, humanRolePatterns: string | undefined): string {
  const rule =
    humanRolePatterns === undefined ? DEFAULT_CALLER_RULE : callerRule(parseHumanRolePatterns(humanRolePatterns));
  return callerPrincipal({ userArn: arn }, rule) ?? arn;
}

function clients(dynamodb: DynamoDBClient, sqs: SQSClient) {
  return {
    dynamodb,
    sqs,
    close() {
      dynamodb.destroy();
      sqs.destroy();
    },
  };
}
