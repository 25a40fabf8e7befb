import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * docs/architecture.md is the map a new engineer reads first; these tests keep it the map of this
 * tree and of the lint's rules, so a moved folder or a changed rule fails until the page follows.
 */
const REPO_ROOT = resolve(__dirname, '..', '..');
const PAGE = readFileSync(join(REPO_ROOT, 'docs', 'architecture.md'), 'utf8');
// The lint's CommonJS configuration, read as the tool reads it.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const config = require(join(REPO_ROOT, '.dependency-cruiser.cjs')) as {
  forbidden: { name: string }[];
  contextDependencies: Record<string, string[]>;
};

/** Every folder under lambdas/, as `lambdas/a/b/`. */
function foldersOf(dir: string): string[] {
  return readdirSync(join(REPO_ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const path = `${dir}/${entry.name}`;
      return [`${path}/`, ...foldersOf(path)];
    });
}

/**
 * The folders the page's map names: its fenced block that starts with `lambdas/`, read by indentation (two spaces a
 * level).
 */
function foldersOfTheMap(): string[] {
  const block = /```\n(lambdas\/\n[\s\S]*?)```/.exec(PAGE)?.[1];
  if (!block) throw new Error('docs/architecture.md has no map block starting with "lambdas/"');
  const parents: string[] = [];
  const folders: string[] = [];
  for (const line of block.split('\n').filter((l) => l.trim() !== '')) {
    const depth = (line.length - line.trimStart().length) / 2;
    const name = line.trim().split(/\s+/)[0];
    parents.length = depth;
    parents.push(name);
    folders.push(parents.join(''));
  }
  return folders.filter((folder) => folder !== 'lambdas/');
}

/** The rows of the page's "| context | may import |" table. */
function contextTable(): Record<string, string[]> {
  const rows = PAGE.split('\n').filter(
    (line) => /^\| [a-z]+ \| /.test(line) && !line.startsWith('| context |') && !line.startsWith('| rule |'),
  );
  return Object.fromEntries(
    rows
      .map((row) => row.split('|').map((cell) => cell.trim()))
      .filter(([, name]) => name in config.contextDependencies)
      .map(([, name, allowed]) => [name, allowed === '(none)' ? [] : allowed.split(',').map((c) => c.trim())]),
  );
}

describe('docs/architecture.md', () => {
  it('maps every folder of lambdas/ and no folder that does not exist', () => {
    expect(foldersOfTheMap().sort()).toEqual(foldersOf('lambdas').sort());
  });

  it("lists each context's allowed imports exactly as the lint enforces them (CONTEXT_DEPENDENCIES)", () => {
    const sorted = (map: Record<string, string[]>) =>
      Object.fromEntries(Object.entries(map).map(([k, v]) => [k, [...v].sort()]));
    expect(sorted(contextTable())).toEqual(sorted(config.contextDependencies));
  });

  it('names every rule of the lint', () => {
    const unnamed = config.forbidden
      .map((rule) => rule.name)
      .filter(
        (name) => !PAGE.includes(`\`${name}\``) && !(name.startsWith('context-') && PAGE.includes('`context-<name>`')),
      );
    expect(unnamed).toEqual([]);
  });
});
