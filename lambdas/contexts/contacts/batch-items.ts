/**
 * How a batch of the directory (`POST /contacts/batch`, `POST /contacts/batch/delete`) runs its
 * items: a few at a time, each on its own, in passes, watching the request's deadline.
 */

/**
 * Items written at once. Each is one transaction after a read or two; on AWS about 20-50 ms, so a
 * batch of 100 takes about a second, well inside API Gateway's 29 s, and an organization's writes
 * stay within what its busiest index partitions take (docs/capacity.md).
 */
export const ITEMS_IN_FLIGHT = 4;

/**
 * Passes over the items that DynamoDB refused for contention after the client's own retries (a
 * throttled partition): the second waits a moment first. What is still refused then is answered
 * `unavailable` (nothing written for it), for the client to send again.
 */
const PASSES = 2;
const PASS_PAUSE_MS = 1000;

/**
 * An item is started only while this much time is left before the batch's deadline (one item takes
 * tens of milliseconds on AWS; the SDK makes no retry past the deadline, shared/deadline.ts).
 */
export const ITEM_START_RESERVE_MS = 1000;

/** Whether `ms` more fit before `deadline` (epoch ms). */
export const timeLeftFor = (deadline: number, ms: number): boolean => Date.now() + ms < deadline;

/** Runs `work` over `items`, at most `inFlight` at a time, answers in the items' order. */
export async function inOrder<T, R>(
  items: readonly T[],
  inFlight: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const at = next++;
      results[at] = await work(items[at]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, items.length) }, worker));
  return results;
}

type Answer = { index: number; status: string };

/**
 * The answer of every pending item by its index: `work` runs each, `ITEMS_IN_FLIGHT` at a time, and
 * the items it answers `unavailable` go again in a later pass. No item starts within
 * `ITEM_START_RESERVE_MS` of `deadline`: those are answered by `notReached`, nothing written for them.
 * Run it under `runWithDeadline` so no SDK retry outlasts the deadline either.
 */
export async function answerInPasses<P extends { index: number }, R extends Answer>(
  pending: readonly P[],
  deadline: number,
  work: (item: P) => Promise<R>,
  notReached: (item: P) => R,
): Promise<Map<number, R>> {
  const results = new Map<number, R>();
  let left = [...pending];
  for (let pass = 0; pass < PASSES && left.length > 0; pass += 1) {
    if (pass > 0) {
      const pause = PASS_PAUSE_MS * (0.5 + Math.random() / 2);
      if (!timeLeftFor(deadline, pause + ITEM_START_RESERVE_MS)) break;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
    const answers = await inOrder(left, ITEMS_IN_FLIGHT, (item) =>
      timeLeftFor(deadline, ITEM_START_RESERVE_MS) ? work(item) : Promise.resolve(notReached(item)),
    );
    for (const answer of answers) results.set(answer.index, answer);
    left = left.filter((_, i) => answers[i].status === 'unavailable');
  }
  for (const item of left) if (!results.has(item.index)) results.set(item.index, notReached(item));
  return results;
}
