import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { dynamoDbDocumentClient } from '../adapters/aws-clients';
import { DynamoDbEffectsReader } from '../adapters/dynamodb-ledgers';
import { requireEnv } from '../shared/config';
import { logger } from '../shared/observability';
import { json, notFound, problem, type HttpResponse } from './http';
import { unexpected } from './order-api-support';

/** GET /customers/{customerId}: loyalty points, the loyalty consumer's effect. */
const reader = new DynamoDbEffectsReader(dynamoDbDocumentClient(), requireEnv('EFFECTS_TABLE_NAME'));

export const handler = async (event: APIGatewayProxyEvent, context: Context): Promise<HttpResponse> => {
  logger.addContext(context);
  const customerId = event.pathParameters?.customerId;
  if (customerId === undefined || customerId.length === 0 || customerId.length > 128) {
    return problem({ status: 400, title: 'Invalid customer id', detail: 'customerId must be 1 to 128 characters.' });
  }
  try {
    const points = await reader.customerPoints(customerId);
    return points === undefined ? notFound(`Customer ${customerId} has no points yet.`) : json(200, { customerId, points });
  } catch (error) {
    return unexpected(error);
  }
};
