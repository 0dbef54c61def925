import { execFileSync } from 'node:child_process';
import * as path from 'node:path';
import { exampleName } from '../support/example-reach';
import { lintTexts } from '../support/lint-texts';

/**
 * The folder boundaries the lint config holds: the mechanism (packages/runtime/src, packages/cdk/src)
 * imports nothing of the example or the tools, the example imports the mechanism through its index
 * only, only the aws/ folders import the AWS SDK, and the tools already cut loose take the example's
 * domain from their entry points, which load it (packages/tools/src/load-domain.ts). Each case lints one import line as if it were
 * written in the named file (the file need not exist), all in one ESLint process (jest cannot load
 * the ESM config itself).
 */
const ROOT = path.join(__dirname, '..', '..');
// The rules are keyed on the example's folder as package.json names it, so the cases are too: they hold
// for a fork that renames its example.
const EXAMPLE = exampleName(ROOT);

type Case = [file: string, importLine: string];
const linted = new Map<string, string[]>();

/** Lints every case of this file at once, before the tests read their results. */
function lintAll(cases: Case[]): void {
  const findings = lintTexts(
    ROOT,
    cases.map(([file, line]) => [file, `${line}\nexport const used = value;\n`] as const),
  );
  findings.forEach((found, i) =>
    linted.set(
      cases[i].join(' '),
      found.filter((f) => f.ruleId === 'no-restricted-imports').map((f) => f.message),
    ),
  );
}

function restrictedImportErrors(file: string, importLine: string): string[] {
  const errors = linted.get(`${file} ${importLine}`);
  if (errors === undefined) throw new Error(`not linted: ${file} ${importLine}`);
  return errors;
}

