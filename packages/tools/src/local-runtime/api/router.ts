import type { RouteDefinition } from '../template/api';

export interface RouteMatch {
  route: RouteDefinition;
  pathParameters: Record<string, string>;
}

/**
 * API Gateway's resource matching: a literal segment beats `{param}`, which
 * beats a greedy `{proxy+}`; a method on the resource, else its ANY method.
 * `resourceExists` tells a missing method from a missing resource.
 */
export class Router {
  constructor(private readonly routes: RouteDefinition[]) {}

  match(method: string, path: string): { found?: RouteMatch; resourceExists: boolean } {
    const segments = path.split('/').filter((s) => s !== '');
    let best: { score: number[]; resourcePath: string; params: Record<string, string> } | undefined;
    for (const resourcePath of new Set(this.routes.map((r) => r.resourcePath))) {
      const result = matchResource(resourcePath, segments);
      if (result !== undefined && (best === undefined || compareScores(result.score, best.score) > 0))
        best = { ...result, resourcePath };
    }
    if (best === undefined) return { resourceExists: false };
    const onResource = this.routes.filter((r) => r.resourcePath === best!.resourcePath);
    const route = onResource.find((r) => r.httpMethod === method) ?? onResource.find((r) => r.httpMethod === 'ANY');
    return { found: route && { route, pathParameters: best.params }, resourceExists: true };
  }
}

function matchResource(
  resourcePath: string,
  segments: string[],
): { score: number[]; params: Record<string, string> } | undefined {
  const parts = resourcePath.split('/').filter((s) => s !== '');
  const params: Record<string, string> = {};
  const score: number[] = [];
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    const greedy = /^\{(.+)\+\}$/.exec(part);
    if (greedy !== null) {
      if (i >= segments.length) return undefined;
      params[greedy[1]] = segments.slice(i).map(decode).join('/');
      score.push(1);
      return { score, params };
    }
    if (i >= segments.length) return undefined;
    const param = /^\{(.+)\}$/.exec(part);
    if (param !== null) {
      params[param[1]] = decode(segments[i]);
      score.push(2);
    } else if (part === segments[i]) {
      score.push(3);
    } else {
      return undefined;
    }
  }
  return parts.length === segments.length ? { score, params } : undefined;
}

function compareScores(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

function decode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
