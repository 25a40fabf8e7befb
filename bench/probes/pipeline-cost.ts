/**
 * Where the local pipeline's time goes: DynamoDB Local's CPU (the JVM) and this process's CPU for
 * writing N inbound texts alone, then for the same through the pipeline to a receiver, on DynamoDB
 * Local alone or through the limits engine (`--engine`). `npx tsx bench/probes/pipeline-cost.ts [n] [--engine]`.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';
process.env.TABLE_NAME = 'probe';
process.env.AWS_REGION = 'local';

async function main() {
  const n = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 500);
  const onEngine = process.argv.includes('--engine');
  const { startDynamoDbLocal, localDynamoClient } = await import('../../local/dynamodb-local');
  const ddb = await startDynamoDbLocal();
  const { ensureTable } = await import('../../local/create-table');
  const admin = localDynamoClient(ddb.endpoint);
  await ensureTable(admin, 'probe');
  const { startLimitsProxy } = await import('../../local/dynamodb-limits/limits-proxy');
  const engine = onEngine ? await startLimitsProxy({ upstream: ddb.endpoint, sharedDb: true }) : undefined;
  process.env.DYNAMODB_ENDPOINT = engine?.endpoint ?? ddb.endpoint;
  const { DynamoDBDocumentClient, BatchWriteCommand } = await import('@aws-sdk/lib-dynamodb');
  const direct = DynamoDBDocumentClient.from(localDynamoClient(ddb.endpoint));
  const { createTenant, updateTenant } = await import('../../lambdas/contexts/tenants/tenants');
  const { addWebhookEndpoint } = await import('../../lambdas/contexts/webhooks/endpoints');
  const { toItem } = await import('../../lambdas/contexts/texting/messages');
  const { inboundText, processCpuMs, startReceiver } = await import('../support/webhook-bench');
  const { startWebhookPipeline } = await import('../../local/webhook-pipeline');
  const { dynamo } = await import('../../lambdas/shared/aws');
  const calls: Record<string, number> = {};
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      calls[context.commandName ?? '?'] = (calls[context.commandName ?? '?'] ?? 0) + 1;
      return next(args);
    },
    { step: 'initialize', name: 'probeCounter' },
  );
  const receiver = await startReceiver();
  const tenant = await createTenant({ name: 'probe' });
  await updateTenant(tenant.id, { approveHosts: ['127.0.0.1'] });
  const endpoint = await addWebhookEndpoint(
    tenant.id,
    { url: receiver.url('/p'), events: ['sms.received'] },
    { allowInsecureTargets: true },
  );
  receiver.secrets.set('/p', endpoint.secret);
  const write = async (label: string) => {
    const items = Array.from({ length: n }, (_, i) =>
      toItem(inboundText(tenant.id, `+1720${String(i).padStart(7, '0')}`, `${label}${i}`)),
    );
    for (let i = 0; i < items.length; i += 25) {
      await direct.send(
        new BatchWriteCommand({
          RequestItems: { probe: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
        }),
      );
    }
    return items.map((item) => item.id as string);
  };
  const measure = async (label: string, work: () => Promise<void>) => {
    const [jvm, node, t0] = [processCpuMs(ddb.pid), process.cpuUsage(), performance.now()];
    await work();
    const cpu = process.cpuUsage(node);
    console.log(
      `${label}: ${Math.round(performance.now() - t0)} ms wall; per text: JVM ` +
        `${((processCpuMs(ddb.pid)! - jvm!) / n).toFixed(2)} ms, node ` +
        `${((cpu.user + cpu.system) / 1000 / n).toFixed(2)} ms`,
    );
  };
  await measure(`${n} texts written, no pipeline`, async () => void (await write('a')));
  const pipeline = await startWebhookPipeline({
    endpoint: ddb.endpoint,
    tableName: 'probe',
    allowInsecureTargets: true,
  });
  for (const key of Object.keys(calls)) delete calls[key];
  await measure(`${n} texts through the pipeline${onEngine ? ' (engine)' : ''}`, async () => {
    const ids = await write('b');
    while (ids.some((id) => !receiver.receipts.has(id))) await new Promise((r) => setTimeout(r, 50));
  });
  console.log(
    pipeline.routerStats(),
    Object.fromEntries(Object.entries(calls).map(([k, v]) => [k, Math.round((v / n) * 100) / 100])),
  );
  await pipeline.stop();
  await receiver.close();
  await engine?.stop();
  await ddb.stop();
}
main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
