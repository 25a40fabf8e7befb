import { isE164 } from '../../shared/phone';
import { findTenantIdByProviderCallSid } from '../calls/calls';
import { findTenantIdsByNumbers, getTenant } from '../tenants/tenants';

/**
 * Which organization a callback belongs to. Twilio names no organization, only numbers and
 * calls, so: the organization that registered the number the leg reached (or called from), else
 * the owner of the call the leg belongs to, else the `tenantId` query parameter of the callback
 * URL (`TENANT_HINT_PARAM`, ./tenant-hint.ts), for legs that never touch an organization number
 * (softphone-to-softphone calls). That parameter is part of the signed URL and only this
 * service's own TwiML and Twilio configuration set it, so it cannot be forged; when it disagrees
 * with what the numbers or the call say, the callback is refused rather than trusted.
 */

export type OrganizationClues = {
  /** The numbers that name the organization on this kind of leg, most telling first. */
  ownNumbers: readonly string[];
  /** Every number on the leg: those the organization owns are its own, the rest are external. */
  legNumbers: readonly string[];
  /** The provider call (parent leg sid) whose owner row may name the organization. */
  callSid?: string;
  /** Ask the call before the numbers: a child leg's numbers can be a third party's. */
  callFirst?: boolean;
  tenantHint?: string;
};

export type Organization = {
  tenantId: string;
  /** The leg's numbers this organization registered (never contacts, never "external"). */
  orgNumbers: ReadonlySet<string>;
  via: 'number' | 'call' | 'hint';
};

export type Resolution = { found: true; organization: Organization } | { found: false; reason: 'unknown' | 'conflict' };

export async function resolveOrganization(clues: OrganizationClues): Promise<Resolution> {
  const numbers = [...new Set([...clues.ownNumbers, ...clues.legNumbers])].filter(isE164);
  // Both of a leg's numbers in one read: the organization's and, to tell an external party from a number of its own,
  // the other one.
  const owners = await findTenantIdsByNumbers(numbers);
  const byNumber = (): string | undefined => clues.ownNumbers.map((n) => owners.get(n)).find((t) => t !== undefined);
  const byCall = async (): Promise<string | undefined> =>
    clues.callSid ? findTenantIdByProviderCallSid(clues.callSid) : undefined;

  let tenantId: string | undefined;
  let via: Organization['via'] = 'number';
  for (const step of clues.callFirst ? (['call', 'number'] as const) : (['number', 'call'] as const)) {
    tenantId = step === 'number' ? byNumber() : await byCall();
    via = step;
    if (tenantId) break;
  }
  if (tenantId && clues.tenantHint && clues.tenantHint !== tenantId) return { found: false, reason: 'conflict' };
  if (!tenantId && clues.tenantHint) {
    // Rows under an organization that does not exist would be orphans nobody can read.
    if (!(await getTenant(clues.tenantHint))) return { found: false, reason: 'unknown' };
    tenantId = clues.tenantHint;
    via = 'hint';
  }
  if (!tenantId) return { found: false, reason: 'unknown' };
  const own = tenantId;
  return {
    found: true,
    organization: { tenantId: own, orgNumbers: new Set(numbers.filter((n) => owners.get(n) === own)), via },
  };
}
