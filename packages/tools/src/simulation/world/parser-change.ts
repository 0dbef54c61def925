/** The field the changed parse adds to every payload, and its default. */
export const PARSER_CHANGE_FIELD = 'parserChangedDefault';

/**
 * The `parserChangeAtSeconds` fault: a consumer's parse, as deployed at `nowMs` on the virtual clock.
 * From `atSeconds` on, the parse gives the payload a default field, as a deploy that added a
 * `.default()` to the consumer's schema would; the message body it came in is unchanged. Before
 * then, or without the fault, the event as parsed.
 *
 * @example
 * ```ts
 * parsedAsDeployed(event, 10_000, 5); // { ...event, payload: { ...event.payload, parserChangedDefault: 'default' } }
 * ```
 */
export function parsedAsDeployed<E extends object>(event: E, nowMs: number, atSeconds?: number): E {
  if (atSeconds === undefined || nowMs < atSeconds * 1000) return event;
  const { payload } = event as { payload?: unknown };
  const fields = payload !== null && typeof payload === 'object' ? payload : {};
  return { ...event, payload: { [PARSER_CHANGE_FIELD]: 'default', ...fields } };
}
