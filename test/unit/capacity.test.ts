import { APIGatewayClient, GetAccountCommand, GetStageCommand } from '@aws-sdk/client-api-gateway';
import { GetAccountSettingsCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { capacityProblems, CONSUMER_HEADROOM, readCapacity } from '@exactly-once/tools/proof-kit/capacity';

/**
 * Before a load against a deployed stack, the account's Lambda concurrency and
 * the API stage's throttle are read, and a load they cannot carry is refused
 * with the numbers and what to change.
 */
const lambda = mockClient(LambdaClient);
const apigateway = mockClient(APIGatewayClient);
const API_URL = 'https://abc123.execute-api.eu-west-1.amazonaws.com/api/';

function account(opts: { concurrency: number; unreserved: number; stageRate?: number; accountRate?: number }) {
  lambda.on(GetAccountSettingsCommand).resolves({
    AccountLimit: { ConcurrentExecutions: opts.concurrency, UnreservedConcurrentExecutions: opts.unreserved },
  });
  apigateway
    .on(GetAccountCommand)
    .resolves({ throttleSettings: { rateLimit: opts.accountRate ?? 10_000, burstLimit: 5_000 } });
  apigateway.on(GetStageCommand, { restApiId: 'abc123', stageName: 'api' }).resolves({
    methodSettings:
      opts.stageRate === undefined
        ? {}
        : { '*/*': { throttlingRateLimit: opts.stageRate, throttlingBurstLimit: 2 * opts.stageRate } },
  });
}

beforeEach(() => {
  lambda.reset();
  apigateway.reset();
});

test("reads the account's concurrency and the stage's throttle of the API the URL names", async () => {
  account({ concurrency: 1_000, unreserved: 900, stageRate: 200 });

  const facts = await readCapacity(API_URL, 'eu-west-1');

  expect(facts).toEqual({
    accountConcurrency: 1_000,
    unreservedConcurrency: 900,
    stageRateLimit: 200,
    stageBurstLimit: 400,
    accountApiRateLimit: 10_000,
  });
});

test('a load within the throttle and the concurrency is not refused', async () => {
  account({ concurrency: 1_000, unreserved: 1_000, stageRate: 200 });

  const problems = capacityProblems(await readCapacity(API_URL, 'eu-west-1'), { rate: 100, connections: 50 });

  expect(problems).toEqual([]);
});

test("a rate above the stage's throttle is refused with the limit and the context options that raise it", async () => {
  account({ concurrency: 1_000, unreserved: 1_000, stageRate: 200 });

  const problems = capacityProblems(await readCapacity(API_URL, 'eu-west-1'), { rate: 500, connections: 50 });

  expect(problems).toEqual([
    "--rate 500 is above the stage's throttle of 200 requests/s (burst 400): lower --rate, or deploy with -c apiRateLimit=500 -c apiBurstLimit=1000",
  ]);
});

test("a new account's 10 concurrent executions cannot carry the default load: refused with the numbers", async () => {
  account({ concurrency: 10, unreserved: 10, stageRate: 200 });

  const problems = capacityProblems(await readCapacity(API_URL, 'eu-west-1'), { rate: 50, connections: 20 });

  expect(problems).toHaveLength(1);
  expect(problems[0]).toMatch(
    new RegExp(
      `^the load needs about ${20 + CONSUMER_HEADROOM} concurrent Lambda executions .* and the account has 10 unreserved of 10: .*Fargate or in another account`,
    ),
  );
});

test('no --rate is refused when the connections could outrun the stage, and allowed when they cannot', async () => {
  account({ concurrency: 1_000, unreserved: 1_000, stageRate: 200 });
  const facts = await readCapacity(API_URL, 'eu-west-1');

  const many = capacityProblems(facts, { connections: 16 });
  const few = capacityProblems(facts, { connections: 4 });

  expect(many).toEqual([
    'no --rate: the driver sends as fast as 16 connections go (up to 800 requests/s), and the stage lets through 200 requests/s; give --rate 200 or less',
  ]);
  expect(few).toEqual([]);
});
