/**
 * How the client sends a long list to a batch endpoint of the directory (`POST /contacts/batch`,
 * `POST /contacts/batch/delete`), 100 items to a request: each request carries an Idempotency-Key,
 * so a request whose answer was lost (a network error, a 5xx) is sent again as it was and answered
 * as the first time; a 429 or 503 waits its `Retry-After`; when the key's minute is spent
 * (`RateLimit-Remaining: 0`) the next request waits for its reset; items answered `unavailable` go
 * into a later request. ./contact-import.ts and ./contact-delete.ts are this with their endpoint.
 */

/** An item's answer, as both batch endpoints give it: its position and its status. */
export type BatchAnswer = { index: number; status: string };

export type BatchProgress<R extends BatchAnswer> = {
  /** Items of the source answered so far (every status). */
  done: number;
  /** Answers so far by status. */
  counts: Partial<Record<R['status'], number>>;
  /** Requests sent so far (retries included). */
  requests: number;
  /** The answers of the batch just finished. */
  batch: R[];
};

export type BatchOptions<R extends BatchAnswer> = {
  /** Called after every batch. */
  onProgress?: (progress: BatchProgress<R>) => void;
  /** Items per request, 1 to 100 (default 100: one request counts once against the key's 120 a minute). */
  batchSize?: number;
  /** Skip this many items of the source: resume where a failed run stopped (the error's `nextIndex`). */
  startAt?: number;
  /** Times one batch is sent before the run gives up (default 8); answers `unavailable` are sent again up to this many times too. */
  maxAttempts?: number;
  /** Stops the run between requests (the promise rejects with the signal's reason). */
  signal?: AbortSignal;
};

export type BatchReport<R extends BatchAnswer> = {
  /** One answer per item of the source from `startAt`, in source order. */
  results: R[];
  counts: Partial<Record<R['status'], number>>;
  requests: number;
};

/** One request of a batch endpoint, as openapi-fetch answers it. */
export type BatchPost<I, R> = (
  items: I[],
  idempotencyKey: string,
  signal: AbortSignal | undefined,
) => Promise<{ data?: { results: R[] }; error?: { code?: string; error?: string }; response: Response }>;

/** What a run that stopped rejects with: where to resume, the answers so far, why. */
export type BatchErrorFactory<R> = (
  message: string,
  nextIndex: number,
  results: R[],
  status?: number,
  code?: string,
  unavailable?: number[],
) => Error;

const MAX_BATCH = 100;
/** Waits when the API gives no Retry-After: 1, 2, 4... seconds, at most 30. */
const backoffSeconds = (attempt: number) => Math.min(30, 2 ** (attempt - 1));

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

/** Seconds to wait from a Retry-After header (seconds or an HTTP date), or undefined. */
function retryAfterSeconds(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('Retry-After');
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - now) / 1000);
}

/** Before the next request: the key's window is spent, so wait for its reset rather than meet a 429. */
function windowWaitSeconds(headers: Headers): number {
  const remaining = Number(headers.get('RateLimit-Remaining'));
  const reset = Number(headers.get('RateLimit-Reset'));
  return headers.has('RateLimit-Remaining') && remaining <= 0 && Number.isFinite(reset) ? reset : 0;
}

async function* batchesOf<T>(
  source: Iterable<T> | AsyncIterable<T>,
  size: number,
  skip: number,
): AsyncGenerator<{ start: number; items: T[] }> {
  let index = 0;
  let batch: T[] = [];
  let start = skip;
  for await (const item of source as AsyncIterable<T>) {
    if (index++ < skip) continue;
    batch.push(item);
    if (batch.length === size) {
      yield { start, items: batch };
      start += batch.length;
      batch = [];
    }
  }
  if (batch.length > 0) yield { start, items: batch };
}

type Pending<I> = { sourceIndex: number; item: I; tries: number };

/**
 * Sends the items of an array, any iterable or an async iterable (a Node stream in object mode)
 * through `post`, `batchSize` to a request. Resolves with one answer per item in source order;
 * rejects with `makeError`'s error (which says where to resume) when a batch keeps failing or the
 * API refuses the key, and when items are still `unavailable` after `maxAttempts` (`unavailable`
 * names their source positions; the other answers are in `results`).
 */
