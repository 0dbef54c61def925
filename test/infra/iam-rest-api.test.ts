import type { Template } from 'aws-cdk-lib/assertions';
import { PROBE_STACK_CONSUMERS, synthProbeStack } from '../exactly-once/fixtures/probe-stack';
import {
  apiMethods,
  referencedId,
  resourceById,
  resourcesOfType,
  roleOfFunction,
  statementsOfRole,
} from '../support/template';

/**
 * The mechanism's REST API construct (IamRestApi) and the functions of a stack ExactlyOnce builds,
 * read from the probe stack's template (its one route, POST /things): IAM on every method, request
 * validation, gateway-made errors as problem+json, access logs and throttling, the functions' runtime,
 * no wildcard grants. (The shop's routes, models and per-route grants: api.test.ts.)
 */
let template: Template;

beforeAll(() => {
  template = synthProbeStack().template;
});

describe('methods', () => {
  test('every method requires IAM (SigV4) auth; there is no method without', () => {
    const methods = apiMethods(template);

    expect(methods.length).toBeGreaterThanOrEqual(1);
    for (const method of methods) {
      expect({ route: method.route, auth: method.properties.AuthorizationType }).toEqual({
        route: method.route,
        auth: 'AWS_IAM',
      });
      expect(method.properties.ApiKeyRequired ?? false).toBe(false);
    }
  });

  test('every method is validated by a validator that checks parameters and body', () => {
    for (const method of apiMethods(template)) {
      const validatorId = referencedId(method.properties.RequestValidatorId);
      expect({ route: method.route, validatorId }).toEqual({ route: method.route, validatorId: expect.any(String) });
      expect(resourceById(template, validatorId!).Properties).toMatchObject({
        ValidateRequestBody: true,
        ValidateRequestParameters: true,
      });
    }
  });

  test('an idempotent POST requires the Idempotency-Key header and a JSON body matching its model', () => {
    const post = apiMethods(template).find((m) => m.route === 'POST /things')!;

    expect(post.properties.RequestParameters).toEqual({ 'method.request.header.Idempotency-Key': true });
    const model = referencedId((post.properties.RequestModels as Record<string, unknown>)['application/json']);
    expect(resourceById(template, model!).Type).toBe('AWS::ApiGateway::Model');
  });
});

describe('gateway-made errors are problem+json too', () => {
  /**
   * What API Gateway substitutes (simple substitution, no VTL): `messageString`
   * is the quoted, JSON-escaped message; `message` is the raw text. A SigV4
   * mismatch message contains quotes, newlines and single quotes.
   */
  const RAW_MESSAGE = `The request signature we calculated does not match the signature you provided.\n\nThe Canonical String for this request should have been\n'POST\n/api/things' "x"`;
  /** A validator message as API Gateway writes it: quotes around field names. */
  const VALIDATION_ERROR = '[object has missing required properties (["amount"])]';
  const render = (templateText: string) =>
    templateText
      .replaceAll('$context.error.messageString', JSON.stringify(RAW_MESSAGE))
      .replaceAll('$context.error.validationErrorString', VALIDATION_ERROR)
      .replaceAll('$context.error.message', RAW_MESSAGE);
  /** What a gateway response template may contain: plain substitution of these, nothing else (no VTL). */
  const SUBSTITUTED = [
    '$context.error.messageString',
    '$context.error.message',
    '$context.error.validationErrorString',
  ];

  /** Every response type with a status of its own, and that status (API Gateway's "Gateway response types"). */
  const FIXED_STATUS: Record<string, number> = {
    ACCESS_DENIED: 403,
    API_CONFIGURATION_ERROR: 500,
    AUTHORIZER_CONFIGURATION_ERROR: 500,
    AUTHORIZER_FAILURE: 500,
    BAD_REQUEST_BODY: 400,
    BAD_REQUEST_PARAMETERS: 400,
    EXPIRED_TOKEN: 403,
    INTEGRATION_FAILURE: 504,
    INTEGRATION_TIMEOUT: 504,
    INVALID_API_KEY: 403,
    INVALID_SIGNATURE: 403,
    MISSING_AUTHENTICATION_TOKEN: 403,
    QUOTA_EXCEEDED: 429,
    REQUEST_TOO_LARGE: 413,
    RESOURCE_NOT_FOUND: 404,
    THROTTLED: 429,
    UNAUTHORIZED: 401,
    UNSUPPORTED_MEDIA_TYPE: 415,
    WAF_FILTERED: 403,
  };

  type GatewayResponse = {
    StatusCode?: string;
    ResponseParameters: Record<string, string>;
    ResponseTemplates: Record<string, string>;
  };
  const gatewayResponses = () =>
    Object.fromEntries(
      resourcesOfType(template, 'AWS::ApiGateway::GatewayResponse').map(([, r]) => [
        String(r.Properties!.ResponseType),
        r.Properties as GatewayResponse,
      ]),
    );

  test.each(Object.entries(FIXED_STATUS))('%s: status %i, and a problem+json body that says it', (type, status) => {
    const response = gatewayResponses()[type];

    expect(response).toBeDefined();
    expect(response.StatusCode).toBe(String(status));
    expect(response.ResponseParameters['gatewayresponse.header.Content-Type']).toBe("'application/problem+json'");
    const body = JSON.parse(render(response.ResponseTemplates['application/json']));
    expect(body).toEqual({
      type: expect.stringMatching(/\S/),
      title: expect.stringMatching(/\S/),
      status,
      detail: RAW_MESSAGE,
    });
  });

  test.each([['DEFAULT_4XX'], ['DEFAULT_5XX']])('%s stays the fallback: problem+json, no status of its own', (type) => {
    const response = gatewayResponses()[type];

    expect(response).toBeDefined();
    expect(response.StatusCode).toBeUndefined();
    expect(response.ResponseParameters['gatewayresponse.header.Content-Type']).toBe("'application/problem+json'");
    const body = JSON.parse(render(response.ResponseTemplates['application/json']));
    expect(body).toEqual(expect.objectContaining({ type: expect.stringMatching(/\S/), detail: RAW_MESSAGE }));
  });

  test('no template uses anything but plain substitution, so what renders is what API Gateway sends', () => {
    for (const [type, response] of Object.entries(gatewayResponses())) {
      const variables = response.ResponseTemplates['application/json'].match(/\$[A-Za-z_.]+/g) ?? [];
      expect({ type, variables: variables.filter((v) => !SUBSTITUTED.includes(v)) }).toEqual({ type, variables: [] });
    }
  });

  test('a BAD_REQUEST_BODY whose validator message quotes field names still renders valid JSON', () => {
    const text = gatewayResponses().BAD_REQUEST_BODY.ResponseTemplates['application/json'];

    const body = JSON.parse(render(text));

    expect(body.status).toBe(400);
  });
});

