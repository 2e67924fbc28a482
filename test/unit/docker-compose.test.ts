// Docker does not run where this project is built, so the production stack (DESIGN §8) is kept
// honest by reading docker-compose.yml, the Dockerfile and the Temporal dynamic config as data.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { settingsRead } from '../../infra/config';

const root = join(__dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

interface Healthcheck {
  test?: string[] | string;
}
interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: Healthcheck;
  ports?: string[];
  volumes?: string[];
  restart?: string;
  deploy?: { replicas?: number };
  stop_grace_period?: string;
}

// Compose resolves YAML merge keys (`<<: *app-environment`), so the test does too.
const compose = parse(read('docker-compose.yml'), { merge: true }) as { services: Record<string, Service> };
const services = compose.services;

function service(name: string): Service {
  const s = services[name];
  if (!s) throw new Error(`docker-compose.yml has no service ${name}`);
  return s;
}

const commandText = (s: Service): string => [s.command ?? []].flat().join(' ');
const seconds = (duration: string | undefined): number => {
  const match = /^(\d+)s$/.exec(duration ?? '');
  return match ? Number(match[1]) : 0;
};

const oneShotJobs = ['temporal-schema', 'temporal-setup'];
const ownImage = 'agentry:latest';

describe('docker-compose.yml (DESIGN §8 scale-out stack)', () => {
  it('DESIGN-8: describes exactly the production services', () => {
    expect(Object.keys(services).sort()).toEqual([
      'api',
      'postgres',
      'redis',
      'temporal',
      'temporal-schema',
      'temporal-setup',
      'temporal-ui',
      'worker',
    ]);
  });

  it('DESIGN-8: third-party images are the pinned versions, never latest', () => {
    const expected: Record<string, string> = {
      postgres: 'pgvector/pgvector:0.8.1-pg17',
      redis: 'redis:7-alpine',
      'temporal-schema': 'temporalio/admin-tools:1.31.2',
      temporal: 'temporalio/server:1.31.2',
      'temporal-setup': 'temporalio/admin-tools:1.31.2',
      'temporal-ui': 'temporalio/ui:2.53.3',
    };
    for (const [name, image] of Object.entries(expected)) {
      expect(service(name).image).toBe(image);
      expect(image).not.toMatch(/:latest$/);
    }
    expect(services['temporal']?.image).not.toMatch(/auto-setup/);
  });

  it('DESIGN-8: api and worker run the image built from this repository', () => {
    for (const name of ['api', 'worker']) {
      expect(service(name).image).toBe(ownImage);
      expect(service(name).build).toBeDefined();
    }
    expect(service('api').command).toEqual(['node', 'dist/api/server.js']);
    expect(service('worker').command).toEqual(['node', 'dist/worker.js']);
  });

  it('DESIGN-8: every long-running service has a health check', () => {
    const longRunning = Object.keys(services).filter((name) => !oneShotJobs.includes(name));
    expect(longRunning).toHaveLength(6);
    for (const name of longRunning) {
      const test = service(name).healthcheck?.test;
      expect({ name, test: [test ?? []].flat().length > 1 }).toEqual({ name, test: true });
    }
    expect(commandText({ command: service('postgres').healthcheck?.test })).toContain('pg_isready');
    expect(commandText({ command: service('redis').healthcheck?.test })).toContain('redis-cli ping');
    expect(commandText({ command: service('api').healthcheck?.test })).toContain(
      'http://127.0.0.1:8080/readyz',
    );
    expect(commandText({ command: service('worker').healthcheck?.test })).toContain(
      'http://127.0.0.1:9464/readyz',
    );
  });

  it('DESIGN-8: one-shot jobs are not restarted once they succeed', () => {
    for (const name of oneShotJobs) expect(service(name).restart).toBe('no');
  });

  it('DESIGN-8: start order is postgres → schema → temporal → setup → api and workers', () => {
    const conditions = (name: string): Record<string, string> =>
      Object.fromEntries(
        Object.entries(service(name).depends_on ?? {}).map(([dep, v]) => [dep, v.condition]),
      );
    expect(conditions('temporal-schema')).toEqual({ postgres: 'service_healthy' });
    expect(conditions('temporal')).toEqual({ 'temporal-schema': 'service_completed_successfully' });
    expect(conditions('temporal-setup')).toEqual({ temporal: 'service_healthy' });
    expect(conditions('temporal-ui')).toEqual({ temporal: 'service_healthy' });
    for (const name of ['api', 'worker']) {
      expect(conditions(name)).toEqual({
        postgres: 'service_healthy',
        redis: 'service_healthy',
        'temporal-setup': 'service_completed_successfully',
      });
    }
  });

  it('DESIGN-8: api and worker share the service addresses and secrets, required via ${VAR:?}', () => {
    const api = service('api').environment ?? {};
    const worker = service('worker').environment ?? {};
    const shared = [
      'DATABASE_URL',
      'REDIS_URL',
      'TEMPORAL_ADDRESS',
      'TEMPORAL_NAMESPACE',
      'AGENTRY_APPLICATION_SECRET',
      'AGENTRY_ADMIN_KEY_ID',
      'AGENTRY_ADMIN_KEY_SECRET',
    ];
    for (const name of shared) {
      expect(api[name]).toBeDefined();
      expect(worker[name]).toBe(api[name]);
    }
    expect(api['DATABASE_URL']).toMatch(
      /^postgres:\/\/agentry:\$\{POSTGRES_PASSWORD:\?[^}]+\}@postgres:5432\/agentry$/,
    );
    expect(api['REDIS_URL']).toBe('redis://redis:6379');
    expect(api['TEMPORAL_ADDRESS']).toBe('temporal:7233');
    for (const secret of ['AGENTRY_APPLICATION_SECRET', 'AGENTRY_ADMIN_KEY_ID', 'AGENTRY_ADMIN_KEY_SECRET']) {
      expect(api[secret]).toMatch(new RegExp(`^\\$\\{${secret}:\\?[^}]+\\}$`));
    }
    expect(service('postgres').environment?.['POSTGRES_PASSWORD']).toMatch(
      /^\$\{POSTGRES_PASSWORD:\?[^}]+\}$/,
    );
    expect(worker['AGENTRY_WORKER_METRICS_PORT']).toBe('9464');
    expect(worker['NODE_OPTIONS']).toMatch(/--max-old-space-size=\d+/);
  });

  it('the commented Temporal Cloud profile names only settings the configuration reads', () => {
    const names = new Set(settingsRead().map((s) => s.name));
    const commented = [...read('docker-compose.yml').matchAll(/^\s*#\s+(TEMPORAL_[A-Z_]+):/gm)].map(
      (m) => m[1]!,
    );
    expect(commented).toEqual(
      expect.arrayContaining([
        'TEMPORAL_ADDRESS',
        'TEMPORAL_NAMESPACE',
        'TEMPORAL_API_KEY',
        'TEMPORAL_TLS_CLIENT_CERT_PATH',
      ]),
    );
    expect(commented.filter((name) => !names.has(name))).toEqual([]);
  });

  it('DESIGN-8: no secret is written into the file', () => {
    const secretish = /(PASSWORD|PWD|SECRET)$/;
    for (const [name, s] of Object.entries(services)) {
      for (const [key, value] of Object.entries(s.environment ?? {})) {
        if (secretish.test(key))
          expect({ name, key, value }).toEqual({ name, key, value: expect.stringMatching(/^\$\{/) });
      }
    }
  });

  it('DESIGN-8: the schema job creates and migrates both Temporal databases idempotently', () => {
    const job = service('temporal-schema');
    const script = commandText(job);
    expect(job.environment?.['SQL_PASSWORD']).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    for (const db of ['temporal', 'temporal_visibility']) {
      for (const step of ['create', 'setup-schema -v 0.0', 'update-schema -d']) {
        expect(script).toContain(`--db ${db} ${step}`);
      }
    }
    expect(script).toContain('--plugin postgres12');
    expect(script).toContain('/etc/temporal/schema/postgresql/v12/temporal/versioned');
    expect(script).toContain('/etc/temporal/schema/postgresql/v12/visibility/versioned');
  });

  it('DESIGN-8 / SPEC DX-5: the setup job creates the namespace and all five Keyword search attributes', () => {
    const script = commandText(service('temporal-setup'));
    expect(script).toContain('temporal operator cluster health --address');
    expect(script).toContain('address=temporal:7233');
    expect(script).toMatch(
      /namespace describe[^\n]*\|\|\s*temporal operator namespace create[^\n]*--retention 7d/,
    );
    expect(script).toContain('--type Keyword');
    const loop = /for name in ([A-Za-z ]+); do/.exec(script);
    expect(loop?.[1]?.trim().split(/\s+/).sort()).toEqual([
      'AgentId',
      'ApiKeyId',
      'ChainId',
      'LlmId',
      'PipelineId',
    ]);
    // Idempotent: each attribute is looked up before it is created.
    expect(script).toMatch(/search-attribute list[^\n]*grep -qw/);
  });

  it('DESIGN-8: the Temporal server is configured by environment and not published', () => {
    const temporal = service('temporal');
    const env = temporal.environment ?? {};
    expect(env).toMatchObject({
      DB: 'postgres12',
      DB_PORT: '5432',
      POSTGRES_SEEDS: 'postgres',
      POSTGRES_USER: 'agentry',
      BIND_ON_IP: '0.0.0.0',
      NUM_HISTORY_SHARDS: '4',
      TEMPORAL_ALLOW_NO_AUTH: 'true',
    });
    expect(env['POSTGRES_PWD']).toMatch(/^\$\{POSTGRES_PASSWORD:\?/);
    expect(temporal.ports).toBeUndefined();
  });

  it('DESIGN-8: the dynamic config mounted into the Temporal server exists and parses', () => {
    const temporal = service('temporal');
    const target = temporal.environment?.['DYNAMIC_CONFIG_FILE_PATH'];
    expect(target).toBe('/etc/temporal/config/dynamicconfig/agentry.yaml');
    const mount = (temporal.volumes ?? []).find((v) => v.split(':')[1] === target);
    const source = mount?.split(':')[0] ?? '';
    expect(source).toBe('./deploy/temporal/dynamicconfig.yaml');
    expect(existsSync(join(root, source))).toBe(true);
    const config = parse(read(source)) as Record<string, { value: unknown; constraints?: object }[]>;
    expect(config['limit.maxIDLength']?.[0]?.value).toBe(255);
    for (const [key, values] of Object.entries(config)) {
      expect({ key, ok: Array.isArray(values) && values.every((v) => 'value' in v) }).toEqual({
        key,
        ok: true,
      });
    }
    expect(config['system.forceSearchAttributesCacheRefreshOnRead']).toBeUndefined();
  });

  it('DESIGN-8: the Temporal UI decodes payloads through the api codec server', () => {
    const ui = service('temporal-ui');
    const env = ui.environment ?? {};
    expect(env['TEMPORAL_ADDRESS']).toBe('temporal:7233');
    expect(env['TEMPORAL_UI_PORT']).toBe('8080');
    // The capability URL (printed by dist/scripts/codec-url.js), not the admin-only endpoint.
    expect(env['TEMPORAL_CODEC_ENDPOINT']).toMatch(/\/temporal-codec\/\$\{AGENTRY_CODEC_CAPABILITY:-\}$/);
    expect(env['TEMPORAL_CORS_ORIGINS']).toBeDefined();
    expect(ui.ports?.some((p) => p.endsWith('8233:8080'))).toBe(true);
    // The api allows the UI's origin to call the codec server.
    expect(service('api').environment?.['AGENTRY_CODEC_CORS_ORIGINS']).toBe(env['TEMPORAL_CORS_ORIGINS']);
  });

  it('DESIGN-8: workers scale out; an api with a fixed host port stays a single replica', () => {
    const worker = service('worker');
    expect(worker.deploy?.replicas).toBeGreaterThanOrEqual(2);
    expect(worker.ports).toBeUndefined();
    expect(seconds(worker.stop_grace_period)).toBeGreaterThanOrEqual(30);
    const api = service('api');
    expect(api.ports).toContain('8080:8080');
    expect(api.deploy?.replicas ?? 1).toBe(1);
  });

  it('DESIGN-8: Redis runs with AOF on and both stores keep their data in named volumes', () => {
    expect(commandText(service('redis'))).toMatch(/--appendonly yes/);
    const named = Object.keys((compose as { volumes?: Record<string, unknown> }).volumes ?? {});
    for (const name of ['postgres', 'redis']) {
      const volume = service(name).volumes?.[0]?.split(':')[0] ?? '';
      expect(named).toContain(volume);
    }
  });
});

describe('Dockerfile (DESIGN §8 image)', () => {
  const dockerfile = read('Dockerfile');
  const stages = dockerfile.split(/^FROM /m).slice(1);
  const runtime = stages[stages.length - 1] ?? '';

  it('issue 36: builds on a supported Node LTS (24) in a build stage and a runtime stage', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    for (const stage of stages) expect(stage).toMatch(/^node:24-bookworm-slim\b/);
    expect(dockerfile).toMatch(/RUN .*npm ci\b/);
    expect(dockerfile).toContain('npm run build');
  });

  it('DESIGN-8: the runtime stage holds production dependencies and dist/, owned by root', () => {
    expect(runtime).toMatch(/npm ci --omit=dev/);
    expect(runtime).toMatch(/COPY --from=build \S*\/dist \.\/dist/);
    // No --chown: the app user cannot write its own code.
    expect(runtime).not.toMatch(/COPY --chown/);
    expect(runtime).toMatch(/NODE_ENV=production/);
  });

  it('issue 36: the last USER is a numeric non-root uid and gid (runAsNonRoot checks a number)', () => {
    const users = [...runtime.matchAll(/^USER (.+)$/gm)].map((m) => m[1]!.trim());
    const last = users[users.length - 1] ?? '';
    expect(last).toMatch(/^\d+:\d+$/);
    const [uid, gid] = last.split(':').map(Number);
    expect(uid).toBeGreaterThan(0);
    expect(gid).toBeGreaterThan(0);
    // The chart runs the pods as the same uid (values.yaml podSecurityContext).
    const values = parse(read('deploy/helm/agentry/values.yaml')) as {
      podSecurityContext: { runAsUser: number; runAsGroup: number; runAsNonRoot: boolean };
    };
    expect(values.podSecurityContext).toMatchObject({ runAsUser: uid, runAsGroup: gid, runAsNonRoot: true });
  });

  it('issue 36: nothing in the image is declared writable (a read-only root file system suits it)', () => {
    expect(dockerfile).not.toMatch(/^VOLUME /m);
    expect(runtime).toMatch(/AGENTRY_WORKFLOW_BUNDLE=\/app\/dist\/workflow-bundle\.js/);
  });

  it('DESIGN-8: the runtime CMD starts the api', () => {
    const cmd = /^CMD (.+)$/m.exec(runtime)?.[1] ?? '';
    expect(JSON.parse(cmd)).toEqual(['node', 'dist/api/server.js']);
  });

  it('DESIGN-8: local state and secrets stay out of the build context', () => {
    const ignored = read('.dockerignore').split('\n');
    for (const entry of [
      'node_modules',
      'dist',
      '.agentry',
      '.git',
      'coverage',
      'bench/results.json',
      '.env',
    ]) {
      expect(ignored).toContain(entry);
    }
  });
});
