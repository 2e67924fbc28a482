// The product version, from the nearest package.json above this file (works from sources and dist/).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

function findVersion(): string {
  for (let dir = __dirname; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const file = path.join(dir, 'package.json');
    if (existsSync(file)) return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
  }
  return '0.0.0';
}

export const VERSION = findVersion();
