import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';
import { LOCAL_SECRET_ACCESS_KEY, verifySignature } from '@exactly-once/tools/local-runtime/api/verify-signature';

/**
 * The assets for loads beyond one machine cannot run here (no AWS account), so
 * they are checked for validity instead: the Artillery scenario's structure and
 * hooks, the processor's requests (what it signs is what it sends), and the FIS
 * template's shape and action ids. The scenario runs for real against the local
 * runtime in test/runtime/artillery.test.ts.
 */
const dir = path.join(__dirname, '..', '..', 'packages', 'tools', 'src', 'proof-kit', 'aws');

type Step = Record<string, { beforeRequest?: string; url?: string } | string>;

describe('Artillery scenario (run-lambda / run-fargate)', () => {
  const scenario = parse(fs.readFileSync(path.join(dir, 'artillery.yml'), 'utf8'));
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- Artillery loads the processor as CommonJS; so does the test.
  const processor = require(path.join(dir, 'artillery-processor.js'));

  test('has a target from the environment, phases with durations and rates, and a processor that exists', () => {
    expect(scenario.config.target).toBe('{{ $env.API_URL }}');
    expect(fs.existsSync(path.join(dir, scenario.config.processor))).toBe(true);
    expect(scenario.config.phases.length).toBeGreaterThan(0);
    for (const phase of scenario.config.phases) {
      expect(phase.duration).toBeGreaterThan(0);
      expect(phase.arrivalRate).toBeGreaterThan(0);
    }
  });

  test('every request is signed by a hook the processor exports, and every function it names exists', () => {
    const steps: Step[] = scenario.scenarios.flatMap((s: { flow: Step[] }) => s.flow);
    const requests = steps.filter((step) => ['get', 'post'].some((verb) => verb in step));
    const functions = steps.filter((step) => 'function' in step).map((step) => step.function as string);

    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) {
      const spec = (request.get ?? request.post) as { beforeRequest?: string };
      expect(['signCreate', 'signRead', 'signCancel']).toContain(spec.beforeRequest);
      expect(typeof processor[spec.beforeRequest!]).toBe('function');
    }
    for (const name of functions) expect(typeof processor[name]).toBe('function');
  });

  test('no request part is a template: Artillery renders {{ }} after beforeRequest, past the signature', () => {
    const steps: Step[] = scenario.scenarios.flatMap((s: { flow: Step[] }) => s.flow);
    const requests = steps.flatMap((step) => [step.get, step.post].filter((r) => r !== undefined));

    for (const request of requests)
      expect(JSON.stringify({ ...(request as object), capture: undefined })).not.toMatch(/\{\{/);
  });

  // The processor's credential provider is memoized for the process, as on a worker: one identity for these tests.
  beforeAll(() =>
    Object.assign(process.env, { AWS_ACCESS_KEY_ID: 'AKIALOAD', AWS_SECRET_ACCESS_KEY: LOCAL_SECRET_ACCESS_KEY }),
  );

  /** The scenario's create, its retry and the read, through the processor's hooks as Artillery calls them. */
  async function scenarioRequests(base: string) {
    const context = {
      vars: { target: base, customers: 'cust-3', skus: ['sku-2'], $testId: 'run1' } as Record<string, unknown>,
    };
    await new Promise<void>((done) => processor.chooseOrder(context, {}, done));
    const first = {
      url: `${base}/orders`,
      method: 'POST',
      headers: {},
      json: { templated: '{{ $randomString(customers) }}' },
    } as Record<string, unknown>;
    const retry = { url: `${base}/orders`, method: 'POST', headers: {} } as Record<string, unknown>;
    await processor.signCreate(first, context);
    await processor.signCreate(retry, context);
    context.vars.orderId = 'ord_1';
    const read = { url: `${base}/orders/{orderId}`, method: 'GET', headers: {} } as Record<string, unknown>;
    await processor.signRead(read, context);
    return { first, retry, read };
  }

  test("a key's retry sends the first request's body, its customer and SKU from the scenario's lists", async () => {
    const { first, retry } = await scenarioRequests('https://abc.execute-api.eu-west-1.amazonaws.com/api');

    expect(retry.body).toBe(first.body);
    expect(JSON.parse(first.body as string)).toEqual({
      customerId: 'run1-cust-3',
      items: [{ sku: 'run1-sku-2', quantity: 2, unitPriceCents: 1250 }],
    });
    expect(first.json).toBeUndefined();
    expect((first.headers as Record<string, string>)['idempotency-key']).toMatch(/^"[0-9a-f-]{36}"$/);
    expect((retry.headers as Record<string, string>)['idempotency-key']).toBe(
      (first.headers as Record<string, string>)['idempotency-key'],
    );
  });

  test('what the processor sends is what it signed: the local API, checking SigV4 as API Gateway does, accepts it', async () => {
    const base = 'http://127.0.0.1:3000';

    const { first, read } = await scenarioRequests(base);

    for (const request of [first, read]) {
      const url = new URL(request.url as string);
      const headers = request.headers as Record<string, string>;
      expect(headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIALOAD\//);
      const checked = await verifySignature({
        method: request.method as string,
        rawPath: url.pathname,
        query: url.searchParams,
        headers,
        body: Buffer.from((request.body as string | undefined) ?? ''),
        now: Date.now(),
      });
      expect(checked).toEqual({ accessKeyId: 'AKIALOAD' });
    }
    expect(read.url).toBe(`${base}/orders/ord_1`);
  });
});

describe('AWS FIS experiment template', () => {
  const template = JSON.parse(fs.readFileSync(path.join(dir, 'fis-lambda-faults.json'), 'utf8'));
  const LAMBDA_ACTIONS = [
    'aws:lambda:invocation-add-delay',
    'aws:lambda:invocation-error',
    'aws:lambda:invocation-http-integration-response',
  ];

  test('has the fields CreateExperimentTemplate requires', () => {
    expect(typeof template.description).toBe('string');
    expect(template.roleArn).toMatch(/^arn:aws:iam::/);
    expect(template.stopConditions.length).toBeGreaterThan(0);
    for (const stop of template.stopConditions) expect(['none', 'aws:cloudwatch:alarm']).toContain(stop.source);
  });

  test('targets are Lambda functions and every action uses a Lambda fault action on a declared target', () => {
    for (const target of Object.values(template.targets) as Record<string, unknown>[]) {
      expect(target.resourceType).toBe('aws:lambda:function');
      expect(target.resourceArns ?? target.resourceTags).toBeDefined();
      expect(target.selectionMode).toMatch(/^(ALL|COUNT\(\d+\)|PERCENT\(\d+\))$/);
    }
    for (const action of Object.values(template.actions) as {
      actionId: string;
      parameters: Record<string, string>;
      targets: Record<string, string>;
    }[]) {
      expect(LAMBDA_ACTIONS).toContain(action.actionId);
      expect(Object.keys(action.targets)).toEqual(['Functions']);
      expect(Object.keys(template.targets)).toContain(action.targets.Functions);
      expect(action.parameters.duration).toMatch(/^PT\d+[SMH]$/);
      const percentage = Number(action.parameters.invocationPercentage);
      expect(percentage).toBeGreaterThanOrEqual(1);
      expect(percentage).toBeLessThanOrEqual(100);
    }
  });
});
