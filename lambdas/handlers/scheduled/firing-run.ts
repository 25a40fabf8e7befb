/**
 * One run of the firing of scheduled texts (EventBridge starts one a minute): fire what is due, then look at the
 * first entry of the due list and, when it falls due before the run's window closes, wait for it and fire again. A
 * text then goes out within seconds of its time rather than at the next minute's run, and a quiet run costs one look
 * at the due list. No imports, so a unit test drives it with a clock of its own.
 */
export type FiringRound = {
  /** Texts handed to the carrier. */
  sent: number;
  /** Due texts the round dealt with, sent or not (canceled at their time, taken by another run). */
  handled: number;
  /** How long after its `sendAt` the latest of them went (ms). */
  maxLateMs: number;
};

/** A round of `fireDueTexts` (lambdas/contexts/texting/scheduled-texts.ts) as the run counts it. */
export const roundOf = (fired: { sent: number; examined: number; errors: number; maxLateMs: number }): FiringRound => ({
  sent: fired.sent,
  handled: fired.examined - fired.errors,
  maxLateMs: fired.maxLateMs,
});

export type FiringRunDeps = {
  /** Fires every text due at `now`, taking none after `deadline` (epoch ms). */
  fire: (now: Date, deadline: number) => Promise<FiringRound>;
  /** The time of the first text on the due list, due or not; undefined when it is empty. */
  nextDueAt: () => Promise<Date | undefined>;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
};

export type FiringRunResult = { rounds: number; sent: number; handled: number; maxLateMs: number };

/**
 * A run's rounds start within this long of its start (its window), and take no new text after RUN_DEADLINE_MS: a text
 * handed to the carrier by then (a send times out at 5 s) and its writes are done well inside the function's 55 s
 * timeout, and the next minute's run finds the function free. Texts falling due after the window wait for that run,
 * at most 20 s.
 */
export const RUN_WINDOW_MS = 40_000;
export const RUN_DEADLINE_MS = 45_000;

/** Rounds are at least this far apart, so texts a round could not fire are not retried in a tight loop. */
export const MIN_ROUND_GAP_MS = 1000;

/**
 * Rounds until nothing falls due before `windowEnd` (the last instant a round may start); each round takes no text
 * after `deadline`. When a round dealt with no text and texts it should have are still on the due list, the run
 * stops: what a round could not fire (the table failing for those texts) is the next run's.
 */
export async function runFiring(windowEnd: Date, deadline: Date, deps: FiringRunDeps): Promise<FiringRunResult> {
  const result: FiringRunResult = { rounds: 0, sent: 0, handled: 0, maxLateMs: 0 };
  let last: { at: number; handled: number } | undefined;
  for (;;) {
    const next = (await deps.nextDueAt())?.getTime();
    if (next === undefined || next > windowEnd.getTime()) return result;
    if (last && last.handled === 0 && next <= last.at) return result;
    const startAt = Math.max(next, (last?.at ?? Number.NEGATIVE_INFINITY) + MIN_ROUND_GAP_MS);
    if (startAt > windowEnd.getTime()) return result;
    const wait = startAt - deps.now();
    if (wait > 0) await deps.sleep(wait);
    const at = deps.now();
    const round = await deps.fire(new Date(at), deadline.getTime());
    last = { at, handled: round.handled };
    result.rounds += 1;
    result.sent += round.sent;
    result.handled += round.handled;
    result.maxLateMs = Math.max(result.maxLateMs, round.maxLateMs);
    if (deps.now() >= deadline.getTime()) return result;
  }
}
