import { APIGatewayClient, GetAccountCommand, GetStageCommand } from '@aws-sdk/client-api-gateway';
import { GetAccountSettingsCommand, LambdaClient } from '@aws-sdk/client-lambda';

/**
 * Before a load against a deployed stack: can the account and the stage carry
 * it? A rate beyond the stage's throttle is answered 429 by API Gateway, and
 * concurrency beyond the account's unreserved Lambda concurrency throttles
 * every function of the account, the consumers and the relay included, so a
 * run would measure the quotas, not the system. Refused before a request is
 * sent, with the numbers and what to change.
 */
export interface CapacityFacts {
  /** The account's Lambda concurrency quota (GetAccountSettings AccountLimit.ConcurrentExecutions). */
  accountConcurrency: number;
  /** What no function has reserved (AccountLimit.UnreservedConcurrentExecutions). */
  unreservedConcurrency: number;
  /** The stage's default method throttle (`*\/*`), if it has one. */
  stageRateLimit?: number;
  stageBurstLimit?: number;
  /** The account's API Gateway throttle in the region (GetAccount throttleSettings). */
  accountApiRateLimit?: number;
}

export interface PlannedLoad {
  /** Requests per second; undefined = as fast as the connections go. */
  rate?: number;
  connections: number;
}

/**
 * Lambda concurrency the load leaves the stack's own functions (the relay, the
 * sweeper and the consumers' pollers, which scale with the queues): below this, the
 * consumers are throttled by the load's API functions and the drain is the quota's.
 */
export const CONSUMER_HEADROOM = 20;
/** A deployed API's fastest round trip: without --rate, one connection sends at most 1 / this requests/s. */
export const FASTEST_ANSWER_SECONDS = 0.02;
/** A request's time in the API's function at worst, for Little's law: concurrency = rate x duration. */
export const API_SECONDS_PER_REQUEST = 1;

/** Reads the account's Lambda concurrency and the API stage's throttle for the API at `apiUrl`. */
export async function readCapacity(apiUrl: string, region: string): Promise<CapacityFacts> {
  const match = /^https:\/\/([a-z0-9]+)\.execute-api\.[a-z0-9-]+\.amazonaws\.com\/([^/]+)/.exec(apiUrl);
  const lambda = new LambdaClient({ region });
  const apigateway = new APIGatewayClient({ region });
  try {
    const { AccountLimit } = await lambda.send(new GetAccountSettingsCommand({}));
    const facts: CapacityFacts = {
      accountConcurrency: AccountLimit?.ConcurrentExecutions ?? 0,
      unreservedConcurrency: AccountLimit?.UnreservedConcurrentExecutions ?? 0,
    };
    const account = await apigateway.send(new GetAccountCommand({}));
    if (account.throttleSettings?.rateLimit !== undefined)
      facts.accountApiRateLimit = account.throttleSettings.rateLimit;
    if (match !== null) {
      const stage = await apigateway.send(new GetStageCommand({ restApiId: match[1], stageName: match[2] }));
      const all = stage.methodSettings?.['*/*'];
      if (all?.throttlingRateLimit !== undefined) facts.stageRateLimit = all.throttlingRateLimit;
      if (all?.throttlingBurstLimit !== undefined) facts.stageBurstLimit = all.throttlingBurstLimit;
    }
    return facts;
  } finally {
    lambda.destroy();
    apigateway.destroy();
  }
}

/** Why the account and stage cannot carry the load, one problem a line with what to change; [] when they can. */
export function capacityProblems(facts: CapacityFacts, load: PlannedLoad): string[] {
  const problems: string[] = [];
  const apiLimit = Math.min(facts.stageRateLimit ?? Infinity, facts.accountApiRateLimit ?? Infinity);
  const fastest = load.connections / FASTEST_ANSWER_SECONDS;
  if (load.rate === undefined && fastest > apiLimit)
    problems.push(
      `no --rate: the driver sends as fast as ${load.connections} connections go (up to ${Math.round(fastest)} requests/s), and the stage lets through ${apiLimit} requests/s; give --rate ${Math.floor(apiLimit)} or less`,
    );
  if (load.rate !== undefined && facts.stageRateLimit !== undefined && load.rate > facts.stageRateLimit)
    problems.push(
      `--rate ${load.rate} is above the stage's throttle of ${facts.stageRateLimit} requests/s (burst ${facts.stageBurstLimit ?? '?'}): lower --rate, or deploy with -c apiRateLimit=${load.rate} -c apiBurstLimit=${2 * load.rate}`,
    );
  if (load.rate !== undefined && facts.accountApiRateLimit !== undefined && load.rate > facts.accountApiRateLimit)
    problems.push(
      `--rate ${load.rate} is above the account's API Gateway throttle of ${facts.accountApiRateLimit} requests/s in this region: lower --rate, or ask for a higher quota (Service Quotas, "Throttle rate")`,
    );
  const inFlight = Math.min(load.connections, Math.ceil((load.rate ?? Infinity) * API_SECONDS_PER_REQUEST));
  const needed = inFlight + CONSUMER_HEADROOM;
  if (needed > facts.unreservedConcurrency)
    problems.push(
      `the load needs about ${needed} concurrent Lambda executions (${inFlight} for the API at ${load.connections} connections${load.rate === undefined ? '' : ` and ${load.rate}/s`}, ${CONSUMER_HEADROOM} for the consumers and the relay), and the account has ${facts.unreservedConcurrency} unreserved of ${facts.accountConcurrency}: lower --connections to ${Math.max(1, facts.unreservedConcurrency - CONSUMER_HEADROOM)} or less, or ask for a higher "Concurrent executions" quota (Service Quotas, AWS Lambda); run Artillery's workers on Fargate or in another account, not as Lambda functions in this one (docs/proof-kit.md)`,
    );
  return problems;
}
