import { App } from 'aws-cdk-lib';
import type { Template } from 'aws-cdk-lib/assertions';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { functionBuildFor, readConfig } from '../../lib/config';
import { functionBuildOf, FunctionWithDefaults, PROJECT_DIR } from '@exactly-once/cdk/function-defaults';
import { ExactlyOnceStack } from '../../lib/shop/shop-stack';
import { exportsHandler } from '../support/entry-modules';
import { findings, removeNagOutdirs, synthWithNag } from '../support/nag';
import { CONFIGURED_PROVIDERS } from '../support/providers';
import { cdkContext, synthStack } from '../support/synth';
import {
  dynamoDbGrants,
  methodAt,
  referencedId,
  resourceById,
  resourcesOfType,
  roleOfFunction,
  tableNamesOf,
  type CfnResource,
} from '../support/template';

/**
 * The shop's stack itself (lib/shop/shop-stack.ts), read from its template: its Orders table, its
 * read API's grants, its create-order's Idempotency-Key expiry, its entry folder, and cdk-nag on it.
 * What the mechanism makes of any stack is proved on the probe stack (test/exactly-once/fixtures).
 */
const DAY = 86_400;

let template: Template;
let tables: Record<string, string>;
let tablesByName: Record<string, CfnResource>;

beforeAll(() => {
  const synth = synthStack();
  template = synth.template;
  tables = tableNamesOf(synth.stack);
  tablesByName = Object.fromEntries(
    resourcesOfType(template, 'AWS::DynamoDB::Table').map(([id, r]) => [tables[id], r]),
  );
});

afterAll(removeNagOutdirs);

function table(name: string): Record<string, unknown> {
  const resource = tablesByName[name];
  if (resource === undefined) throw new Error(`No table ${name}; tables: ${Object.keys(tablesByName).join(', ')}`);
  return resource.Properties ?? {};
}
const tableId = (name: string) => {
  const id = Object.keys(tables).find((k) => tables[k] === name);
  if (id === undefined) throw new Error(`No table ${name}`);
  return id;
};
const envOf = (functionId: string) =>
  (resourceById(template, functionId).Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
    ?.Variables ?? {};
const functionsWithVariable = (name: string) =>
  resourcesOfType(template, 'AWS::Lambda::Function').filter(([id]) => envOf(id)[name] !== undefined);
const variable = (fn: CfnResource, name: string) =>
  (fn.Properties?.Environment as { Variables: Record<string, unknown> }).Variables[name];

describe('Orders', () => {
  test('is keyed pk/sk, so an order and its outbox items share a partition', () => {
    expect(table('Orders').KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
  });

  test('streams new images for the outbox relay', () => {
    expect(table('Orders').StreamSpecification).toEqual({ StreamViewType: 'NEW_IMAGE' });
  });

  test('has the sparse pending-outbox index the sweeper reads (pendingShard, createdAt)', () => {
    expect(table('Orders').GlobalSecondaryIndexes).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          IndexName: 'pendingOutbox',
          KeySchema: [
            { AttributeName: 'pendingShard', KeyType: 'HASH' },
            { AttributeName: 'createdAt', KeyType: 'RANGE' },
          ],
        }),
      ]),
    );
  });
});

describe('effects read API', () => {
  test.each([
    // The customer read checks the caller's access items on the Orders table first (a Query, CALLER# partitions only).
    ['GET /customers/{customerId}', 'customerId', { Effects: ['dynamodb:GetItem'], Orders: ['dynamodb:Query'] }],
    ['GET /inventory/{sku}', 'sku', { Effects: ['dynamodb:GetItem'] }],
  ])('%s requires IAM auth and reads only what it answers from', (route, parameter, grants) => {
    const method = methodAt(template, route);

    expect(method.properties.AuthorizationType).toBe('AWS_IAM');
    expect(method.properties.RequestParameters).toEqual({ [`method.request.path.${parameter}`]: true });
    expect(method.functionId).toBeDefined();
    const functionId = method.functionId as string;
    expect(referencedId(envOf(functionId).EFFECTS_TABLE_NAME)).toBe(tableId('Effects'));
    expect(dynamoDbGrants(template, roleOfFunction(template, functionId), tables)).toEqual(grants);
  });
});

describe('the API', () => {
  test('Idempotency-Keys expire after 24 h (create-order is configured with 86,400 s)', () => {
    const withExpiry = functionsWithVariable('IDEMPOTENCY_KEY_EXPIRY_SECONDS');

    expect(withExpiry.length).toBeGreaterThan(0);
    for (const [, fn] of withExpiry) expect(variable(fn, 'IDEMPOTENCY_KEY_EXPIRY_SECONDS')).toBe(String(DAY));
  });
});

