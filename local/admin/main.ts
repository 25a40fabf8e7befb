import { parseArgs } from 'node:util';
import { DEFAULT_STATE_DIR } from '../cli-args';
import { isProcessAlive, readRuntimeInfo, type RuntimeInfo } from '../runtime-file';
import { USAGE_EXIT_CODE, UsageError } from '../usage-error';
import { ADMIN_COMMANDS } from './commands/index';
import {
  commandName,
  commandUsage,
  findCommand,
  type AdminCommand,
  type CommandContext,
  type OptionSpecs,
} from './registry';
import { applyTarget, resolveTarget, type Target } from './target';
import { UnflushedChangeError } from './authorizer-cache';

/**
 * The operator CLI: `npm run admin -- [global options] <group> <name> [arguments] [options]`.
 * Prints one JSON document on stdout and exits 0; otherwise a message on stderr and exit 1
 * (failed) or 2 (called wrongly).
 */
export type AdminIo = {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** Stops a command that runs until stopped (bin/admin.ts aborts it on Ctrl-C or SIGTERM). */
  signal?: AbortSignal;
};

const GLOBAL_OPTIONS = {
  'state-dir': { type: 'string' },
  'table-name': { type: 'string' },
  'dynamodb-endpoint': { type: 'string' },
  stack: { type: 'string' },
  region: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies OptionSpecs;

export function adminUsage(commands: readonly AdminCommand[] = ADMIN_COMMANDS): string {
  const width = Math.max(...commands.map((c) => commandName(c).length));
  return [
    'Usage: npm run admin -- [--state-dir <dir> | --stack <name> [--region <r>]] <command> [arguments] [options]',
    '',
    `Works on the local runtime recorded in <state-dir>/runtime.json (default ${DEFAULT_STATE_DIR}); on a deployed`,
    'stack with --stack CctService-<stage> (its table and API from the stack outputs, with your usual AWS',
    'credentials); or on the table named by --table-name [--dynamodb-endpoint <url>].',
    '',
    'Commands:',
    ...commands.map((c) => `  ${commandName(c).padEnd(width)}  ${c.summary}`),
    '',
    'Run `npm run admin -- <command> --help` for its options. Every command prints one JSON document on',
    'stdout. Exit codes: 0 done, 1 failed, 2 usage error.',
  ].join('\n');
}

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** A failure worded for an operator: where it tried to go and what to do. */
function describeFailure(err: unknown, target: Target | undefined): string {
  const e = err as { name?: string; code?: string; message?: string };
  const where = target
    ? `${target.tableName}${target.endpoint ? ` at ${target.endpoint}` : ''}${target.stack ? ` (stack ${target.stack.name})` : ''}`
    : 'the table';
  if (e.code === 'ECONNREFUSED' || e.name === 'TimeoutError')
    return `Cannot reach DynamoDB for ${where}: is the local runtime running?`;
  if (e.name === 'ResourceNotFoundException') return `Table ${where} does not exist`;
  return e.message ?? String(err);
}

/** Strict parse with the command's own options; the rest of the words are its positionals. */
function parseInvocation(command: AdminCommand, argv: string[]) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: { ...GLOBAL_OPTIONS, ...command.options },
      strict: true,
      allowPositionals: true,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const positionals = parsed.positionals.slice(2);
  const expected = command.positionals ?? [];
  if (positionals.length > expected.length)
    throw new UsageError(`Unexpected argument "${positionals[expected.length]}"`);
  const {
    'state-dir': stateDir,
    'table-name': tableName,
    'dynamodb-endpoint': endpoint,
    stack,
    region,
    help: _help,
    ...values
  } = parsed.values;
  return {
    args: command.parse({ values, positionals }),
    target: {
      stateDir: (stateDir as string | undefined) ?? DEFAULT_STATE_DIR,
      tableName: tableName as string | undefined,
      endpoint: endpoint as string | undefined,
      stack: stack as string | undefined,
      region: region as string | undefined,
    },
  };
}

/** The running local runtime whose table the target is; undefined for any other table. */
async function localRuntimeOf(stateDir: string, target: Target): Promise<RuntimeInfo | undefined> {
  // A runtime's table is always on DynamoDB Local: a table in AWS needs no look at runtime.json.
  if (target.endpoint === undefined) return undefined;
  const info = await readRuntimeInfo(stateDir).catch(() => undefined);
  if (!info || !isProcessAlive(info.pid)) return undefined;
  return info.tableName === target.tableName && info.dynamodbEndpoint === target.endpoint ? info : undefined;
}

export async function runAdmin(
  argv: string[],
  io: AdminIo,
  commands: readonly AdminCommand[] = ADMIN_COMMANDS,
): Promise<number> {
  const refuse = (message: string, usage: string) => {
    io.stderr(`${message}\n\n${usage}\n`);
    return USAGE_EXIT_CODE;
  };
  // First pass: only the global options are known, so the command's words are the first positionals.
  const loose = parseArgs({ args: argv, options: GLOBAL_OPTIONS, strict: false, allowPositionals: true });
  const words = loose.positionals.slice(0, 2);
  const help = loose.values.help === true;
  if (words.length === 0) {
    if (!help) return refuse('No command given.', adminUsage(commands));
    io.stdout(`${adminUsage(commands)}\n`);
    return 0;
  }
  const command = findCommand(commands, words);
  if (!command) return refuse(`Unknown command "${words.join(' ')}".`, adminUsage(commands));
  if (help) {
    io.stdout(`Usage: ${commandUsage(command)}\n\n${command.summary}\n`);
    return 0;
  }

  let invocation: ReturnType<typeof parseInvocation>;
  try {
    invocation = parseInvocation(command, argv);
  } catch (err) {
    if (err instanceof UsageError) return refuse(err.message, `Usage: ${commandUsage(command)}`);
    throw err;
  }
  let target: Target | undefined;
  try {
    target = await resolveTarget(invocation.target);
    applyTarget(target);
    const { stateDir } = invocation.target;
    let streaming = false;
    const line = (document: unknown) => `${JSON.stringify(document)}\n`;
    const context: CommandContext = {
      stateDir,
      runtime: await localRuntimeOf(stateDir, target),
      emit: (document) => {
        streaming = true;
        io.stdout(line(document));
      },
      signal: io.signal ?? new AbortController().signal,
    };
    const result = await command.run(invocation.args, context);
    // A command that printed lines as it ran ends with one more line, so stdout stays one JSON document per line.
    io.stdout(streaming ? line(result) : json(result));
    return 0;
  } catch (err) {
    // A change made but left unflushed still prints what the command made (a rotated key is shown once).
    if (err instanceof UnflushedChangeError) io.stdout(json(err.document));
    io.stderr(`${commandName(command)} failed: ${describeFailure(err, target)}\n`);
    return 1;
  }
}
