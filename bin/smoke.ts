/**
 * `npm run smoke -- --url <base_url> --key <key>`: the contract, checked end to end against any
 * deployment. See `npm run smoke -- --help` and local/smoke/.
 */
// Lambda runs Node 24; the SDK's warning about older Node versions (for the webhook check) is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
// The webhook check loads domain modules: their logger may only speak on stderr, and only to warn.
process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';

async function main(): Promise<void> {
  // Imported only now, so nothing reads the environment before the lines above set it.
  const { runSmoke } = await import('../local/smoke/run');
  process.exitCode = await runSmoke(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  });
}

void main();

export {}; // a module, not a script: its names stay its own
