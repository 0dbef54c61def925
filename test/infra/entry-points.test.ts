import { App, Stack } from 'aws-cdk-lib';
import * as path from 'node:path';
import { FunctionWithDefaults, PROJECT_DIR } from '@exactly-once/cdk/function-defaults';
import { buildProbeStack, type ProbeStage } from '../exactly-once/fixtures/probe-stack';
import { cdkContext } from '../support/cdk-app';
import { synthStack } from '../support/synth';
import { exportsHandler } from '../support/entry-modules';

/**
 * Every function names its code by a module path (relative to the project root, or absolute for the
 * mechanism's own, inside its installed package); the consumer
 * list names its consumers' modules the same way. On a stack ExactlyOnce builds (the probe
 * stack) and on the application's (lib/app-stack.ts, whatever its domain), no function's module is
 * missing or lacks `handler`, and a missing one fails synth.
 * (That every module of the shop's entry folder is run by a function: shop-stack.test.ts.)
 */

/** The entries the functions of a stack run (without bundling). */
function entriesOf(stack: Stack): Set<string> {
  return new Set(
    stack.node
      .findAll()
      .filter((c): c is FunctionWithDefaults => c instanceof FunctionWithDefaults)
      .map((fn) => path.normalize(fn.entry)),
  );
}

const entriesOfStage = (stage: ProbeStage) => entriesOf(buildProbeStack({ stage }).stack);

test("every function's entry exists and exports handler", () => {
  const entries = [...entriesOfStage('dev'), ...entriesOfStage('prod')];

  const withoutHandler = entries.filter((entry) => !exportsHandler(path.resolve(PROJECT_DIR, entry)));

  expect(entries.length).toBeGreaterThan(0);
  expect(withoutHandler).toEqual([]);
});

test("the application's stack: every function's entry exists and exports handler", () => {
  const entries = [...entriesOf(synthStack({ stage: 'dev' }).stack), ...entriesOf(synthStack({ stage: 'prod' }).stack)];

  const withoutHandler = entries.filter((entry) => !exportsHandler(path.resolve(PROJECT_DIR, entry)));

  expect(entries.length).toBeGreaterThan(2);
  expect(withoutHandler).toEqual([]);
});

test('a function whose entry is missing fails at synth with a one-line error', () => {
  const stack = new Stack(new App({ context: cdkContext() }), 'Probe');

  const create = () => new FunctionWithDefaults(stack, 'Fn', { entry: 'lambdas/probe/entry-points/moved-away.ts' });

  expect(create).toThrow(
    /^Entry lambdas\/probe\/entry-points\/moved-away\.ts does not exist \(a path relative to the project root\)$/,
  );
});