// The import lines are text the example-reach scan reads as imports of this file: a test-support file
// that reaches no example (cdk-app, not the shop's synth) keeps this file runnable without the example.
const EXAMPLE_FROM_MECHANISM: Case[] = [
  ['packages/runtime/src/consumer/probe.ts', `import { value } from '../../../../lambdas/${EXAMPLE}/consumers';`],
  ['packages/runtime/src/aws/probe.ts', `import { value } from '../../../../lambdas/${EXAMPLE}/aws/ledgers';`],
  ['packages/runtime/src/probe.ts', "import { value } from '@exactly-once/tools/proof-kit/verify';"],
  ['packages/cdk/src/probe.ts', `import { value } from '../../../lib/${EXAMPLE}/storage';`],
  ['packages/cdk/src/probe.ts', "import { value } from '../../../test/support/cdk-app';"],
];
const MECHANISM_PAST_ITS_INDEX: Case[] = [
  [`lambdas/${EXAMPLE}/aws/probe.ts`, "import { value } from '@exactly-once/runtime/aws/inbox-ledger';"],
  [`lambdas/${EXAMPLE}/api/probe.ts`, "import { value } from '@exactly-once/runtime/api/http';"],
  [`lambdas/${EXAMPLE}/entry-points/probe.ts`, "import { value } from '@exactly-once/runtime/testing/other';"],
  [`lambdas/${EXAMPLE}/use-cases/probe.ts`, "import { value } from '@exactly-once/runtime/aws/inbox-ledger';"],
  [`lambdas/${EXAMPLE}/aws/probe.ts`, "import { value } from '@exactly-once/runtime/wiring/consumer-wiring';"],
  [`lib/${EXAMPLE}/probe.ts`, "import { value } from '@exactly-once/cdk/outbox-relay';"],
  [`lib/${EXAMPLE}/probe.ts`, "import { value } from '../../../packages/cdk/src';"],
  [`lib/${EXAMPLE}/probe.ts`, "import { value } from '@exactly-once/runtime/env-names';"],
  ['lib/probe.ts', "import { value } from '@exactly-once/runtime/trace/span-sampling';"],
];
const ALLOWED: Case[] = [
  [`lambdas/${EXAMPLE}/aws/probe.ts`, "import { value } from '@exactly-once/runtime/aws';"],
  [`lambdas/${EXAMPLE}/api/probe.ts`, "import { value } from '@exactly-once/runtime/api';"],
  [`lambdas/${EXAMPLE}/entry-points/probe.ts`, "import { value } from '@exactly-once/runtime/runtime';"],
  [`lambdas/${EXAMPLE}/entry-points/probe.ts`, "import { value } from '@exactly-once/runtime/testing';"],
  [`lambdas/${EXAMPLE}/use-cases/probe.ts`, "import { value } from '@exactly-once/runtime';"],
  [`lambdas/${EXAMPLE}/aws/probe.ts`, "import { value } from '@aws-sdk/lib-dynamodb';"],
  ['packages/runtime/src/aws/probe.ts', "import { value } from '@aws-sdk/client-sqs';"],
  [`lib/${EXAMPLE}/probe.ts`, "import { value } from '@exactly-once/cdk';"],
  [`lib/${EXAMPLE}/probe.ts`, `import { value } from '../../lambdas/${EXAMPLE}/consumers';`],
  ['packages/tools/src/dlq/probe.ts', "import { value } from '../example';"],
];
const SDK_OUTSIDE_AWS: Case[] = [
  [`lambdas/${EXAMPLE}/domain/probe.ts`, "import { value } from '@aws-sdk/client-dynamodb';"],
  ['packages/runtime/src/consumer/probe.ts', "import { value } from '@aws-sdk/client-sqs';"],
  ['packages/runtime/src/probe.ts', "import { value } from '@aws-lambda-powertools/parameters/ssm';"],
];
const DOMAIN_PAST_THE_EXAMPLE_MODULE: Case[] = [
  ['packages/tools/src/dlq/probe.ts', `import { value } from '../../lambdas/${EXAMPLE}/consumers';`],
  ['packages/tools/src/stack.ts', `import { value } from '../lambdas/${EXAMPLE}/domain/events';`],
  ['packages/tools/src/proof-kit/faults.ts', `import { value } from '../../lambdas/${EXAMPLE}/consumers';`],
  ['packages/tools/src/scaffolder/new-consumer.ts', `import { value } from '../../lambdas/${EXAMPLE}/domain/events';`],
  [
    'packages/tools/src/local-runtime/provider/server.ts',
    `import { value } from '../../../lambdas/${EXAMPLE}/domain/order';`,
  ],
  ['packages/tools/src/simulation/campaign.ts', `import { value } from '../../tooling/${EXAMPLE}/simulation/world';`],
  ['packages/tools/src/load-domain.ts', `import { value } from '../tooling/${EXAMPLE}';`],
  ['packages/tools/src/proof-kit/verify.ts', `import { value } from '../../tooling/${EXAMPLE}/proof';`],
  ['packages/tools/src/bench/pipeline.ts', `import { value } from '../../lambdas/${EXAMPLE}/domain/order';`],
];
const AGAINST_THE_LAYERS: Case[] = [
  ['packages/runtime/src/consumer/probe.ts', "import { value } from '../aws/clients';"],
  ['packages/runtime/src/outbox/probe.ts', "import { value } from '../wiring/outbox-wiring';"],
  ['packages/runtime/src/inbox/probe.ts', "import { value } from '../api/http';"],
  ['packages/runtime/src/runtime/probe.ts', "import { value } from '../faults/plan';"],
  ['packages/runtime/src/probe.ts', "import { value } from './aws/inbox-ledger';"],
  ['packages/runtime/src/aws/probe.ts', "import { value } from '../wiring/consumer-wiring';"],
  ['packages/runtime/src/aws/probe.ts', "import { value } from '../faults/plan';"],
  ['packages/runtime/src/faults/probe.ts', "import { value } from '../wiring/outbox-wiring';"],
  ['packages/runtime/src/api/probe.ts', "import { value } from '../wiring/consumer-wiring';"],
];
const WITH_THE_LAYERS: Case[] = [
  ['packages/runtime/src/aws/probe.ts', "import { value } from '../consumer/ports';"],
  ['packages/runtime/src/faults/probe.ts', "import { value } from '../aws/ssm-json-parameter';"],
  ['packages/runtime/src/api/probe.ts', "import { value } from '../aws/transient-errors';"],
  ['packages/runtime/src/wiring/probe.ts', "import { value } from '../aws/clients';"],
  ['packages/runtime/src/wiring/probe.ts', "import { value } from '../faults/consumer-faults';"],
  ['packages/runtime/src/index.ts', "import { value } from './wiring/consumer-wiring';"],
];
const HANDLER_INTO_APP: Case[] = [
  [`lib/${EXAMPLE}/probe.ts`, `import { value } from '../../lambdas/${EXAMPLE}/entry-points/create-order';`],
  // A deployed binding reads its environment as it loads: at synth there is none.
  [`lib/${EXAMPLE}/probe.ts`, `import { handler } from '../../lambdas/${EXAMPLE}/handlers/create-order';`],
];

