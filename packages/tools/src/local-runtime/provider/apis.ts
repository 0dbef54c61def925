/**
 * How the local provider serves one provider API, where the example says more than the default: what
 * a real API of that kind answers and what it refuses. Every field is optional; a provider a consumer
 * names that the example does not describe is served with the defaults.
 */
export interface LocalProviderApi {
  /** The path of its one route (always `POST`). @default `/<name>/requests` */
  readonly route?: string;
  /** The status of a performed request's answer: 201 (created) or 202 (accepted, e.g. a queued e-mail). @default 201 */
  readonly status?: number;
  /** The prefix of the ids it answers with (`<prefix>_000001`). @default 'req' */
  readonly idPrefix?: string;
  /** Why a payload is refused with 400 before anything is performed; undefined performs it. @default none refused */
  readonly refuse?: (payload: Record<string, unknown>) => string | undefined;
  /** Fields the answer carries besides `id` and `status`. @default none */
  readonly answerFields?: (payload: Record<string, unknown>) => Record<string, unknown>;
}

/** A provider API as the local provider serves it: every field settled. */
export interface ServedApi {
  readonly name: string;
  readonly route: string;
  readonly status: number;
  readonly idPrefix: string;
  readonly refuse: (payload: Record<string, unknown>) => string | undefined;
  readonly answerFields: (payload: Record<string, unknown>) => Record<string, unknown>;
}

/**
 * The APIs to serve: every provider a consumer of the example names (its spec's `providers`), described
 * by the example's `localProviders` where it describes it. So a consumer added with its own provider
 * gets a local one under `npm start` without a tool edited. A description of a provider no consumer
 * calls is refused (a misspelt name would otherwise serve the defaults unnoticed).
 */
export function servedApis(
  consumers: readonly { readonly providers?: readonly string[] }[],
  described: Readonly<Record<string, LocalProviderApi>> = {},
): ServedApi[] {
  const names = [...new Set(consumers.flatMap((c) => c.providers ?? []))];
  // A description no consumer's provider matches is a typo, and would silently serve the defaults instead.
  const unnamed = Object.keys(described).filter((name) => !names.includes(name));
  if (unnamed.length > 0)
    throw new Error(
      `localProviders describes ${unnamed.join(', ')}, which no consumer calls (their providers: ${names.join(', ') || 'none'})`,
    );
  return names.map((name) => {
    const api = described[name] ?? {};
    return {
      name,
      route: api.route ?? `/${name}/requests`,
      status: api.status ?? 201,
      idPrefix: api.idPrefix ?? 'req',
      refuse: api.refuse ?? (() => undefined),
      answerFields: api.answerFields ?? (() => ({})),
    };
  });
}
