import { promisify } from 'node:util';
import { deflate, gzip } from 'node:zlib';
import { MINIMUM_COMPRESSION_BYTES } from '../lambdas/handlers/http/compression';

/** The content codings API Gateway compresses with; `identity` is the uncompressed body. */
export type ContentCoding = 'gzip' | 'deflate';

const COMPRESSING: readonly string[] = ['gzip', 'deflate'];

/** On libuv's thread pool, not the event loop: a 23 KB page takes about a millisecond of CPU to gzip. */
const ENCODERS: Record<ContentCoding, (body: Buffer) => Promise<Buffer>> = {
  gzip: promisify(gzip),
  deflate: promisify(deflate),
};

/**
 * The coding API Gateway answers a request's `Accept-Encoding` with, by its documented rules
 * ("Receive an API response with a compressed payload"): no header, an empty one or `*` alone
 * compresses nothing (the client named no coding it supports); otherwise the highest-priority
 * coding (largest q; among equal q, the first listed) must be gzip or deflate, or nothing is
 * compressed; `q=0` refuses a coding. The documentation does not say which of equal-q codings
 * wins: taking the first listed is the stricter reading (`br, gzip` stays uncompressed here), and
 * every client that lists one of them first (browsers, curl --compressed, Node's fetch) is served
 * the same in both places.
 */
export function negotiateCoding(acceptEncoding: string | undefined): ContentCoding | undefined {
  if (acceptEncoding === undefined) return undefined;
  const offers = acceptEncoding
    .split(',')
    .map((part, order) => {
      const [name, ...params] = part.split(';').map((s) => s.trim());
      const q = params.map((p) => /^q\s*=\s*([0-9.]+)$/i.exec(p)).find((m) => m !== null);
      const weight = q ? Number(q[1]) : 1;
      return { coding: name.toLowerCase(), weight: Number.isFinite(weight) ? weight : 0, order };
    })
    .filter((offer) => offer.coding !== '' && offer.weight > 0);
  if (offers.length === 0) return undefined;
  const best = offers.reduce((a, b) => (b.weight > a.weight ? b : a));
  return COMPRESSING.includes(best.coding) ? (best.coding as ContentCoding) : undefined;
}

export type CompressibleResponse = { headers: Record<string, string | string[]>; body: Buffer | string };

const hasHeader = (headers: Record<string, unknown>, name: string) =>
  Object.keys(headers).some((h) => h.toLowerCase() === name);

/**
 * An integration's response as API Gateway sends it back: compressed with the negotiated coding when
 * its body has at least `MINIMUM_COMPRESSION_BYTES` and it carries no `Content-Encoding` of its own
 * (API Gateway then takes it as already encoded). HTTP's `deflate` is the zlib format (RFC 9110),
 * which zlib's `deflate` writes. Anything else is returned as it is.
 */
export async function compressResponse<T extends CompressibleResponse>(
  response: T,
  acceptEncoding: string | undefined,
): Promise<T> {
  const coding = negotiateCoding(acceptEncoding);
  if (!coding || hasHeader(response.headers, 'content-encoding')) return response;
  const body = typeof response.body === 'string' ? Buffer.from(response.body, 'utf8') : response.body;
  if (body.length < MINIMUM_COMPRESSION_BYTES) return response;
  const encoded = await ENCODERS[coding](body);
  // The server counts the encoded body; a length the integration stated is the plain one's.
  const headers = Object.fromEntries(
    Object.entries(response.headers).filter(([name]) => name.toLowerCase() !== 'content-length'),
  );
  return { ...response, headers: { ...headers, 'Content-Encoding': coding }, body: encoded };
}
