// Configuration: defaults, every problem at once (§17 secret length, AUTH-4 admin key, LLM-3 policies).
import { ConfigError, loadConfig, requireProductionSettings, type Config } from '../../infra/config';

const SECRET = 'x'.repeat(32);
const ADMIN_ID = '0190a1b2-0000-7000-8000-000000000001';

function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('defaults: an empty environment gives the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: undefined,
      redisUrl: undefined,
      redisPrefix: 'agentry:',
      temporal: expect.objectContaining({ address: undefined, namespace: 'default', tls: undefined }),
      taskQueue: 'agentry',
      applicationSecret: undefined,
      applicationSecretPrevious: undefined,
      adminKeyId: undefined,
      adminKeySecret: undefined,
      authFailureLimit: 20, // AUTH-6
      authFailureWindowSeconds: 60,
      codecCorsOrigins: [],
      contentRetentionSeconds: 3600, // §9.3
      bodyLimitBytes: 1024 * 1024, // §18
      logLevel: 'info',
    });
    // LLM-3: 4 attempts, backoff 1 s × 2, heartbeat timeout 20 s, no-progress 120 s.
    expect(config.llm).toMatchObject({
      maximumAttempts: 4,
      initialIntervalMs: 1000,
      backoffCoefficient: 2,
      heartbeatTimeoutMs: 20_000,
      noProgressMs: 120_000,
    });
  });

  it('empty strings count as unset', () => {
    const config = loadConfig({ PORT: '', DATABASE_URL: '', AGENTRY_APPLICATION_SECRET: '' });
    expect(config.port).toBe(8080);
    expect(config.databaseUrl).toBeUndefined();
    expect(config.applicationSecret).toBeUndefined();
  });

  it('reads the values given', () => {
    const config = loadConfig({
      PORT: '9000',
      DATABASE_URL: 'postgres://u:p@db:5432/agentry',
      REDIS_URL: 'redis://redis:6379',
      TEMPORAL_ADDRESS: 'temporal:7233',
      AGENTRY_APPLICATION_SECRET: SECRET,
      AGENTRY_APPLICATION_SECRET_PREVIOUS: 'y'.repeat(40),
      AGENTRY_ADMIN_KEY_ID: ADMIN_ID,
      AGENTRY_ADMIN_KEY_SECRET: 'admin-secret',
      AGENTRY_AUTH_FAILURE_LIMIT: '5',
      AGENTRY_CODEC_CORS_ORIGINS: 'http://localhost:8233, https://ui.example ,',
      AGENTRY_LLM_MAX_ATTEMPTS: '2',
      AGENTRY_LLM_RETRY_BACKOFF: '1.5',
    });
    expect(config).toMatchObject({
      port: 9000,
      databaseUrl: 'postgres://u:p@db:5432/agentry',
      applicationSecret: SECRET,
      adminKeyId: ADMIN_ID,
      authFailureLimit: 5,
      codecCorsOrigins: ['http://localhost:8233', 'https://ui.example'],
    });
    expect(config.llm.maximumAttempts).toBe(2);
    expect(config.llm.backoffCoefficient).toBe(1.5);
  });

  it('every problem is reported at once', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      AGENTRY_DB_POOL_MAX: '0',
      AGENTRY_LLM_MAX_ATTEMPTS: '1.5',
      AGENTRY_LLM_RETRY_BACKOFF: '0.5',
      AGENTRY_APPLICATION_SECRET: 'short',
      AGENTRY_ADMIN_KEY_ID: ADMIN_ID,
    });
    expect(problems).toHaveLength(6);
    for (const name of [
      'PORT',
      'AGENTRY_DB_POOL_MAX',
      'AGENTRY_LLM_MAX_ATTEMPTS',
      'AGENTRY_LLM_RETRY_BACKOFF',
      'AGENTRY_APPLICATION_SECRET',
      'AGENTRY_ADMIN_KEY_SECRET',
    ]) {
      expect(problems.some((p) => p.includes(name))).toBe(true);
    }
  });

  it('the ConfigError message lists every problem', () => {
    expect(() => loadConfig({ PORT: '70000', AGENTRY_AUTH_FAILURE_LIMIT: '0' })).toThrow(
      /PORT[\s\S]*AGENTRY_AUTH_FAILURE_LIMIT/,
    );
  });

  it('a problem names the value it got', () => {
    expect(problemsOf({ PORT: 'eighty' })[0]).toContain('"eighty"');
  });

  it('a problem names the variable and the accepted range or values', () => {
    expect(
      problemsOf({
        PORT: '80.5',
        AGENTRY_AUTH_FAILURE_LIMIT: '12abc',
        AGENTRY_LOG_LEVEL: 'verbose',
        AGENTRY_API_RUNS_WORKER: 'yes',
      }),
    ).toEqual([
      'PORT must be an integer between 0 and 65535 (got "80.5")',
      'AGENTRY_AUTH_FAILURE_LIMIT must be an integer ≥ 1 (got "12abc")',
      'AGENTRY_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "verbose")',
      'AGENTRY_API_RUNS_WORKER must be true or false (got "yes")',
    ]);
  });

  it('§17: an application secret shorter than 32 bytes is rejected (current and previous)', () => {
    expect(problemsOf({ AGENTRY_APPLICATION_SECRET: 'x'.repeat(31) })).toEqual([
      'AGENTRY_APPLICATION_SECRET must be at least 32 bytes',
    ]);
    expect(
      problemsOf({ AGENTRY_APPLICATION_SECRET: SECRET, AGENTRY_APPLICATION_SECRET_PREVIOUS: 'short' }),
    ).toEqual(['AGENTRY_APPLICATION_SECRET_PREVIOUS must be at least 32 bytes']);
    expect(loadConfig({ AGENTRY_APPLICATION_SECRET: SECRET }).applicationSecret).toBe(SECRET);
  });

  it('§17: the 32 bytes are counted in bytes, not characters', () => {
    // 16 characters, 32 bytes in UTF-8.
    expect(loadConfig({ AGENTRY_APPLICATION_SECRET: 'é'.repeat(16) }).applicationSecret).toBe('é'.repeat(16));
  });

  it('AUTH-4: an admin key id without a secret (or the reverse) is rejected', () => {
    expect(problemsOf({ AGENTRY_ADMIN_KEY_ID: ADMIN_ID })).toEqual([
      'AGENTRY_ADMIN_KEY_ID and AGENTRY_ADMIN_KEY_SECRET must be set together',
    ]);
    expect(problemsOf({ AGENTRY_ADMIN_KEY_SECRET: 's' })).toHaveLength(1);
  });

  it('AUTH-4: the admin key id must be a UUID (key ids are UUIDs, §1)', () => {
    const problems = problemsOf({ AGENTRY_ADMIN_KEY_ID: 'admin', AGENTRY_ADMIN_KEY_SECRET: 's' });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain('AGENTRY_ADMIN_KEY_ID');
  });
});

