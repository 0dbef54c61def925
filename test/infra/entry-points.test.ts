import { App, Stack } from 'aws-cdk-lib';
import * as path from 'node:path';
import { FunctionWithDefaults, PROJECT_DIR } from '@exactly-once/cdk/function-defaults';
import { buildProbeStack, type ProbeStage } from '../exactly-once/fixtures/probe-stack';
import { cdkContext } from '../support/cdk-app';
import { exportsHandler } from '../support/entry-modules';

/**
 * Every function names its code by a module path (relative to the project root, or absolute for the
 * mechanism's own, inside its installed package); the consumer
 * list names its consumers' modules the same way. On a stack ExactlyOnce builds (the probe
 * stack), no function's module is missing or lacks `handler`, and a missing one fails synth.
 * (That every module of the shop's entry folder is run by a function: shop-stack.test.ts.)
 */

/** The entries the functions of a stage's stack run (without bundling). */
function entriesOfStage(stage: ProbeStage): Set<string> {
  const { stack } = buildProbeStack({ stage });
  return new Set(
    stack.node
      .findAll()
      .filter((c): c is FunctionWithDefaults => c instanceof FunctionWithDefaults)
      .map((fn) => path.normalize(fn.entry)),
  );
}

test("every function's entry exists and exports handler", () => {
  const entries = [...entriesOfStage('dev'), ...entriesOfStage('prod')];

  const withoutHandler = entries.filter((entry) => !exportsHandler(path.resolve(PROJECT_DIR, entry)));

  expect(entries.length).toBeGreaterThan(0);
  expect(withoutHandler).toEqual([]);
});

test('a function whose entry is missing fails at synth with a one-line error', () => {
  const stack = new Stack(new App({ context: cdkContext() }), 'Probe');

  const create = () => new FunctionWithDefaults(stack, 'Fn', { entry: 'lambdas/probe/entry-points/moved-away.ts' });

  expect(create).toThrow(
    /^Entry lambdas\/probe\/entry-points\/moved-away\.ts does not exist \(a path relative to the project root\)$/,
  );
});
