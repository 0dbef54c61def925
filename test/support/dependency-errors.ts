import {
  InternalServerError,
  ProvisionedThroughputExceededException,
  RequestLimitExceeded,
  ThrottlingException,
  TransactionCanceledException,
  TransactionConflictException,
  TransactionInProgressException,
  type CancellationReason,
} from '@aws-sdk/client-dynamodb';

/**
 * DynamoDB errors a write can fail with, as the SDK raises them, each with the
 * answer the API owes: 503 + Retry-After when a retry can succeed (throttling,
 * conflicts, unavailability), 500 when the same request would fail again (a bug).
 */
export type ErrorFactory = () => Error;

const cancelled = (...codes: string[]): ErrorFactory => {
  const reasons: CancellationReason[] = codes.map((Code) => ({ Code, Message: `${Code} reason` }));
  return () =>
    new TransactionCanceledException({
      message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${codes.join(', ')}]`,
      $metadata: { httpStatusCode: 400 },
      CancellationReasons: reasons,
    });
};

const meta = { $metadata: { httpStatusCode: 400 } };

export const RETRYABLE_WRITE_ERRORS: [string, ErrorFactory][] = [
  ['a transaction cancelled by ThrottlingError', cancelled('ThrottlingError', 'None')],
  ['a transaction cancelled by ProvisionedThroughputExceeded', cancelled('None', 'ProvisionedThroughputExceeded')],
  ['a transaction cancelled by TransactionConflict', cancelled('TransactionConflict', 'None')],
  ['a transaction cancelled by throttling and a conflict', cancelled('ThrottlingError', 'TransactionConflict')],
  [
    'ThrottlingException',
    () => new ThrottlingException({ message: 'Throughput exceeds the current capacity', ...meta }),
  ],
  [
    'ProvisionedThroughputExceededException',
    () => new ProvisionedThroughputExceededException({ message: 'Rate exceeded', ...meta }),
  ],
  [
    'RequestLimitExceeded',
    () => new RequestLimitExceeded({ message: 'Throughput exceeds the account limit', ...meta }),
  ],
  [
    'TransactionConflictException',
    () => new TransactionConflictException({ message: 'Transaction is ongoing', ...meta }),
  ],
  ['TransactionInProgressException', () => new TransactionInProgressException({ message: 'in progress', ...meta })],
  [
    'InternalServerError',
    () => new InternalServerError({ message: 'Internal server error', $metadata: { httpStatusCode: 500 } }),
  ],
  [
    'ServiceUnavailable (a 503 from the service)',
    () => Object.assign(new Error('Service Unavailable'), { name: 'ServiceUnavailable', $fault: 'server' }),
  ],
  [
    'a connection refused',
    () => Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:8000'), { code: 'ECONNREFUSED' }),
  ],
  ['a connection reset', () => Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' })],
  ['a request timeout', () => Object.assign(new Error('Connection timed out after 1000 ms'), { name: 'TimeoutError' })],
];

export const BUG_WRITE_ERRORS: [string, ErrorFactory][] = [
  ['a transaction cancelled by ValidationError', cancelled('ValidationError', 'None')],
  ['a transaction cancelled by ValidationError next to throttling', cancelled('ValidationError', 'ThrottlingError')],
  [
    'a transaction cancelled by an item collection over its size limit',
    cancelled('None', 'ItemCollectionSizeLimitExceeded'),
  ],
  ['a transaction cancelled with no reasons at all', cancelled()],
];
