import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import { dynamoDbDocumentClient } from '../adapters/aws-clients';
import { DynamoDbEffectsReader } from '../adapters/dynamodb-ledgers';
import { requireEnv } from '../shared/config';
import { logger } from '../shared/observability';
import { json, notFound, problem, type HttpResponse } from './http';
import { unexpected } from './order-api-support';

/** GET /inventory/{sku}: reserved stock, the fulfilment consumer's effect. */
const reader = new DynamoDbEffectsReader(dynamoDbDocumentClient(), requireEnv('EFFECTS_TABLE_NAME'));

export const handler = async (event: APIGatewayProxyEvent, context: Context): Promise<HttpResponse> => {
  logger.addContext(context);
  const sku = event.pathParameters?.sku;
  if (sku === undefined || sku.length === 0 || sku.length > 64) {
    return problem({ status: 400, title: 'Invalid SKU', detail: 'sku must be 1 to 64 characters.' });
  }
  try {
    const reserved = await reader.reservedStock(sku);
    return reserved === undefined ? notFound(`SKU ${sku} has no reservations.`) : json(200, { sku, reserved });
  } catch (error) {
    return unexpected(error);
  }
};
