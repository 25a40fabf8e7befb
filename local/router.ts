/**
 * API Gateway REST's routing, for the local runtime: the request path is matched against the
 * resources of the route manifest (`{name}` segments are path parameters), then the method is
 * looked up on the resource that matched. A path nothing matches is 404; a resource that matches
 * without the method is 405.
 */
export type RoutableRoute = { method: string; path: string };

export type RouteMatch<R> =
  | { kind: 'route'; route: R; pathParameters: Record<string, string> | null }
  | { kind: 'notFound' }
  | { kind: 'methodNotAllowed'; allow: string[] };

type Segment = { literal: string } | { param: string };

type Resource<R> = { segments: Segment[]; byMethod: Map<string, R> };

function parseTemplate(path: string): Segment[] {
  return path
    .split('/')
    .slice(1)
    .map((part) => {
      const param = /^\{(\w+)\}$/.exec(part);
      return param ? { param: param[1] } : { literal: part };
    });
}

/**
 * Literal segments win over parameters, leftmost first, as API Gateway picks the most specific
 * resource (a future `/contacts/export` must not be taken for `/contacts/{id}`).
 */
function bySpecificity<R>(a: Resource<R>, b: Resource<R>): number {
  for (let i = 0; i < Math.min(a.segments.length, b.segments.length); i += 1) {
    const aLiteral = 'literal' in a.segments[i];
    const bLiteral = 'literal' in b.segments[i];
    if (aLiteral !== bLiteral) return aLiteral ? -1 : 1;
  }
  return 0;
}

/**
 * Percent-decodes one literal segment for matching (`decodeURIComponent` leaves a literal `+` as
 * `+`: it means a space only in query strings). Undefined for malformed escapes.
 */
function decodeLiteral(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export function createRouter<R extends RoutableRoute>(routes: readonly R[], prefix: string) {
  const resources = new Map<string, Resource<R>>();
  for (const route of routes) {
    const resource = resources.get(route.path) ?? {
      segments: parseTemplate(route.path),
      byMethod: new Map<string, R>(),
    };
    resource.byMethod.set(route.method, route);
    resources.set(route.path, resource);
  }
  const ordered = [...resources.values()].sort(bySpecificity);

  return function match(method: string, rawPath: string): RouteMatch<R> {
    if (!rawPath.startsWith(`${prefix}/`)) return { kind: 'notFound' };
    // Split before any decoding, so an encoded `/` (%2F) stays inside its segment.
    const segments = rawPath.slice(prefix.length).split('/').slice(1);
    for (const resource of ordered) {
      const pathParameters = matchSegments(resource.segments, segments);
      if (pathParameters === undefined) continue;
      const route = resource.byMethod.get(method);
      // As the stack's mock integration answers it, with RFC 9110's Allow header.
      if (!route) return { kind: 'methodNotAllowed', allow: [...resource.byMethod.keys()] };
      return { kind: 'route', route, pathParameters: Object.keys(pathParameters).length > 0 ? pathParameters : null };
    }
    return { kind: 'notFound' };
  };
}

/**
 * The path parameters when the request's segments fit the template, else undefined. Parameters
 * are handed over still percent-encoded, exactly as sent, as API Gateway REST does: the handlers
 * decode them (once), and answer a malformed escape themselves.
 */
function matchSegments(template: Segment[], segments: string[]): Record<string, string> | undefined {
  if (template.length !== segments.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < template.length; i += 1) {
    const part = template[i];
    if ('param' in part) {
      if (segments[i] === '') return undefined;
      params[part.param] = segments[i];
    } else if (part.literal !== decodeLiteral(segments[i])) {
      return undefined;
    }
  }
  return params;
}