describe('entry points', () => {
  /** The folders whose every module is a Lambda entry (a handler's first module). */
  const ENTRY_FOLDERS = ['lambdas/shop/handlers'];

  /** The entries the functions of a stage's stack run, built as bin/app.ts builds it (without bundling). */
  function entriesOfStage(context: Record<string, unknown>): Set<string> {
    const app = new App({ context: cdkContext(context) });
    const config = readConfig(app);
    const stack = new ExactlyOnceStack(app, config.stackName, { config });
    return new Set(
      stack.node
        .findAll()
        .filter((c): c is FunctionWithDefaults => c instanceof FunctionWithDefaults)
        .map((fn) => path.normalize(fn.entry)),
    );
  }

  const entryModules = (): string[] =>
    ENTRY_FOLDERS.flatMap((folder) =>
      fs
        .readdirSync(path.join(PROJECT_DIR, folder))
        .filter((file) => file.endsWith('.ts'))
        .map((file) => path.join(folder, file)),
    );

  test.each([
    ['dev', {}],
    ['prod', { stage: 'prod' }],
  ])('every module of the entry folders is the code of a function of the %s stack', (_, context) => {
    const used = entriesOfStage(context);

    expect(entryModules().filter((file) => !used.has(file))).toEqual([]);
  });

  test("every function's entry of the shop's stack exists and exports handler", () => {
    const entries = [...entriesOfStage({})];

    const withoutHandler = entries.filter((entry) => !exportsHandler(path.resolve(PROJECT_DIR, entry)));

    expect(entries.length).toBeGreaterThan(0);
    expect(withoutHandler).toEqual([]);
  });
});

describe('cdk-nag on the shop stack', () => {
  const shopStack = (app: App) => new ExactlyOnceStack(app, 'NagStack', { config: readConfig(app) });

  test('synthesizes with the AwsSolutions checks and zero unacknowledged findings', () => {
    const result = synthWithNag(shopStack);

    expect(findings(result.violations)).toEqual([]);
    expect(result.error).toBeUndefined();
  });

  test('with its providers configured, zero unacknowledged findings: each consumer reads its one API-key parameter', () => {
    const result = synthWithNag(shopStack, { providers: CONFIGURED_PROVIDERS });

    expect(findings(result.violations)).toEqual([]);
    expect(result.error).toBeUndefined();
  });
});

describe('the stack carries the build its configuration asks for, in every construct', () => {
  test.each([
    [{}],
    [{ faultInjection: 'true' }],
    [{ localRuntime: 'true' }],
    [{ openTelemetry: 'true' }],
    [{ spanSampleRate: '0.25' }],
  ])('%j', (context) => {
    const app = new App({ context: cdkContext(context) });
    const config = readConfig(app);
    const stack = new ExactlyOnceStack(app, 'BuildStack', { config });

    const builds = new Set(stack.node.findAll().map((c) => JSON.stringify(functionBuildOf(c))));

    expect(builds).toEqual(new Set([JSON.stringify(functionBuildFor(config))]));
  });
});

describe("fulfilment's transition from the inbox ledger (-c fulfilmentLegacyLedger)", () => {
  // Fulfilment is the shop's one consumer on the sequenced ledger.
  const fulfilmentEnv = (t: Template) => {
    const [fn] = resourcesOfType(t, 'AWS::Lambda::Function').filter(([, r]) =>
      JSON.stringify(r.Properties?.Environment ?? {}).includes('"CONSUMER_LEDGER":"sequenced"'),
    );
    return (fn[1].Properties?.Environment as { Variables: Record<string, unknown> }).Variables;
  };

  test('unset, the function has no FULFILMENT_LEGACY_LEDGER and reads its default (read); set, it has the value', () => {
    const set = synthStack({ fulfilmentLegacyLedger: 'write' }).template;

    expect(fulfilmentEnv(template).FULFILMENT_LEGACY_LEDGER).toBeUndefined();
    expect(fulfilmentEnv(set).FULFILMENT_LEGACY_LEDGER).toBe('write');
  });

  test('any other value fails the synth, naming the context key', () => {
    expect(() => synthStack({ fulfilmentLegacyLedger: 'of' })).toThrow(
      'Context fulfilmentLegacyLedger=of: expected one of read, off, write',
    );
  });
});
