import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { consumerOutputNames, type ConsumerSpec } from '@exactly-once/runtime/consumer-spec';
import { PROJECT_DIR } from '@exactly-once/cdk/project-dir';

/**
 * Where a stack's outputs come from, for every tool that looks inside a stack
 * (the DLQ tool, the proof kit): the local runtime resolves them into
 * `.local/outputs.json`; a deployed stack has them in CloudFormation. Both give
 * the same keys (ApiUrl, table names, queue URLs).
 */
export interface StackOutputs {
  kind: 'local' | 'aws';
  name: string;
  /** Local only: the region the emulators answer for (on AWS the SDK's own resolution applies). */
  region?: string;
  outputs: Record<string, string>;
  /** Local only: the emulators' endpoints, which every SDK client must be given explicitly. */
  endpoints: { dynamodb?: string; sqs?: string };
}

// The same settings `npm start` reads, so a runtime started with other paths is still found.
export const LOCAL_OUTPUTS_FILE = path.resolve(
  process.env.OUTPUTS_FILE ?? path.join(PROJECT_DIR, '.local', 'outputs.json'),
);

/** Local credentials: the emulators check none, and the runtime shares one database across access keys. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

interface LocalOutputsFile {
  stackName: string;
  region: string;
  endpoints: { dynamodb?: string; sqs?: string };
  stackOutputs: Record<string, string>;
}

export class StackNotFoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StackNotFoundError';
  }
}

/**
 * The local runtime is not running: no outputs file, or an endpoint in it does not answer. Every command
 * that needs the runtime exits 3 on it (packages/tools/src/cli/exit.ts), whichever way it found out.
 *
 * @example
 *   throw new RuntimeNotRunningError('No .local/outputs.json: start the local runtime first (npm start)');
 */
export class RuntimeNotRunningError extends StackNotFoundError {
  constructor(message: string) {
    super(message);
    this.name = 'RuntimeNotRunningError';
  }
}

/** The local runtime, as `npm start` (or a test) left it in its outputs file. */
export function localStackOutputs(file: string = LOCAL_OUTPUTS_FILE): StackOutputs {
  if (!fs.existsSync(file))
    throw new RuntimeNotRunningError(`No ${shownPath(file)}: start the local runtime first (npm start)`);
  const parsed = JSON.parse(fs.readFileSync(file, 'utf8')) as LocalOutputsFile;
  return {
    kind: 'local',
    name: parsed.stackName,
    region: parsed.region,
    outputs: parsed.stackOutputs,
    endpoints: parsed.endpoints,
  };
}

/**
 * Whether the local runtime whose outputs these are still answers: a TCP connection to each of its
 * emulators and its API, 1 s each. Throws StackNotFoundError naming the URL that did not answer, the
 * file it came from and what to do, so a tool run after `npm start` stopped says so in one line
 * instead of `fetch failed` or `ECONNREFUSED`. A deployed stack is not probed.
 */
export async function assertLocalRuntimeAnswers(
  stack: StackOutputs,
  file: string = LOCAL_OUTPUTS_FILE,
  apiUrl?: string,
): Promise<void> {
  if (stack.kind !== 'local') return;
  const urls = [stack.endpoints.dynamodb, stack.endpoints.sqs, apiUrl].filter((u): u is string => u !== undefined);
  for (const url of urls) {
    if (await answers(url)) continue;
    throw new RuntimeNotRunningError(
      `No local runtime answers at ${url} (from ${shownPath(file)}): start it with npm start`,
    );
  }
}

/** A path as a person reads it: relative to here when it is below here, else absolute. */
function shownPath(file: string): string {
  const relative = path.relative(process.cwd(), file);
  return relative === '' || relative.startsWith('..') ? file : relative;
}

function answers(url: string): Promise<boolean> {
  const { hostname, port, protocol } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({
      host: hostname.replace(/^\[|\]$/g, ''),
      port: Number(port || (protocol === 'https:' ? 443 : 80)),
    });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** A deployed stack's outputs, read with the user's own credentials and region. */
export async function deployedStackOutputs(stackName: string): Promise<StackOutputs> {
  const cloudFormation = new CloudFormationClient({});
  try {
    const { Stacks } = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }));
    const outputs = Object.fromEntries((Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey!, o.OutputValue!]));
    return { kind: 'aws', name: stackName, outputs, endpoints: {} };
  } finally {
    cloudFormation.destroy();
  }
}

export function requiredOutput(outputs: Record<string, string>, name: string): string {
  const value = outputs[name];
  if (value === undefined) throw new StackNotFoundError(`The stack has no output ${name}`);
  return value;
}

/** A consumer of the list with its queue and DLQ, as the stack outputs them. */
export interface ConsumerQueueUrls {
  consumer: ConsumerSpec;
  queueUrl: string;
  deadLetterQueueUrl: string;
}

/**
 * Every consumer's queue and DLQ, found by the output names its spec derives
 * (`consumerOutputNames`), so the tools name no consumer. A consumer on the list
 * that the stack does not output is an error: its queues would go unwatched.
 */
export function consumerQueueUrls(
  outputs: Record<string, string>,
  consumers: readonly ConsumerSpec[],
): ConsumerQueueUrls[] {
  return consumers.map((consumer) => {
    const names = consumerOutputNames(consumer.name);
    return {
      consumer,
      queueUrl: requiredOutput(outputs, names.queueUrl),
      deadLetterQueueUrl: requiredOutput(outputs, names.deadLetterQueueUrl),
    };
  });
}
