import { effectReadHandler } from '../handlers/effect-read-handler';

/** GET /customers/{customerId}: loyalty points, the loyalty consumer's effect. */
export const handler = effectReadHandler({
  parameter: 'customerId',
  maxLength: 128,
  title: 'Invalid customer id',
  read: (reader, customerId) => reader.customerPoints(customerId),
  body: (customerId, points) => ({ customerId, points }),
  missing: (customerId) => `Customer ${customerId} has no points yet.`,
});