beforeAll(() =>
  lintAll([
    ...EXAMPLE_FROM_MECHANISM,
    ...MECHANISM_PAST_ITS_INDEX,
    ...ALLOWED,
    ...SDK_OUTSIDE_AWS,
    ...DOMAIN_PAST_THE_EXAMPLE_MODULE,
    ...AGAINST_THE_LAYERS,
    ...WITH_THE_LAYERS,
    ...HANDLER_INTO_APP,
  ]),
);

test.each(EXAMPLE_FROM_MECHANISM)('%s may not import the example, the tools or the tests: %s', (file, importLine) => {
  const errors = restrictedImportErrors(file, importLine);

  expect(errors).toEqual([expect.stringContaining('import nothing of the example')]);
});

test.each(MECHANISM_PAST_ITS_INDEX)('%s imports the mechanism through its index only: %s', (file, importLine) => {
  const errors = restrictedImportErrors(file, importLine);

  expect(errors).toEqual([expect.stringContaining('from its index')]);
});

test.each(ALLOWED)('%s may write %s', (file, importLine) => {
  expect(restrictedImportErrors(file, importLine)).toEqual([]);
});

test.each(SDK_OUTSIDE_AWS)('outside the aws/ folders %s may not import the SDK: %s', (file, importLine) => {
  const errors = restrictedImportErrors(file, importLine);

  expect(errors).toEqual([expect.stringContaining('may import the AWS SDK')]);
});

test.each(DOMAIN_PAST_THE_EXAMPLE_MODULE)(
  "%s takes the example's domain from its entry point, loaded by packages/tools/src/load-domain.ts: %s",
  (file, importLine) => {
    const errors = restrictedImportErrors(file, importLine);

    expect(errors).toEqual([expect.stringContaining('which loads it (packages/tools/src/load-domain.ts)')]);
  },
);

test.each(AGAINST_THE_LAYERS)(
  'inside the mechanism %s may not import a layer above its own: %s',
  (file, importLine) => {
    const errors = restrictedImportErrors(file, importLine);

    expect(errors).toEqual([expect.stringContaining('Layers point one way')]);
  },
);

test.each(WITH_THE_LAYERS)('inside the mechanism %s may import a layer below its own: %s', (file, importLine) => {
  expect(restrictedImportErrors(file, importLine)).toEqual([]);
});

test('no module of the mechanism imports against the layers', () => {
  const output = execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/eslint/bin/eslint.js'), '--format', 'json', 'packages/runtime/src'],
    { cwd: ROOT, encoding: 'utf8' },
  );

  const against = (JSON.parse(output) as { filePath: string; messages: { message: string }[] }[]).flatMap((file) =>
    file.messages
      .filter((m) => m.message.includes('Layers point one way'))
      .map((m) => `${file.filePath}: ${m.message}`),
  );

  expect(against).toEqual([]);
});

test.each(HANDLER_INTO_APP)('the CDK app may not import a handler module: %s %s', (file, importLine) => {
  const errors = restrictedImportErrors(file, importLine);

  expect(errors).toEqual([expect.stringContaining('Name a handler module by its path')]);
});
