import { StackModel, isFifo } from '@exactly-once/cdk/aspects/model';
import { EVENT_SOURCE_MAPPING, SQS_QUEUE } from '@exactly-once/cdk/template';
import { eventSourceDefinitions } from '@exactly-once/tools/local-runtime/template/event-sources';
import type { CfnTemplate } from '@exactly-once/tools/local-runtime/template/model';
import { queueDefinitions } from '@exactly-once/tools/local-runtime/template/sqs';
import { synthProbeStack } from '../exactly-once/fixtures/probe-stack';

/**
 * The correctness aspects read the stack as it is being synthesized, the local runtime reads the
 * template synth wrote; both through packages/cdk/src/template. On the probe stack (the mechanism
 * with a standard and a FIFO consumer) they must read the same wiring: what each mapping consumes and invokes, each queue's DLQ and kind.
 */
test("the aspects' model and the local runtime read the same wiring from the stack", () => {
  // Arrange
  const { stack, template } = synthProbeStack();
  const model = new StackModel(stack);
  const local = template.toJSON() as CfnTemplate;

  // Act
  const modelSources = model.resourcesOfType(EVENT_SOURCE_MAPPING).map((esm) => {
    const source = model.eventSource(esm);
    const read =
      source.kind === 'sqs'
        ? source.queue.logicalId
        : source.kind === 'dynamodb'
          ? source.resource?.logicalId
          : undefined;
    return [esm.logicalId, read, model.targetFunction(esm).logicalId];
  });
  const { sources, unsupported } = eventSourceDefinitions(local);
  const localSources = sources.map((s) => [
    s.logicalId,
    s.kind === 'sqs' ? s.queueLogicalId : s.tableLogicalId,
    s.functionLogicalId,
  ]);
  const modelQueues = model.resourcesOfType(SQS_QUEUE).map((q) => {
    const redrive = model.deadLetterQueueOf(q);
    return [q.logicalId, isFifo(q), redrive?.dlq.logicalId, redrive?.maxReceiveCount];
  });
  const localQueues = queueDefinitions(local).map((q) => [
    q.logicalId,
    q.fifo,
    q.redrive?.deadLetterLogicalId,
    q.redrive?.maxReceiveCount,
  ]);

  // Assert
  expect(unsupported).toEqual([]);
  expect(localSources.length).toBeGreaterThan(2);
  expect(localSources.sort()).toEqual(modelSources.sort());
  expect(localQueues.sort()).toEqual(modelQueues.sort());
});
