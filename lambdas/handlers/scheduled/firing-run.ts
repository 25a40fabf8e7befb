/**
 * One run of the firing of scheduled texts (EventBridge starts one a minute): fire what is due, then look at the
 * first entry of the due list and, when it falls due before the run's window closes, wait for it and fire again. A
 * text then goes out within seconds of its time rather than at the next minute's run, and a quiet run costs one look
 * at the due list. No imports, so a unit test drives it with a clock of its own.
 */
export type FiringRound = {
  /** Texts handed to the carrier. */
  fired: number;
  /** For each of them, how long after its `sendAt` it went (ms). */
  latenessMs: readonly number[];
};

export type FiringRunDeps = {
  /** Fires every text due at `now`, taking none after `deadline`. */
  fire: (now: Date, deadline: Date) => Promise<FiringRound>;
  /** The time of the first text on the due list, due or not; undefined when it is empty. */
  nextDueAt: () => Promise<Date | undefined>;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
};

export type FiringRunResult = { rounds: number; fired: number; latenessMs: number[] };

/** Rounds are at least this far apart, so texts a round could not fire are not retried in a tight loop. */
export const MIN_ROUND_GAP_MS = 1000;

/**
 * Rounds until nothing falls due before `windowEnd` (the last instant a round may start); each round takes no text
 * after `deadline`. When a round fired nothing and texts it should have fired are still on the due list, the run
 * stops: what a round could not fire (a throttle, a carrier that refused to take it) is the next run's.
 */
export async function runFiring(windowEnd: Date, deadline: Date, deps: FiringRunDeps): Promise<FiringRunResult> {
  const result: FiringRunResult = { rounds: 0, fired: 0, latenessMs: [] };
  let last: { at: number; fired: number } | undefined;
  for (;;) {
    const next = (await deps.nextDueAt())?.getTime();
    if (next === undefined || next > windowEnd.getTime()) return result;
    if (last && last.fired === 0 && next <= last.at) return result;
    const startAt = Math.max(next, (last?.at ?? Number.NEGATIVE_INFINITY) + MIN_ROUND_GAP_MS);
    if (startAt > windowEnd.getTime()) return result;
    const wait = startAt - deps.now();
    if (wait > 0) await deps.sleep(wait);
    const at = deps.now();
    const round = await deps.fire(new Date(at), deadline);
    last = { at, fired: round.fired };
    result.rounds += 1;
    result.fired += round.fired;
    result.latenessMs.push(...round.latenessMs);
    if (deps.now() >= deadline.getTime()) return result;
  }
}
