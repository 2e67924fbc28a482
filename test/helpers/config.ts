// Test configuration: real services, a database, Redis key prefix and task queue per test file,
// and short timeouts and retry intervals so failure paths run in seconds.
import { randomBytes, randomUUID } from 'node:crypto';
import { loadConfig, type Config } from '../../infra/config';
import { REDIS_URL, TEMPORAL_ADDRESS, WORKFLOW_BUNDLE } from './services';

export const TEST_APPLICATION_SECRET = 'test-application-secret-0123456789abcdef';

export interface TestEnv {
  env: Record<string, string>;
  config: Config;
  adminKeyId: string;
  adminKeySecret: string;
}

export function testEnv(databaseUrl: string, overrides: Record<string, string> = {}): TestEnv {
  const suffix = randomBytes(4).toString('hex');
  const adminKeyId = randomUUID();
  const adminKeySecret = randomBytes(24).toString('base64url');
  const env: Record<string, string> = {
    DATABASE_URL: databaseUrl,
    REDIS_URL,
    TEMPORAL_ADDRESS,
    AGENTRY_REDIS_PREFIX: `agentry-test-${suffix}:`,
    AGENTRY_TASK_QUEUE: `test-${suffix}`,
    AGENTRY_APPLICATION_SECRET: TEST_APPLICATION_SECRET,
    AGENTRY_ADMIN_KEY_ID: adminKeyId,
    AGENTRY_ADMIN_KEY_SECRET: adminKeySecret,
    AGENTRY_WORKFLOW_BUNDLE: WORKFLOW_BUNDLE,
    AGENTRY_LOG_LEVEL: 'warn',
    AGENTRY_DB_POOL_MAX: '4',
    AGENTRY_LLM_MAX_ATTEMPTS: '4',
    AGENTRY_LLM_RETRY_INITIAL_MS: '100',
    AGENTRY_LLM_RETRY_MAX_INTERVAL_MS: '500',
    AGENTRY_LLM_HEARTBEAT_TIMEOUT_MS: '5000',
    AGENTRY_LLM_NO_PROGRESS_MS: '3000',
    AGENTRY_LLM_START_TO_CLOSE_MS: '30000',
    AGENTRY_BOOKKEEPING_RETRY_INITIAL_MS: '100',
    AGENTRY_INGESTION_MAX_ATTEMPTS: '3',
    AGENTRY_INGESTION_RETRY_INITIAL_MS: '100',
    AGENTRY_INGESTION_RETRY_MAX_INTERVAL_MS: '500',
    AGENTRY_INGESTION_HEARTBEAT_TIMEOUT_MS: '5000',
    PORT: '0',
    HOST: '127.0.0.1',
    ...overrides,
  };
  return { env, config: loadConfig(env), adminKeyId, adminKeySecret };
}
