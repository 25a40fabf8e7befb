import type { ParseArgsConfig } from 'node:util';
import type { RuntimeInfo } from '../runtime-file';

/**
 * One command of the operator CLI (`npm run admin -- <group> <name> ...`). Each command module
 * exports its commands and local/admin/commands/index.ts lists the modules, so a new group
 * (webhooks, `simulate sms`, ...) is a new module and one line there.
 */
export type OptionSpecs = NonNullable<ParseArgsConfig['options']>;

export type OptionValues = Record<string, string | boolean | (string | boolean)[] | undefined>;

export type CommandInput = { values: OptionValues; positionals: string[] };

/** Where a command runs, for the commands that need more than the table. */
export type CommandContext = {
  /** `--state-dir`: where runtime.json is. */
  stateDir: string;
  /**
   * runtime.json of the running local runtime when the CLI works on its table; undefined when it
   * works on another table (a deployed stack), so no command applies local-only settings there.
   */
  runtime: RuntimeInfo | undefined;
  /** For a command that runs until stopped (`webhook listen`): prints one JSON line on stdout now. */
  emit: (document: unknown) => void;
  /** Aborted on Ctrl-C or SIGTERM: a long-running command cleans up and returns its last document. */
  signal: AbortSignal;
};

export type AdminCommand<Args = unknown> = {
  /** The two words that name it, e.g. ['tenant', 'create']. */
  words: readonly [string, string];
  summary: string;
  /** What follows the words in the usage line, e.g. `--name <s> [--plan starter|pro|business]`. */
  usage: string;
  options: OptionSpecs;
  /** Names of the positional arguments after the words, e.g. ['tenantId']. */
  positionals?: readonly string[];
  // Methods rather than function properties: their parameters are bivariant, so a command with its
  // own Args still fits in a list of AdminCommand.
  /** Checks the input before anything is contacted; throws UsageError. */
  parse(input: CommandInput): Args;
  /** Runs once TABLE_NAME and DYNAMODB_ENDPOINT are set; returns the one JSON document to print. */
  run(args: Args, context: CommandContext): Promise<unknown>;
};

/** Infers a command's Args from its `parse`, so `run` is checked against it. */
export const defineCommand = <Args>(command: AdminCommand<Args>): AdminCommand<Args> => command;

export const commandName = (command: Pick<AdminCommand, 'words'>): string => command.words.join(' ');

export function findCommand(commands: readonly AdminCommand[], words: readonly string[]): AdminCommand | undefined {
  return commands.find((command) => command.words[0] === words[0] && command.words[1] === words[1]);
}

export function commandUsage(command: AdminCommand): string {
  const positionals = (command.positionals ?? []).map((name) => `<${name}>`).join(' ');
  return `npm run admin -- ${commandName(command)}${positionals ? ` ${positionals}` : ''} ${command.usage}`.trimEnd();
}