describe('stage', () => {
  const stage = () => {
    const stages = resourcesOfType(template, 'AWS::ApiGateway::Stage');
    expect(stages).toHaveLength(1);
    return stages[0][1].Properties as {
      AccessLogSetting?: { DestinationArn: unknown; Format: string };
      MethodSettings?: Record<string, unknown>[];
    };
  };

  test('writes JSON access logs, with the caller, to a log group with a retention', () => {
    const { AccessLogSetting } = stage();

    expect(AccessLogSetting).toBeDefined();
    const format = JSON.parse(AccessLogSetting!.Format);
    expect(format).toMatchObject({
      requestId: '$context.requestId',
      caller: '$context.identity.caller',
      status: '$context.status',
    });
    const logGroupIds = resourcesOfType(template, 'AWS::Logs::LogGroup').map(([id]) => id);
    const destination = JSON.stringify(AccessLogSetting!.DestinationArn);
    const logGroupId = logGroupIds.find((id) => destination.includes(`"${id}"`));
    expect(logGroupId).toBeDefined();
    expect(resourceById(template, logGroupId!).Properties?.RetentionInDays).toBeGreaterThan(0);
  });

  test('throttles every method with the configured limits (defaults 200 rps, burst 400)', () => {
    expect(stage().MethodSettings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          HttpMethod: '*',
          ResourcePath: '/*',
          ThrottlingRateLimit: 200,
          ThrottlingBurstLimit: 400,
        }),
      ]),
    );
  });

  test("throttling limits come from the stage's settings", () => {
    const { template: configured } = synthProbeStack({ settings: { apiRateLimit: 25, apiBurstLimit: 50 } });

    const [[, configuredStage]] = resourcesOfType(configured, 'AWS::ApiGateway::Stage');

    expect(configuredStage.Properties?.MethodSettings).toEqual(
      expect.arrayContaining([expect.objectContaining({ ThrottlingRateLimit: 25, ThrottlingBurstLimit: 50 })]),
    );
  });
});

describe('functions', () => {
  test('every Lambda function runs nodejs24.x on arm64', () => {
    const functions = resourcesOfType(template, 'AWS::Lambda::Function');

    // The relay, the sweeper, one per consumer, and the API's producer.
    expect(functions.length).toBeGreaterThanOrEqual(PROBE_STACK_CONSUMERS.length + 3);
    for (const [id, fn] of functions) {
      expect({ id, runtime: fn.Properties?.Runtime, architectures: fn.Properties?.Architectures }).toEqual({
        id,
        runtime: 'nodejs24.x',
        architectures: ['arm64'],
      });
    }
  });

  test('no function role anywhere has dynamodb:* or *, or DynamoDB data access on every table', () => {
    const functions = resourcesOfType(template, 'AWS::Lambda::Function');

    for (const [id] of functions) {
      const role = roleOfFunction(template, id);
      for (const statement of statementsOfRole(template, role)) {
        expect({ id, actions: statement.Action }).toEqual({
          id,
          actions: expect.not.arrayContaining(['*', 'dynamodb:*']),
        });
        if (statement.Resource.includes('*')) {
          // The only DynamoDB action that cannot be scoped to a resource.
          const dynamo = statement.Action.filter((a) => a.startsWith('dynamodb:'));
          expect({ id, dynamo }).toEqual({ id, dynamo: dynamo.filter((a) => a === 'dynamodb:ListStreams') });
        }
      }
    }
  });
});
