import { ROUTES } from '../../lambdas/handlers/api/routes';
import { API_PREFIX } from '../../lambdas/handlers/http/route-spec';
import { createRouter } from '../../local/router';

const routes = [
  { method: 'GET', path: '/contacts' },
  { method: 'POST', path: '/contacts' },
  { method: 'GET', path: '/contacts/{id}' },
  { method: 'DELETE', path: '/contacts/{id}' },
  { method: 'GET', path: '/messages/{counterpart}' },
];
const match = createRouter(routes, '/api/v1');

describe('the local router', () => {
  it('matches a literal path with no path parameters', () => {
    const result = match('POST', '/api/v1/contacts');

    expect(result).toEqual({ kind: 'route', route: routes[1], pathParameters: null });
  });

  it('hands path parameters over still percent-encoded, as API Gateway REST does', () => {
    const result = match('GET', '/api/v1/contacts/abc%20d%C3%A9f');

    expect(result).toEqual({ kind: 'route', route: routes[2], pathParameters: { id: 'abc%20d%C3%A9f' } });
  });

  it('passes a literal + and an encoded %2B exactly as sent', () => {
    const literal = match('GET', '/api/v1/messages/+14155550123');
    const encoded = match('GET', '/api/v1/messages/%2B14155550123');

    expect(literal).toMatchObject({ pathParameters: { counterpart: '+14155550123' } });
    expect(encoded).toMatchObject({ pathParameters: { counterpart: '%2B14155550123' } });
  });

  it('keeps an encoded slash inside its segment', () => {
    const result = match('GET', '/api/v1/contacts/a%2Fb');

    expect(result).toMatchObject({ kind: 'route', pathParameters: { id: 'a%2Fb' } });
  });

  it('routes a malformed escape in a parameter to its handler, which answers it', () => {
    const result = match('GET', '/api/v1/contacts/%E0%A4%A');

    expect(result).toMatchObject({ kind: 'route', route: routes[2], pathParameters: { id: '%E0%A4%A' } });
  });

  it('answers methodNotAllowed for a known path with another method', () => {
    expect(match('PATCH', '/api/v1/contacts')).toEqual({ kind: 'methodNotAllowed', allow: ['GET', 'POST'] });
    expect(match('POST', '/api/v1/contacts/some-id')).toEqual({ kind: 'methodNotAllowed', allow: ['GET', 'DELETE'] });
  });

  it.each([
    ['an unknown path', '/api/v1/calls'],
    ['a path outside the prefix', '/api/v2/contacts'],
    ['the prefix alone', '/api/v1'],
    ['a trailing slash', '/api/v1/contacts/'],
    ['an empty path parameter', '/api/v1/messages/'],
    ['too many segments', '/api/v1/contacts/a/b'],
    ['a malformed escape in a literal segment', '/api/v1/%E0%A4%A/x'],
  ])('answers notFound for %s', (_name, path) => {
    expect(match('GET', path)).toEqual({ kind: 'notFound' });
  });

  it('prefers a literal segment over a parameter, whatever the order of the routes', () => {
    const paramFirst = [
      { method: 'GET', path: '/contacts/{id}' },
      { method: 'GET', path: '/contacts/export' },
    ];

    const result = createRouter(paramFirst, '/api/v1')('GET', '/api/v1/contacts/export');

    expect(result).toEqual({ kind: 'route', route: paramFirst[1], pathParameters: null });
  });

  it('routes every entry of the route manifest to itself', () => {
    const manifest = createRouter(ROUTES, API_PREFIX);

    for (const route of ROUTES) {
      const result = manifest(route.method, `${API_PREFIX}${route.path.replace(/\{[^}]+\}/g, 'x')}`);
      expect(result).toMatchObject({ kind: 'route', route });
    }
  });
});
