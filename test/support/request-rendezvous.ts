import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Makes two writes of the shared DynamoDB client meet at the table, for a race whose natural
 * interleaving rarely overlaps them (one side needs several round trips before its write, the
 * other finishes first). While armed, the first request whose input matches `held` waits, before
 * it is sent, until a request matching `until` has set off (and `settleMs` more), so it reaches
 * the table while the other is under way: on the limits engine, inside that transaction's hold.
 * It waits `timeoutMs` at most (generous: the other side may need several round trips on a busy
 * machine), then goes anyway. Requests are matched on their input as JSON
 * (an update expression, a condition).
 */
export type Rendezvous = {
  /** Holds back the next `held` request until an `until` request has set off. */
  arm: () => void;
  /** Whether the held request met an `until` request in the last armed round (false: it timed out, or none came). */
  met: () => boolean;
  remove: () => void;
};

type Match = (inputJson: string) => boolean;

export function rendezvous(
  client: DynamoDBDocumentClient,
  matches: { held: Match; until: Match },
  options: { settleMs?: number; timeoutMs?: number } = {},
): Rendezvous {
  const { settleMs = 5, timeoutMs = 15_000 } = options;
  let armed = false;
  let met = false;
  let untilSetOff: () => void = () => {};
  let untilSeen = Promise.resolve();
  const name = `rendezvous-${Math.random().toString(36).slice(2)}`;
  client.middlewareStack.add(
    (next) => async (args) => {
      const input = JSON.stringify(args.input);
      if (matches.until(input)) untilSetOff();
      else if (armed && matches.held(input)) {
        armed = false;
        let timer: NodeJS.Timeout | undefined;
        met = await Promise.race([
          untilSeen.then(() => true),
          new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
        ]);
        clearTimeout(timer);
        if (met) await new Promise((resolve) => setTimeout(resolve, settleMs));
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return {
    arm() {
      armed = true;
      met = false;
      untilSeen = new Promise<void>((resolve) => (untilSetOff = resolve));
    },
    met: () => met,
    remove: () => client.middlewareStack.remove(name),
  };
}
