import type { Template } from 'aws-cdk-lib/assertions';
import { MAX_ITEMS } from '../../lambdas/shop/domain/order';
import { ENV } from '@exactly-once/runtime/env-names';
import { SHOP_ENV } from '../../lambdas/shop/env-names';
import { configError, synthStack } from '../support/synth';
import {
  apiMethods,
  dynamoDbGrants,
  managedPolicyArnsOfRole,
  methodAt,
  referencedId,
  referencedIds,
  resourceById,
  resourcesOfType,
  roleOfFunction,
  statementsOfRole,
  tableNamesOf,
} from '../support/template';

/**
 * The shop's REST API and the functions behind it, read from the shop stack's
 * template: its routes, models, per-route grants and caller rule. Functions are
 * found through the routes and roles that use them, never by hard-coded logical
 * ids, so adding functions does not break this. (What the mechanism's IamRestApi
 * gives any API, gateway responses, access logs and throttling: iam-rest-api.test.ts.)
 */
let template: Template;
let tables: Record<string, string>;

beforeAll(() => {
  const synth = synthStack();
  template = synth.template;
  tables = tableNamesOf(synth.stack);
});

const ordersTableId = () => Object.entries(tables).find(([, name]) => name === 'Orders')![0];

/** A role's policy statements as synthesized, conditions included. */
function rawStatementsOfRole(roleId: string): { Action: unknown; Resource: unknown; Condition?: unknown }[] {
  return resourcesOfType(template, 'AWS::IAM::Policy')
    .filter(([, policy]) => referencedIds(policy.Properties?.Roles).includes(roleId))
    .flatMap(([, policy]) => (policy.Properties?.PolicyDocument as { Statement: never[] }).Statement);
}

const ORDER_ROUTES = ['POST /orders', 'POST /orders/{orderId}/cancel', 'GET /orders/{orderId}'];

