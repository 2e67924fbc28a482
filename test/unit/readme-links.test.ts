// The README as a newcomer reads it from a clone: every link opens a file of the repository (and
// the heading it names), and it cites no document the repository does not hold (the project's
// SPEC, DESIGN and STYLE live outside it).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '..', '..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(file: string): string[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => /^#{1,6} /.test(line))
    .map((line) => anchorOf(line.replace(/^#+ /, '')));
}

describe('README.md', () => {
  const links = [...README.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((l) => !/^https?:/.test(l));

  it('links only to files of the repository, and to headings they have', () => {
    expect(links.length).toBeGreaterThan(5);
    const broken = links.filter((link) => {
      const [file, anchor] = link.split('#');
      const target = file ? path.join(ROOT, file) : path.join(ROOT, 'README.md');
      if (!existsSync(target)) return true;
      return anchor !== undefined && target.endsWith('.md') && !anchorsOf(target).includes(anchor);
    });
    expect(broken).toEqual([]);
  });

  it('cites no document outside the repository (SPEC, DESIGN, STYLE)', () => {
    expect(README.match(/\b(SPEC|DESIGN|STYLE)(\.md)?\b[^\n]{0,3}(§|\d)/g)).toBeNull();
  });
});
