import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The README and docs/ are what a user who clones the repository has: every link in them must lead
 * to a file of the repository (never to a web address, nor to a sibling folder the clone does not
 * have), and every `#anchor` to a heading of the page it names.
 */
const REPO_ROOT = resolve(__dirname, '..', '..');

function markdownUnder(folder: string): string[] {
  return readdirSync(join(REPO_ROOT, folder)).flatMap((name) => {
    const path = `${folder}/${name}`;
    if (statSync(join(REPO_ROOT, path)).isDirectory()) return markdownUnder(path);
    return name.endsWith('.md') ? [path] : [];
  });
}

const PAGES = ['README.md', 'bench/README.md', 'clients/typescript/README.md', ...markdownUnder('docs')];

/** The page without its fenced code blocks: code is shown, not followed. */
const prose = (page: string) =>
  readFileSync(join(REPO_ROOT, page), 'utf8').replace(/^```[\s\S]*?^```/gm, (block) => block.replace(/[^\n]/g, ''));

type Link = { target: string; line: number };

/** `[text](target)` and `<scheme:...>` links, with their line. */
function links(page: string): Link[] {
  return prose(page)
    .split('\n')
    .flatMap((text, index) =>
      [...text.matchAll(/\]\(([^)\s]+)\)|<([a-z][a-z0-9+.-]*:[^>\s]+)>/gi)].map((match) => ({
        target: match[1] ?? match[2],
        line: index + 1,
      })),
    );
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(page: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of prose(page).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

describe('README and docs/ stand alone', () => {
  it.each(PAGES)('%s links to no web address', (page) => {
    const external = links(page)
      .filter(({ target }) => /^[a-z][a-z0-9+.-]*:/i.test(target))
      .map(({ line, target }) => `${page}:${line}: ${target}`);
    expect(external).toEqual([]);
  });

  it.each(PAGES)('%s links only to files inside the repository, and to headings that exist', (page) => {
    const broken = links(page)
      .filter(({ target }) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
      .flatMap(({ target, line }) => {
        const [file, anchor] = target.split('#');
        const path = file === '' ? page : relative(REPO_ROOT, resolve(REPO_ROOT, dirname(page), file));
        if (path.startsWith('..') || !existsSync(join(REPO_ROOT, path)))
          return [`${page}:${line}: ${target} (no such file)`];
        if (anchor !== undefined && path.endsWith('.md') && !anchors(path).has(anchor))
          return [`${page}:${line}: ${target} (no such heading)`];
        return [];
      });
    expect(broken).toEqual([]);
  });

  it.each(PAGES)('%s names no file outside the repository (../shared/)', (page) => {
    expect(readFileSync(join(REPO_ROOT, page), 'utf8')).not.toContain('../shared/');
  });
});
