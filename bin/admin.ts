/**
 * `npm run admin -- <command>`: the operator CLI. See `npm run admin -- --help` and local/admin/.
 */
// Lambda runs Node 24; on this machine's Node 20 the SDK's support warning would only clutter stderr.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

async function main(): Promise<void> {
  // Imported only now, so nothing reads the environment before the line above sets it.
  const { runAdmin } = await import('../local/admin/main');
  // Ctrl-C stops a command that runs until stopped (`webhook listen`), which then cleans up.
  const stop = new AbortController();
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => stop.abort());
  process.exitCode = await runAdmin(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    signal: stop.signal,
  });
}

void main();

export {}; // a module, not a script: its names stay its own
