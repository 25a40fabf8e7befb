import { spawnSync } from 'node:child_process';

/**
 * Whether this machine can bind the given loopback addresses, tried in a child process so that a
 * test file can decide while Jest collects its tests (which is synchronous). Linux routes all of
 * 127.0.0.0/8 to the loopback interface; macOS has only 127.0.0.1 until an alias is added
 * (`sudo ifconfig lo0 alias 127.0.0.2 up`, one per address). Returns why not, or null when all bind.
 */
export function unbindableLoopbackReason(addresses: readonly string[]): string | null {
  const probe = `
    const { createServer } = require('node:net');
    const addresses = ${JSON.stringify(addresses)};
    let pending = addresses.length;
    for (const address of addresses) {
      const server = createServer();
      server.once('error', (err) => { console.log(address + ': ' + err.code); process.exit(1); });
      server.listen(0, address, () => server.close(() => { if (--pending === 0) process.exit(0); }));
    }`;
  const result = spawnSync(process.execPath, ['-e', probe], { encoding: 'utf8', timeout: 10_000 });
  if (result.status === 0) return null;
  const detail = result.stdout.trim() || result.error?.message || `exit ${result.status}`;
  return `this machine cannot bind the loopback addresses the test posts from (${detail}); on macOS add them with \`sudo ifconfig lo0 alias <address> up\``;
}
