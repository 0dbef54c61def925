import { logger } from '../runtime/observability';

/**
 * Injected crash: the process dies as a real crash would (on Lambda too), so
 * the whole batch is redelivered, including records whose effects committed.
 */
export function crashProcess(where: string): never {
  logger.error('Injected crash', { where });
  process.exit(1);
}
