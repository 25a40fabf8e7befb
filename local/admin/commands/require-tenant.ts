/** Fails with a clear message when no organization has this id (rows under it would be orphans). */
export async function requireTenant(tenantId: string): Promise<void> {
  const { getTenant } = await import('../../../lambdas/contexts/tenants/tenants');
  if (!(await getTenant(tenantId))) throw new Error(`No organization with id ${tenantId}`);
}
