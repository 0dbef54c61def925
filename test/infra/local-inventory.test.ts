import { notEmulatedTypes } from '@exactly-once/tools/local-runtime/template/inventory';
import type { CfnTemplate } from '@exactly-once/tools/local-runtime/template/model';
import { synthProbeStack } from '../exactly-once/fixtures/probe-stack';

/**
 * `npm start` lists what it does not emulate. A newcomer reading that list at every start must be
 * told why each type does not matter locally, or it reads as a gap.
 */
test('every resource type of the stack the local runtime does not emulate comes with the reason it does not matter', () => {
  // The build npm start runs: the local runtime's, with the fault switch's parameter.
  const template = synthProbeStack({ settings: { localRuntime: true } }).template.toJSON();
  const notEmulated = notEmulatedTypes(template as unknown as CfnTemplate);

  expect(notEmulated.filter((t) => t.reason === undefined).map((t) => t.type)).toEqual([]);
  expect(notEmulated.map((t) => t.type)).toEqual(expect.arrayContaining(['AWS::KMS::Key', 'AWS::SSM::Parameter']));
});
