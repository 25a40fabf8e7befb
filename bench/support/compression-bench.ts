import type { Fixture } from './api-bench';
import { httpClient, runLoad, type HttpResponse } from './load';
import type { RuntimeProcess } from './runtime-process';
import { distribution, ratio, type Distribution } from './stats';

/**
 * Section 3b: the contact page (`GET /contacts`, 50 contacts) with and without compression, through
 * the local runtime, which compresses as API Gateway does (from 1 KiB, for a client that accepts
 * gzip). The two kinds alternate in chunks, the same connections and load each, so both see the
 * same machine. Locally the bytes cross no network: the p50 shows what compressing costs the server
 * and decompressing the client, not the transfer time it saves on a real link.
 */
export type CompressionSide = {
  /** Status line, headers and body as sent. */
  wireBytes: number;
  /** The body as sent (compressed or not). */
  bodyBytes: number;
  ms: Distribution;
  failures: number;
};

export type CompressionResult = {
  request: string;
  plain: CompressionSide;
  gzip: CompressionSide;
  /** gzip's bytes over the plain ones, on the wire. */
  bytesRatio: number;
  p50Ratio: number;
};

export type CompressionOptions = { requests: number; concurrency: number; warmup: number; chunks: number };

const PATH = '/contacts';

export async function measureCompression(
  runtime: RuntimeProcess,
  fixture: Fixture,
  options: CompressionOptions,
): Promise<CompressionResult> {
  const client = httpClient(runtime.baseUrl, options.concurrency);
  const sides = {
    plain: { samples: [] as number[], failures: 0, last: undefined as HttpResponse | undefined },
    gzip: { samples: [] as number[], failures: 0, last: undefined as HttpResponse | undefined },
  };
  const get = async (kind: 'plain' | 'gzip') => {
    const response = await client.request('GET', PATH, {
      Authorization: `Bearer ${fixture.key}`,
      ...(kind === 'gzip' && { 'Accept-Encoding': 'gzip' }),
    });
    const encoding = response.headers['content-encoding'];
    if (response.status !== 200 || (kind === 'gzip') !== (encoding === 'gzip'))
      throw new Error(`GET ${PATH} (${kind}) -> ${response.status}, Content-Encoding ${encoding}`);
    sides[kind].last = response;
  };
  try {
    for (const kind of ['plain', 'gzip'] as const) await runLoad(options.warmup, options.concurrency, () => get(kind));
    const perChunk = Math.ceil(options.requests / options.chunks);
    for (let chunk = 0; chunk < options.chunks; chunk += 1) {
      for (const kind of chunk % 2 === 0 ? (['plain', 'gzip'] as const) : (['gzip', 'plain'] as const)) {
        const run = await runLoad(perChunk, options.concurrency, () => get(kind));
        sides[kind].samples.push(...run.samples);
        sides[kind].failures += run.failures;
      }
    }
  } finally {
    client.close();
  }
  const side = (kind: 'plain' | 'gzip'): CompressionSide => ({
    wireBytes: sides[kind].last?.wireBytes ?? 0,
    bodyBytes: sides[kind].last?.bodyBytes ?? 0,
    ms: distribution(sides[kind].samples),
    failures: sides[kind].failures,
  });
  const plain = side('plain');
  const gzip = side('gzip');
  return {
    request: `GET ${PATH}`,
    plain,
    gzip,
    bytesRatio: ratio(gzip.wireBytes, plain.wireBytes),
    p50Ratio: ratio(gzip.ms.p50, plain.ms.p50),
  };
}