describe('methods', () => {
  test('the contract routes exist, each a Lambda proxy integration', () => {
    for (const route of ORDER_ROUTES) {
      const method = methodAt(template, route);
      expect(method.properties.Integration).toMatchObject({ Type: 'AWS_PROXY' });
      expect(method.functionId).toBeDefined();
    }
  });

  test('every method requires IAM (SigV4) auth; there is no method without', () => {
    const methods = apiMethods(template);

    expect(methods.length).toBeGreaterThanOrEqual(ORDER_ROUTES.length);
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

  test('POST /orders requires the Idempotency-Key header and a JSON body matching the order model', () => {
    const post = methodAt(template, 'POST /orders');

    expect(post.properties.RequestParameters).toEqual({ 'method.request.header.Idempotency-Key': true });
    const modelId = referencedId((post.properties.RequestModels as Record<string, unknown>)['application/json']);
    expect(modelId).toBeDefined();
    const model = resourceById(template, modelId!).Properties as {
      ContentType: string;
      Schema: Record<string, unknown>;
    };
    expect(model.ContentType).toBe('application/json');
    // API Gateway validates with JSON Schema draft 4 only.
    expect(model.Schema).toMatchObject({
      $schema: 'http://json-schema.org/draft-04/schema#',
      type: 'object',
      required: expect.arrayContaining(['customerId', 'items']),
      additionalProperties: false,
      properties: {
        // The identifier set (SQS-deliverable) is enforced at the gateway too, not only in the handler.
        customerId: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._:-]*$' },
        items: {
          type: 'array',
          minItems: 1,
          maxItems: MAX_ITEMS,
          items: {
            type: 'object',
            required: expect.arrayContaining(['sku', 'quantity', 'unitPriceCents']),
            additionalProperties: false,
            properties: {
              sku: { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._:-]*$' },
              quantity: { type: 'integer', minimum: 1 },
              unitPriceCents: { type: 'integer', minimum: 0 },
            },
          },
        },
      },
    });
  });

  test.each([['POST /orders/{orderId}/cancel'], ['GET /orders/{orderId}']])(
    '%s requires its orderId, and no Idempotency-Key (optional or ignored there)',
    (route) => {
      const method = methodAt(template, route);

      expect(method.properties.RequestParameters).toEqual({ 'method.request.path.orderId': true });
    },
  );
});

describe('functions', () => {
  describe('least privilege: each API function may touch only its own tables, with only its actions', () => {
    const EXPECTED: Record<string, Record<string, string[]>> = {
      // Powertools idempotency: lock (Put), fallback read (Get), complete (Update), release (Delete).
      // Orders: the transaction's two puts, and a read when a retry finds its order already there.
      'POST /orders': {
        Orders: ['dynamodb:GetItem', 'dynamodb:PutItem'],
        Idempotency: ['dynamodb:DeleteItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
      },
      // Read, then one transaction: conditional update of the order + put of the outbox item.
      'POST /orders/{orderId}/cancel': { Orders: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] },
      'GET /orders/{orderId}': { Orders: ['dynamodb:GetItem'] },
      // The caller's access to the customer (a query of its access partition, see below), then the points.
      'GET /customers/{customerId}': { Effects: ['dynamodb:GetItem'], Orders: ['dynamodb:Query'] },
      'GET /inventory/{sku}': { Effects: ['dynamodb:GetItem'] },
    };
    const X_RAY = ['xray:PutTelemetryRecords', 'xray:PutTraceSegments'];
    const OWN_LOGS = ['logs:CreateLogStream', 'logs:PutLogEvents'];

    test.each(Object.keys(EXPECTED))('%s', (route) => {
      const role = roleOfFunction(template, methodAt(template, route).functionId!);

      expect(dynamoDbGrants(template, role, tables)).toEqual(EXPECTED[route]);
      // Nothing else but X-Ray tracing and writing its own logs (test/infra/function-logs.test.ts), no managed policy.
      for (const statement of statementsOfRole(template, role)) {
        const other = statement.Action.filter((a) => !a.startsWith('dynamodb:'));
        for (const action of other) expect([...X_RAY, ...OWN_LOGS]).toContain(action);
      }
      expect(managedPolicyArnsOfRole(template, role)).toEqual([]);
    });

    test('get-customer may query the customer access partitions only, never an order', () => {
      const role = roleOfFunction(template, methodAt(template, 'GET /customers/{customerId}').functionId!);
      const onOrders = rawStatementsOfRole(role).filter((st) => JSON.stringify(st.Resource).includes(ordersTableId()));

      expect(onOrders).toEqual([
        expect.objectContaining({
          Action: 'dynamodb:Query',
          Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['CALLER#*'] } },
        }),
      ]);
    });

    test('create-order can neither scan, query, batch nor delete orders', () => {
      const role = roleOfFunction(template, methodAt(template, 'POST /orders').functionId!);
      const onOrders = dynamoDbGrants(template, role, tables).Orders;

      for (const action of ['Scan', 'Query', 'BatchWriteItem', 'BatchGetItem', 'DeleteItem', 'UpdateItem']) {
        expect(onOrders).not.toContain(`dynamodb:${action}`);
      }
    });
  });

  describe('who a caller is: every function that derives the caller gets the same rule', () => {
    const CALLER_ROUTES = [...ORDER_ROUTES, 'GET /customers/{customerId}'];
    const envOf = (t: Template, route: string) =>
      (
        resourceById(t, methodAt(t, route).functionId!).Properties?.Environment as {
          Variables: Record<string, unknown>;
        }
      ).Variables;

    test.each(CALLER_ROUTES)('%s: the default, IAM Identity Center permission sets only', (route) => {
      expect(envOf(template, route)[ENV.humanRolePatterns]).toBe('AWSReservedSSO_*');
    });

    test('a stage configures it: -c humanRolePatterns=... reaches every one of them', () => {
      const { template: configured } = synthStack({ humanRolePatterns: 'AWSReservedSSO_*,Okta-*' });

      for (const route of CALLER_ROUTES) {
        expect({ route, patterns: envOf(configured, route)[ENV.humanRolePatterns] }).toEqual({
          route,
          patterns: 'AWSReservedSSO_*,Okta-*',
        });
      }
    });

    test('cdk.json may give the patterns as a list', () => {
      const { template: configured } = synthStack({ humanRolePatterns: ['AWSReservedSSO_*', 'Okta-*'] });

      expect(envOf(configured, 'POST /orders')[ENV.humanRolePatterns]).toBe('AWSReservedSSO_*,Okta-*');
    });

    test.each([
      ['an empty value', '', /empty role-name pattern/],
      ['an empty pattern in the list', 'AWSReservedSSO_*,,Okta-*', /empty role-name pattern/],
      ['a space', 'My Role', /"My Role"/],
      ['a role path', 'team/Operators', /"team\/Operators"/],
      ['a bare wildcard', '*', /matches every role/],
      ['not a string or a list of strings', 42, /must be role-name patterns/],
    ])('synth refuses %s with a one-line error', (_name, value, message) => {
      const error = configError({ humanRolePatterns: value });

      expect(error).toMatch(/^Context humanRolePatterns/);
      expect(error).toMatch(message);
      expect(error).not.toContain('\n');
    });

    test('GET /inventory/{sku} is shared stock: it derives no caller, so it has no rule', () => {
      expect(envOf(template, 'GET /inventory/{sku}')[ENV.humanRolePatterns]).toBeUndefined();
    });

    test("get-customer reads the Orders table's access items: it has the table's name", () => {
      expect(referencedId(envOf(template, 'GET /customers/{customerId}')[SHOP_ENV.ordersTable])).toBe(ordersTableId());
    });
  });

  test('a function behind any GET route only reads', () => {
    const READS = ['dynamodb:GetItem', 'dynamodb:Query', 'dynamodb:BatchGetItem'];
    const getRoutes = apiMethods(template).filter((m) => m.route.startsWith('GET ') && m.functionId !== undefined);

    expect(getRoutes.length).toBeGreaterThan(0);
    for (const method of getRoutes) {
      const grants = dynamoDbGrants(template, roleOfFunction(template, method.functionId!), tables);
      for (const actions of Object.values(grants)) {
        for (const action of actions)
          expect({ route: method.route, action, read: READS.includes(action) }).toMatchObject({ read: true });
      }
    }
  });
});