describe('SPEC §18 limits', () => {
  it('default to the values of SPEC §18', () => {
    expect(loadConfig({}).limits).toEqual({
      templateBytes: 100 * 1024,
      renderedPromptBytes: 2 * 1024 * 1024,
      agentMessages: 50,
      agentPlaceholders: 20,
      k: 100,
      fragmentChars: 8000,
      filterDepth: 8,
      documentsPerBatch: 1000,
      chainDepth: 3,
      chainSteps: 50,
    });
  });

  it('reads the values given', () => {
    const limits = loadConfig({
      AGENTRY_LIMIT_TEMPLATE_BYTES: '2048',
      AGENTRY_LIMIT_RENDERED_PROMPT_BYTES: '4096',
      AGENTRY_LIMIT_AGENT_MESSAGES: '2',
      AGENTRY_LIMIT_AGENT_PLACEHOLDERS: '3',
      AGENTRY_LIMIT_K: '10',
      AGENTRY_LIMIT_FRAGMENT_CHARS: '500',
      AGENTRY_LIMIT_FILTER_DEPTH: '2',
      AGENTRY_LIMIT_DOCUMENTS_PER_BATCH: '2',
      AGENTRY_LIMIT_CHAIN_DEPTH: '1',
      AGENTRY_LIMIT_CHAIN_STEPS: '2',
    }).limits;
    expect(limits).toEqual({
      templateBytes: 2048,
      renderedPromptBytes: 4096,
      agentMessages: 2,
      agentPlaceholders: 3,
      k: 10,
      fragmentChars: 500,
      filterDepth: 2,
      documentsPerBatch: 2,
      chainDepth: 1,
      chainSteps: 2,
    });
  });

  it('a limit out of range is a problem naming the variable and the range', () => {
    expect(problemsOf({ AGENTRY_LIMIT_CHAIN_DEPTH: '11' })).toEqual([
      'AGENTRY_LIMIT_CHAIN_DEPTH must be an integer between 1 and 10 (got "11")',
    ]);
    expect(problemsOf({ AGENTRY_LIMIT_AGENT_MESSAGES: '0' })).toEqual([
      'AGENTRY_LIMIT_AGENT_MESSAGES must be an integer between 1 and 1000 (got "0")',
    ]);
  });

  it('a template limit above the body limit names both variables', () => {
    expect(problemsOf({ AGENTRY_BODY_LIMIT_BYTES: '65536', AGENTRY_LIMIT_TEMPLATE_BYTES: '131072' })).toEqual(
      ['AGENTRY_LIMIT_TEMPLATE_BYTES (131072) must not exceed AGENTRY_BODY_LIMIT_BYTES (65536)'],
    );
    // The default template limit (100 KB) checked against a lowered body limit, too.
    expect(problemsOf({ AGENTRY_BODY_LIMIT_BYTES: '2048' })[0]).toContain('AGENTRY_LIMIT_TEMPLATE_BYTES');
    expect(
      loadConfig({ AGENTRY_BODY_LIMIT_BYTES: '2048', AGENTRY_LIMIT_TEMPLATE_BYTES: '2048' }).limits
        .templateBytes,
    ).toBe(2048);
  });

  it('every limit problem is reported at once, with the others', () => {
    const problems = problemsOf({
      PORT: 'eighty',
      AGENTRY_LIMIT_TEMPLATE_BYTES: '10',
      AGENTRY_LIMIT_K: 'many',
      AGENTRY_LIMIT_FILTER_DEPTH: '33',
      AGENTRY_LIMIT_CHAIN_STEPS: '-1',
      AGENTRY_LIMIT_FRAGMENT_CHARS: '99',
    });
    expect(problems).toEqual([
      'PORT must be an integer between 0 and 65535 (got "eighty")',
      'AGENTRY_LIMIT_TEMPLATE_BYTES must be an integer between 1024 and 67108864 (got "10")',
      'AGENTRY_LIMIT_K must be an integer between 1 and 1000 (got "many")',
      'AGENTRY_LIMIT_FRAGMENT_CHARS must be an integer between 100 and 100000 (got "99")',
      'AGENTRY_LIMIT_FILTER_DEPTH must be an integer between 1 and 32 (got "33")',
      'AGENTRY_LIMIT_CHAIN_STEPS must be an integer between 1 and 1000 (got "-1")',
    ]);
  });
});

