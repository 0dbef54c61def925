import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  SQSServiceException,
} from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import { accessDeniedLine } from '@exactly-once/tools/cli/access-denied';
import { main } from '@exactly-once/tools/dlq/cli';
import type { DlqContext } from '@exactly-once/tools/dlq/context';
import { exampleDomain } from '../support/example-domain';

/**
 * On a deployed stack, a redrive (and the proof kit's faults) sends to a consumer's queue, which only the
 * stack's producers and the roles named with `-c operatorRoleArns` may do. AWS's AccessDenied becomes one
 * line that names the option, and the redrive stops with every message it held visible again.
 */
const OUTPUTS = {
  ApiUrl: 'https://example/prod/',
  ProbeFifoQueueUrl: 'https://sqs/1/probe-fifo.fifo',
  ProbeFifoDlqUrl: 'https://sqs/1/probe-fifo-dlq.fifo',
  ProbeQueueUrl: 'https://sqs/1/probe',
  ProbeDlqUrl: 'https://sqs/1/probe-dlq',
  RelayFailureQueueUrl: 'https://sqs/1/relay-failures',
  SweeperDlqUrl: 'https://sqs/1/sweeper-dlq',
};
const sqsMock = mockClient(SQSClient);
const denied = () =>
  new SQSServiceException({
    name: 'AccessDenied',
    $fault: 'client',
    $metadata: { httpStatusCode: 403 },
    message:
      'User: arn:aws:sts::111122223333:assumed-role/Dev/me is not authorized to perform: sqs:sendmessage on resource: arn:aws:sqs:eu-west-1:111122223333:probe',
  });
const message = (id: string) => ({
  MessageId: id,
  ReceiptHandle: `rh-${id}`,
  Body: JSON.stringify({ eventId: `e-${id}`, type: 'ThingHappened', occurredAt: new Date().toISOString() }),
  Attributes: { SentTimestamp: '0' },
  MessageAttributes: { failureCause: { DataType: 'String', StringValue: 'RetriesExhausted' } },
});

beforeEach(() => {
  sqsMock.reset();
  sqsMock.on(GetQueueAttributesCommand).resolves({ Attributes: { ApproximateNumberOfMessages: '2' } });
  sqsMock
    .on(ReceiveMessageCommand)
    .resolvesOnce({ Messages: [message('m-1'), message('m-2')] })
    .resolves({ Messages: [] });
  sqsMock.on(ChangeMessageVisibilityBatchCommand).resolves({});
  sqsMock.on(SendMessageCommand).rejects(denied());
});

test('a redrive refused by AWS: one line naming -c operatorRoleArns, exit 1, nothing deleted, every message visible again', async () => {
  const out: string[] = [];
  const err: string[] = [];
  const sqs = new SQSClient({ region: 'eu-west-1' });
  const domain = exampleDomain();
  const open = async () =>
    ({
      stack: { kind: 'aws', name: 'ExactlyOnce-prod', outputs: OUTPUTS, endpoints: {} },
      domain,
      sqs,
      close: () => sqs.destroy(),
    }) as unknown as DlqContext;

  const code = await main(['redrive', 'probe', '--stack', 'ExactlyOnce-prod'], {
    domain,
    out: (t) => out.push(t),
    err: (t) => err.push(t),
    open,
  });

  expect(code).toBe(1);
  expect(err).toHaveLength(1);
  expect(err[0]).not.toContain('\n');
  expect(err[0]).toMatch(/^dlq: AWS refused the call \(AccessDenied\)\./);
  expect(err[0]).toContain('-c operatorRoleArns=arn:aws:iam::<account>:role/<your role>');
  expect(sqsMock.commandCalls(SendMessageCommand)).toHaveLength(1);
  expect(sqsMock.commandCalls(DeleteMessageCommand)).toHaveLength(0);
  const released = sqsMock
    .commandCalls(ChangeMessageVisibilityBatchCommand)
    .flatMap((c) => c.args[0].input.Entries!.map((e) => e.ReceiptHandle));
  expect(released.sort()).toEqual(['rh-m-1', 'rh-m-2']);
});

test('the proof kit gets the same line under its own name; any other error is left as it is', () => {
  expect(accessDeniedLine(denied(), 'loadtest')).toMatch(
    /^loadtest: AWS refused the call \(AccessDenied\)\. .*-c operatorRoleArns=/,
  );
  expect(accessDeniedLine(Object.assign(new Error('x'), { name: 'AccessDeniedException' }), 'loadtest')).toMatch(
    /operatorRoleArns/,
  );
  expect(accessDeniedLine(new Error('socket hang up'), 'loadtest')).toBeUndefined();
  expect(accessDeniedLine(Object.assign(new Error('x'), { name: 'ThrottlingException' }), 'loadtest')).toBeUndefined();
});
