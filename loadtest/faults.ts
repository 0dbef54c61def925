import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
} from '@aws-sdk/client-sqs';
import { PutParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FaultPlan } from '../lambdas/domain/faults';
import type { Target } from './target';

/**
 * The fault switch per run: locally a file every function re-reads, on AWS the
 * stack's SSM parameter. Faults inside the functions come from the plan; the
 * kit itself adds poison messages and a DLQ redrive step.
 */
export type FaultName = 'crash' | 'slow' | 'transient' | 'poison' | 'relay-crash' | 'resend' | 'redrive';
export const ALL_FAULTS: FaultName[] = ['crash', 'slow', 'transient', 'poison', 'relay-crash', 'resend', 'redrive'];

export interface FaultSettings {
  enabled: FaultName[];
  /** Probability per message/record for the in-function faults. */
  rate: number;
  /** How long the slow handler sleeps (longer than the queue's visibility timeout in the fault runs). */
  slowSeconds: number;
  /** Poison messages sent to each source queue. */
  poisonPerQueue: number;
  /** TEST ONLY: consumers whose inbox claim is switched off (proves the verification can fail). */
  disableInboxClaim?: string[];
}

export function faultPlanOf(settings: FaultSettings): FaultPlan {
  const on = (name: FaultName) => settings.enabled.includes(name);
  return {
    crashAfterEffect: on('crash') ? settings.rate : undefined,
    slowHandler: on('slow') ? settings.rate : undefined,
    slowHandlerSeconds: on('slow') ? settings.slowSeconds : undefined,
    transientError: on('transient') ? settings.rate : undefined,
    relayCrashAfterPublish: on('relay-crash') ? settings.rate : undefined,
    producerResend: on('resend') ? settings.rate : undefined,
    disableInboxClaim: settings.disableInboxClaim,
  };
}

export async function setFaultPlan(target: Target, plan: FaultPlan): Promise<void> {
  const json = JSON.stringify(plan);
  if ('file' in target.faultSwitch) {
    fs.mkdirSync(path.dirname(target.faultSwitch.file), { recursive: true });
    fs.writeFileSync(target.faultSwitch.file, json);
  } else {
    const ssm = new SSMClient({});
    await ssm.send(new PutParameterCommand({ Name: target.faultSwitch.parameterName, Value: json, Overwrite: true, Type: 'String' }));
    ssm.destroy();
  }
}

/** How long functions may keep using an old plan (their cache period), plus a margin. */
export const FAULT_SWITCH_DELAY_MS = 6_000;

export function poisonBody(runId: string, n: number): string {
  return JSON.stringify({ poison: true, runId, n, note: 'not an order event: must end in the DLQ with failureCause SchemaViolation' });
}

export async function sendPoison(target: Target, runId: string, perQueue: number): Promise<number> {
  let sent = 0;
  for (let n = 0; n < perQueue; n++) {
    await target.sqs.send(new SendMessageCommand({ QueueUrl: target.outputs.LoyaltyQueueUrl, MessageBody: poisonBody(runId, n) }));
    await target.sqs.send(
      new SendMessageCommand({
        QueueUrl: target.outputs.FulfilmentQueueUrl,
        MessageBody: poisonBody(runId, n),
        MessageGroupId: `poison-${runId}-${n}`,
        MessageDeduplicationId: `poison-${runId}-${n}`,
      }),
    );
    sent += 2;
  }
  return sent;
}

/**
 * The DLQ redrive step, done the portable way (receive, send to the source,
 * delete): every message that is not a known poison message goes back to its
 * source queue; poison stays in the DLQ where it belongs. Returns how many moved.
 */
export async function redriveDeadLetters(target: Target, isPoison: (body: string) => boolean): Promise<number> {
  let moved = 0;
  const pairs = [
    { dlq: target.outputs.LoyaltyDlqUrl, source: target.outputs.LoyaltyQueueUrl, fifo: false },
    { dlq: target.outputs.FulfilmentDlqUrl, source: target.outputs.FulfilmentQueueUrl, fifo: true },
  ];
  for (const { dlq, source, fifo } of pairs) {
    const kept: string[] = [];
    for (let round = 0; round < 50; round++) {
      const { Messages = [] } = await target.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: dlq, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, VisibilityTimeout: 30, MessageSystemAttributeNames: ['All'] }),
      );
      const movable = Messages.filter((m) => !isPoison(m.Body ?? ''));
      kept.push(...Messages.filter((m) => isPoison(m.Body ?? '')).map((m) => m.ReceiptHandle!));
      if (Messages.length === 0) break;
      for (const message of movable) {
        await target.sqs.send(
          new SendMessageCommand({
            QueueUrl: source,
            MessageBody: message.Body,
            ...(fifo
              ? { MessageGroupId: message.Attributes?.MessageGroupId ?? 'redrive', MessageDeduplicationId: `redrive-${message.MessageId}` }
              : {}),
          }),
        );
        await target.sqs.send(new DeleteMessageCommand({ QueueUrl: dlq, ReceiptHandle: message.ReceiptHandle }));
        moved += 1;
      }
    }
    // Poison stays, visible again at once for the final DLQ inventory.
    for (const handle of kept) {
      await target.sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: dlq, ReceiptHandle: handle, VisibilityTimeout: 0 }));
    }
  }
  return moved;
}

/**
 * The slow-handler fault needs a handler slower than its queue's visibility
 * timeout. A conforming deployment makes that impossible (visibility >= 6 x the
 * function timeout, enforced at synth), so locally the kit shortens the source
 * queues' visibility for the run, breaking the rule on purpose, and restores it
 * afterwards. On AWS the same fault makes the handler run into its own timeout.
 * Returns the restore function.
 */
export async function shortenVisibilityForSlowFault(target: Target, seconds: number): Promise<() => Promise<void>> {
  const urls = [target.outputs.FulfilmentQueueUrl, target.outputs.LoyaltyQueueUrl];
  const original = await Promise.all(
    urls.map(async (url) => {
      const { Attributes = {} } = await target.sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['VisibilityTimeout'] }));
      return Attributes.VisibilityTimeout ?? '30';
    }),
  );
  await Promise.all(urls.map((url) => target.sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: String(seconds) } }))));
  return async () => {
    await Promise.all(urls.map((url, i) => target.sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { VisibilityTimeout: original[i] } }))));
  };
}
