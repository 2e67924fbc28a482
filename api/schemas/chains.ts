// Seed 002 chains (SPEC §13): the stored chain (CH-1) and the execute request (CH-2). The stored
// chain's step count is the configured SPEC §18 limit (the router factory builds that schema).
import type { Limits } from '../../domain/limits';
import type { ChainAttachment } from '../../workflows/contracts';
import { descriptionSchema, nameSchema } from './common';
import { attachmentSchema } from './prompts';

const MAX_ATTACHMENTS = 20;

const word = { type: 'string', pattern: '^[A-Za-z_][A-Za-z0-9_]*$', maxLength: 128 } as const;
const attachments = { type: 'array', maxItems: MAX_ATTACHMENTS, items: attachmentSchema } as const;

const stepSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['order', 'promptId'],
  properties: {
    order: { type: 'integer', minimum: -1_000_000, maximum: 1_000_000 },
    promptId: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
    outputVariable: word,
    variables: {
      type: 'object',
      maxProperties: 100,
      propertyNames: word,
      additionalProperties: { type: 'string', maxLength: 100 * 1024 },
    },
  },
} as const;

export const createChainSchema = (limits: Pick<Limits, 'chainSteps'>) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['name', 'steps'],
    properties: {
      name: nameSchema,
      description: descriptionSchema,
      steps: { type: 'array', minItems: 1, maxItems: limits.chainSteps, items: stepSchema },
      tags: {
        type: 'array',
        maxItems: 50,
        uniqueItems: true,
        items: { type: 'string', minLength: 1, maxLength: 100 },
      },
      stopOnError: { type: 'boolean' },
      maxConcurrency: { type: 'integer', minimum: 1, maximum: 1000 },
      metadata: {
        type: 'object',
        properties: {
          // CH-2: attachments added to the step of that order, e.g. {"2": [{"type": "url", ...}]}.
          stepAttachments: {
            type: 'object',
            propertyNames: { pattern: '^-?[0-9]{1,7}$' },
            additionalProperties: attachments,
          },
        },
      },
      guardrails: {
        type: 'object',
        additionalProperties: false,
        properties: {
          rateLimitPerMinute: { type: 'integer', minimum: 1, maximum: 100_000 },
          maxTokensPerExecution: { type: 'integer', minimum: 1 },
        },
      },
    },
  }) as const;

export interface CreateChainBody {
  name: string;
  description?: string | null;
  steps: { order: number; promptId: string; outputVariable?: string; variables?: Record<string, string> }[];
  tags?: string[];
  stopOnError?: boolean;
  maxConcurrency?: number;
  metadata?: { stepAttachments?: Record<string, ChainAttachment[]> } & Record<string, unknown>;
  guardrails?: { rateLimitPerMinute?: number; maxTokensPerExecution?: number };
}

export const executeChainSchema = {
  type: 'object',
  additionalProperties: false,
  // CH-2: `{inputs, attachments?, options?}`.
  required: ['inputs'],
  properties: {
    inputs: {
      type: 'object',
      maxProperties: 100,
      propertyNames: word,
      additionalProperties: {
        anyOf: [{ type: 'string', maxLength: 100 * 1024 }, { type: 'number' }, { type: 'boolean' }],
      },
    },
    attachments,
    options: {
      type: 'object',
      additionalProperties: false,
      properties: { stopOnError: { type: 'boolean' } },
    },
  },
} as const;

export interface ExecuteChainBody {
  inputs: Record<string, string | number | boolean>;
  attachments?: ChainAttachment[];
  options?: { stopOnError?: boolean };
}

const usage = {
  type: 'object',
  required: ['totalExecutions', 'lastExecutedAt'],
  properties: {
    totalExecutions: { type: 'integer' },
    lastExecutedAt: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

/** CH-1's create response (the seed's shape); GET adds the definition. */
export const chainSummarySchema = {
  type: 'object',
  required: ['chainId', 'name', 'stepsCount', 'settings', 'usage'],
  properties: {
    chainId: { type: 'string' },
    name: { type: 'string' },
    stepsCount: { type: 'integer' },
    settings: {
      type: 'object',
      required: ['stopOnError', 'maxConcurrency'],
      properties: { stopOnError: { type: 'boolean' }, maxConcurrency: { type: 'integer' } },
    },
    usage,
  },
} as const;

/** CH-3's response. */
export const chainReportSchema = {
  type: 'object',
  required: ['chainId', 'chainExecutionId', 'status', 'steps', 'context', 'tokens', 'errors', 'elapsedMs'],
  properties: {
    chainId: { type: 'string' },
    chainExecutionId: { type: 'string', format: 'uuid' },
    status: { enum: ['SUCCESS', 'FAILED', 'PARTIAL'] },
    steps: {
      type: 'array',
      items: {
        type: 'object',
        required: ['order', 'promptId', 'status', 'providerName', 'providerModel', 'response', 'usage'],
        properties: {
          order: { type: 'integer' },
          promptId: { type: 'string' },
          status: { enum: ['SUCCESS', 'FAILED', 'SKIPPED'] },
          providerName: { type: ['string', 'null'] },
          providerModel: { type: ['string', 'null'] },
          response: { type: ['string', 'null'] },
          usage: {
            type: 'object',
            properties: { promptTokens: { type: 'integer' }, completionTokens: { type: 'integer' } },
          },
          error: { type: 'string' },
        },
      },
    },
    context: { type: 'object', additionalProperties: { type: 'string' } },
    tokens: {
      type: 'object',
      properties: {
        promptTokens: { type: 'integer' },
        completionTokens: { type: 'integer' },
        totalTokens: { type: 'integer' },
      },
    },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        properties: { order: { type: 'integer' }, promptId: { type: 'string' }, error: { type: 'string' } },
      },
    },
    elapsedMs: { type: 'integer' },
  },
} as const;
