import { z } from 'zod';

/**
 * Where the relay sends an event: one route per consumer, built by the stack
 * from the application's consumer list and handed to the relay and the
 * sweeper as JSON in one environment variable (ENV.consumerRoutes). The relay
 * knows nothing else about consumers.
 */
export interface ConsumerRoute {
  consumer: string;
  queueUrl: string;
  fifo: boolean;
  eventTypes: string[];
  /** FIFO only: the message group is the envelope's `orderingKey` (its entityId without one); absent: the entityId. */
  orderBy?: 'ordering-key';
}

const routesSchema = z
  .array(
    z.object({
      consumer: z.string().min(1),
      queueUrl: z.string().min(1),
      fifo: z.boolean(),
      eventTypes: z.array(z.string().min(1)).min(1),
      orderBy: z.literal('ordering-key').optional(),
    }),
  )
  .min(1);

/** The routes from their JSON, or an error that says what is wrong (read once, at cold start). */
export function parseRoutes(json: string, from: string): ConsumerRoute[] {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new Error(`${from} is not JSON`);
  }
  const parsed = routesSchema.safeParse(raw);
  if (!parsed.success) {
    const where = parsed.error.issues.map((i) => `${i.path.join('.') || '(list)'}: ${i.message}`).join('; ');
    throw new Error(`${from} is not a list of consumer routes: ${where}`);
  }
  return parsed.data;
}

/** The routes that take events of `type`. */
export const routesFor = (routes: readonly ConsumerRoute[], type: string): ConsumerRoute[] =>
  routes.filter((route) => route.eventTypes.includes(type));
