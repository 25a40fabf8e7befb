/**
 * The query parameter of a callback URL that names the organization (a uuid), for legs that carry
 * no organization number (softphone to softphone): the last clue `resolveOrganization` reads
 * (./organization.ts). In a module without imports so that the operator CLI can build callback
 * URLs without loading modules that open the table.
 */
export const TENANT_HINT_PARAM = 'tenantId';
