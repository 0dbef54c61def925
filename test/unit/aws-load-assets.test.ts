import * as fs from 'node:fs';
import * as path from 'node:path';
import { parse } from 'yaml';

/**
 * The assets for loads beyond one machine cannot run here (no AWS account), so
 * they are checked for validity instead: the Artillery scenario's structure and
 * hooks, the processor's signing, and the FIS template's shape and action ids.
 */
const dir = path.join(__dirname, '..', '..', 'tools', 'proof-kit', 'aws');

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

  test('every request is signed and every hook it names is exported by the processor', () => {
    const steps: Step[] = scenario.scenarios.flatMap((s: { flow: Step[] }) => s.flow);
    const requests = steps.filter((step) => ['get', 'post'].some((verb) => verb in step));
    const functions = steps.filter((step) => 'function' in step).map((step) => step.function as string);

    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) {
      const spec = (request.get ?? request.post) as { beforeRequest?: string };
      expect(spec.beforeRequest).toBe('signRequest');
    }
    for (const name of [...functions, 'signRequest']) expect(typeof processor[name]).toBe('function');
  });

  test('the processor SigV4-signs a request with the default credentials', async () => {
    Object.assign(process.env, {
      AWS_ACCESS_KEY_ID: 'AKIDEXAMPLE',
      AWS_SECRET_ACCESS_KEY: 'secret',
      AWS_REGION: 'eu-west-1',
    });
    const params = {
      url: '/orders',
      method: 'POST',
      headers: { 'Idempotency-Key': '"k1"' },
      json: { customerId: 'c' },
    } as Record<string, unknown>;

    await processor.signRequest(params, { vars: { target: 'https://abc.execute-api.eu-west-1.amazonaws.com/api' } });

    const headers = params.headers as Record<string, string>;
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request/,
    );
    expect(params.body).toBe('{"customerId":"c"}');
    expect(params.json).toBeUndefined();
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
