import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * One layout, enforced: `npm run lint` runs Biome's formatter over the tree (package.json, biome.json), so a
 * source file it would change fails the suite; and long lines stay rare where people read code (what a
 * formatter cannot wrap: comments and strings).
 */
const REPO_ROOT = resolve(__dirname, '..', '..');
const BIOME = join(REPO_ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');
const scripts = (
  JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
).scripts;

/** What the formatter makes of `source` as the file at `path` (the repository's biome.json applies). */
const formatted = (path: string, source: string) =>
  execFileSync(process.execPath, [BIOME, 'format', `--stdin-file-path=${path}`], {
    cwd: REPO_ROOT,
    input: source,
    encoding: 'utf8',
  });

describe('the format check', () => {
  it('is part of npm run lint', () => {
    // Prepare / Act
    const lint = scripts.lint;

    // Assess
    expect(lint).toMatch(/^npm run -s lint:format && /);
    expect(scripts['lint:format']).toBe('biome format .');
  });

  it('leaves a committed source file as it is and rewrites one whose indentation was stripped', () => {
    // Prepare
    const path = 'lambdas/shared/table/optimistic-rounds.ts';
    const source = readFileSync(join(REPO_ROOT, path), 'utf8');
    const stripped = source.replace(/^[ \t]+/gm, '');

    // Act
    const asCommitted = formatted(path, source);
    const afterStripping = formatted(path, stripped);

    // Assess
    expect(stripped).not.toBe(source);
    expect(asCommitted).toBe(source);
    expect(afterStripping).not.toBe(stripped);
    expect(afterStripping).toBe(source);
  });
});

describe('line length where code is read', () => {
  it('keeps at most 50 lines over 120 characters in lambdas/, lib/, local/ and bin/', () => {
    // Prepare
    const files = execFileSync('git', ['ls-files', 'lambdas', 'lib', 'local', 'bin'], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    })
      .split('\n')
      .filter((file) => /\.(ts|js|cjs|mjs)$/.test(file));

    // Act
    const long = files.flatMap((file) =>
      readFileSync(join(REPO_ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, index) => (line.length > 120 ? [`${file}:${index + 1}`] : [])),
    );

    // Assess
    expect(files.length).toBeGreaterThan(100);
    expect(long.length).toBeLessThanOrEqual(50);
  });
});
