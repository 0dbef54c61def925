import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { sleep } from '../sources/sleep';
import type { FunctionHost } from './function-host';

export interface AsyncInvokeOptions {
  /** EventInvokeConfig MaximumRetryAttempts (Lambda's default is 2). */
  retryAttempts: number;
  /** Lambda waits about 1 then 2 minutes between attempts; scaled down in tests. */
  retryDelaysMs: number[];
  /** The function's DeadLetterConfig queue, if it has one. */
  deadLetter?: { url: string; sqs: SQSClient };
  log: (line: string) => void;
  signal?: AbortSignal;
}

/**
 * An asynchronous invocation (EventBridge schedules): Lambda queues the
 * event, retries a failed invocation, then sends the event to the function's
 * dead-letter queue with the error as message attributes.
 */
export async function invokeAsync(host: FunctionHost, event: unknown, options: AsyncInvokeOptions): Promise<boolean> {
  for (let attempt = 0; attempt <= options.retryAttempts; attempt++) {
    if (attempt > 0)
      await sleep(options.retryDelaysMs[Math.min(attempt - 1, options.retryDelaysMs.length - 1)], options.signal);
    if (options.signal?.aborted) return false;
    const result = await host.invoke(event, 'wait');
    if (result.ok) return true;
    if (attempt === options.retryAttempts) {
      if (options.deadLetter !== undefined) {
        await options.deadLetter.sqs.send(
          new SendMessageCommand({
            QueueUrl: options.deadLetter.url,
            MessageBody: JSON.stringify(event),
            MessageAttributes: {
              RequestID: { DataType: 'String', StringValue: result.requestId },
              ErrorCode: { DataType: 'Number', StringValue: '200' },
              ErrorMessage: { DataType: 'String', StringValue: result.error.errorMessage.slice(0, 1000) },
            },
          }),
        );
        options.log(`async invocation failed ${attempt + 1} time(s); event sent to the dead-letter queue`);
      } else {
        options.log(`async invocation failed ${attempt + 1} time(s); event dropped (no dead-letter queue)`);
      }
    }
  }
  return false;
}