describe('requireProductionSettings', () => {
  it('lists every missing service setting at once', () => {
    let error: ConfigError | undefined;
    try {
      requireProductionSettings(loadConfig({ REDIS_URL: 'redis://r:6379' }));
    } catch (err) {
      error = err as ConfigError;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect(error!.problems).toHaveLength(3);
    expect(error!.problems.join('\n')).toMatch(/DATABASE_URL/);
    expect(error!.problems.join('\n')).toMatch(/TEMPORAL_ADDRESS/);
    expect(error!.problems.join('\n')).toMatch(/AGENTRY_APPLICATION_SECRET/);
    expect(error!.problems.join('\n')).not.toMatch(/REDIS_URL/);
  });

  it('passes when everything is set', () => {
    const config: Config = loadConfig({
      DATABASE_URL: 'postgres://u:p@db:5432/agentry',
      REDIS_URL: 'redis://redis:6379',
      TEMPORAL_ADDRESS: 'temporal:7233',
      AGENTRY_APPLICATION_SECRET: SECRET,
    });
    expect(() => requireProductionSettings(config)).not.toThrow();
  });

  it('AUTH-6: AGENTRY_TRUST_PROXY names which peers may set X-Forwarded-For (default loopback)', () => {
    expect(loadConfig({}).trustProxy).toBe('loopback');
    expect(loadConfig({ AGENTRY_TRUST_PROXY: '10.0.0.0/8, 172.16.0.1' }).trustProxy).toBe(
      '10.0.0.0/8, 172.16.0.1',
    );
    expect(loadConfig({ AGENTRY_TRUST_PROXY: '2' }).trustProxy).toBe(2);
  });
});
