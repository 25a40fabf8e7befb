import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The site of the optimistic round or conditional write under way (`contacts.update`, `spend.charge`):
 * a short constant naming the code that may lose a race, carried through its async calls so the
 * DynamoDB requests it makes can name it too. One store per process; reading it costs nothing when
 * no site is set.
 */
const current = new AsyncLocalStorage<string>();

/**
 * The request header that names the site to the limits-faithful engine (local/dynamodb-limits/), so
 * its meters say which site's condition failed. Sent only to a local endpoint (shared/aws.ts), never
 * to AWS.
 */
export const SITE_HEADER = 'x-round-site';

/**
 * Runs `work` at `site`. Within another site the path names both (`spend.charge>texting.store`: a send's charge
 * round storing its message), so a refusal the engine meters says which round it fell in.
 */
export function atSite<T>(site: string, work: () => Promise<T>): Promise<T> {
  const outer = current.getStore();
  if (outer === site || outer?.endsWith(`>${site}`)) return work();
  return current.run(outer ? `${outer}>${site}` : site, work);
}

/** The site path of the work under way, if it named one. */
export const currentSite = (): string | undefined => current.getStore();
