import { gunzipSync, inflateSync } from 'node:zlib';
import { MINIMUM_COMPRESSION_BYTES } from '../../lambdas/handlers/http/compression';
import { compressResponse, negotiateCoding } from '../../local/response-compression';

/**
 * The local runtime compresses as API Gateway does with `minimumCompressionSize` set: the codings and
 * Accept-Encoding forms of AWS's "Receive an API response with a compressed payload", and the size
 * threshold the stack sets.
 */
describe("Accept-Encoding, negotiated as API Gateway's documentation describes it", () => {
  it.each([
    ['gzip', 'gzip'],
    ['deflate', 'deflate'],
    ['deflate,gzip', 'deflate'],
    ['gzip, deflate', 'gzip'],
    ['gzip, deflate, br, zstd', 'gzip'],
    ['deflate;q=0.5,gzip;q=1.0', 'gzip'],
    ['gzip;q=1.0,identity;q=0.5,*;q=0', 'gzip'],
    ['GZIP', 'gzip'],
  ])('%s: %s', (header, coding) => {
    expect(negotiateCoding(header)).toBe(coding);
  });

  it.each([
    ['no header (the default is *, and API Gateway then compresses nothing)', undefined],
    ['an empty header', ''],
    ['* alone', '*'],
    ['identity', 'identity'],
    ['a coding API Gateway does not support first', 'br, gzip'],
    ['a higher weight on an unsupported coding', 'gzip;q=0.5, br'],
    ['every supported coding refused', 'gzip;q=0, deflate;q=0'],
  ])('compresses nothing for %s', (_, header) => {
    expect(negotiateCoding(header)).toBeUndefined();
  });
});

describe('which responses are compressed', () => {
  const body = JSON.stringify({
    contacts: Array.from({ length: 40 }, (_, i) => ({ id: `c${i}`, displayName: `Contact ${i}` })),
  });
  const page: { statusCode: number; headers: Record<string, string>; body: string } = {
    statusCode: 200,
    headers: { 'Content-Type': 'application/json' },
    body,
  };

  it('a body at the threshold or above, with the coding asked for, and no stale Content-Length', async () => {
    // Prepare
    const stated = { ...page, headers: { ...page.headers, 'Content-Length': String(body.length) } };

    // Act
    const gzipped = await compressResponse(stated, 'gzip, deflate');
    const deflated = await compressResponse(page, 'deflate');

    // Assess
    expect(gzipped.headers).toEqual({ 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' });
    expect(gunzipSync(gzipped.body).toString('utf8')).toBe(body);
    expect(deflated.headers['Content-Encoding']).toBe('deflate');
    expect(inflateSync(deflated.body).toString('utf8')).toBe(body);
    expect(gzipped.body.length).toBeLessThan(body.length / 3);
  });

  it('a body one byte short of the threshold stays as it is; one of exactly the threshold is compressed', async () => {
    // Prepare
    const short = { ...page, body: 'x'.repeat(MINIMUM_COMPRESSION_BYTES - 1) };
    const exact = { ...page, body: 'x'.repeat(MINIMUM_COMPRESSION_BYTES) };

    // Act / Assess
    expect(await compressResponse(short, 'gzip')).toBe(short);
    expect((await compressResponse(exact, 'gzip')).headers['Content-Encoding']).toBe('gzip');
  });

  it('counts the threshold in bytes, not characters', async () => {
    // Prepare: 600 characters of two bytes each.
    const wide = { ...page, body: 'é'.repeat(600) };

    // Act / Assess
    expect((await compressResponse(wide, 'gzip')).headers['Content-Encoding']).toBe('gzip');
  });

  it('an integration response with a Content-Encoding of its own is taken as already encoded', async () => {
    // Prepare
    const encoded = { ...page, headers: { ...page.headers, 'content-encoding': 'br' } };

    // Act / Assess
    expect(await compressResponse(encoded, 'gzip')).toBe(encoded);
  });

  it('without an Accept-Encoding naming gzip or deflate first, nothing is compressed', async () => {
    expect(await compressResponse(page, undefined)).toBe(page);
    expect(await compressResponse(page, '*')).toBe(page);
  });
});