export async function sendInBatches<I, R extends BatchAnswer>(
  post: BatchPost<I, R>,
  source: Iterable<I> | AsyncIterable<I>,
  options: BatchOptions<R>,
  makeError: BatchErrorFactory<R>,
): Promise<BatchReport<R>> {
  const size = Math.max(1, Math.min(MAX_BATCH, options.batchSize ?? MAX_BATCH));
  const maxAttempts = options.maxAttempts ?? 8;
  const startAt = options.startAt ?? 0;
  const answers = new Map<number, R>();
  const counts: Partial<Record<R['status'], number>> = {};
  let requests = 0;
  let waitBeforeNext = 0;
  let retryLater: Pending<I>[] = [];

  const answered = () =>
    Array.from({ length: answers.size }, (_, i) => answers.get(startAt + i)).filter((a): a is R => a !== undefined);
  /** The first source position without its final answer: where a resumed import starts. */
  const nextIndex = () => {
    let at = startAt;
    while (answers.has(at) && answers.get(at)!.status !== 'unavailable') at += 1;
    return at;
  };
  const fail = (message: string, status?: number, code?: string, unavailable?: number[]) =>
    makeError(message, nextIndex(), answered(), status, code, unavailable);

  /** Sends one batch until it is answered; returns its items' answers. */
  async function send(batch: Pending<I>[]): Promise<R[]> {
    const key = globalThis.crypto.randomUUID();
    for (let attempt = 1; ; attempt += 1) {
      if (waitBeforeNext > 0) await sleep(waitBeforeNext * 1000, options.signal);
      waitBeforeNext = 0;
      options.signal?.throwIfAborted();
      requests += 1;
      let outcome;
      try {
        outcome = await post(
          batch.map((pending) => pending.item),
          key,
          options.signal,
        );
      } catch (err) {
        if (options.signal?.aborted) throw err;
        // No answer (the network): the same request again, with the same key, answers as the first would have.
        if (attempt >= maxAttempts)
          throw fail(
            `the batch from source position ${batch[0].sourceIndex} got no answer ${attempt} times: ${String(err)}`,
          );
        waitBeforeNext = backoffSeconds(attempt);
        continue;
      }
      const { data, error, response } = outcome;
      if (data) {
        waitBeforeNext = windowWaitSeconds(response.headers);
        return data.results;
      }
      const retryable = response.status === 429 || response.status >= 500 || error?.code === 'idempotency_conflict';
      if (!retryable || attempt >= maxAttempts) {
        throw fail(
          `the batch from source position ${batch[0].sourceIndex} was refused: ${response.status} ${error?.error ?? ''}`.trim(),
          response.status,
          error?.code,
        );
      }
      waitBeforeNext = retryAfterSeconds(response.headers) ?? backoffSeconds(attempt);
    }
  }

  async function run(batch: Pending<I>[]): Promise<void> {
    const results = await send(batch);
    const finished: R[] = [];
    // The service was busy for some: give it a moment before they go again.
    if (results.some((result) => result.status === 'unavailable')) waitBeforeNext = Math.max(waitBeforeNext, 1);
    results.forEach((result, i) => {
      const item = batch[i];
      const answer = { ...result, index: item.sourceIndex };
      answers.set(item.sourceIndex, answer);
      if (answer.status === 'unavailable' && item.tries + 1 < maxAttempts)
        retryLater.push({ ...item, tries: item.tries + 1 });
      else {
        const status = answer.status as R['status'];
        counts[status] = (counts[status] ?? 0) + 1;
        finished.push(answer);
      }
    });
    options.onProgress?.({
      done: (Object.values(counts) as (number | undefined)[]).reduce((a: number, b) => a + (b ?? 0), 0),
      counts: { ...counts },
      requests,
      batch: finished,
    });
  }

  for await (const { start, items } of batchesOf(source, size, startAt)) {
    // Contacts to send again go first, so they are answered before the source runs far ahead.
    const again = retryLater.splice(0, size);
    const fresh = items.map((item, i) => ({ sourceIndex: start + i, item, tries: 0 }));
    await run([...again, ...fresh.slice(0, size - again.length)]);
    if (fresh.length > size - again.length) await run(fresh.slice(size - again.length));
  }
  while (retryLater.length > 0) {
    const again = retryLater;
    retryLater = [];
    for (let at = 0; at < again.length; at += size) await run(again.slice(at, at + size));
  }
  const stillUnavailable = answered()
    .filter((answer) => answer.status === 'unavailable')
    .map((answer) => answer.index);
  if (stillUnavailable.length > 0)
    throw fail(
      `${stillUnavailable.length} contact(s) stayed unavailable after ${maxAttempts} attempts, nothing written for them: source positions ${stillUnavailable.join(', ')}`,
      undefined,
      'temporarily_unavailable',
      stillUnavailable,
    );
  return { results: answered(), counts, requests };
}
