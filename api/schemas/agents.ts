// Agent payloads (SPEC §8). The shapes are checked here; the AG rules, with their exact
// messages, in domain/agent-rules.ts.
// The SPEC §18 counts are the configured limits (the router factory builds these schemas).
import type { AgentLimits } from '../../domain/agent-definition';
import { descriptionSchema, nameSchema } from './common';

const definitionProperties = (limits: AgentLimits) =>
  ({
    name: nameSchema,
    description: descriptionSchema,
    prompt: { type: 'array', maxItems: limits.agentMessages },
    placeholders: { type: 'array', maxItems: limits.agentPlaceholders },
    metadata: { type: 'object' },
    tools: { type: 'array', maxItems: 100 },
  }) as const;

export const createAgentSchema = (limits: AgentLimits) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['name', 'prompt', 'placeholders'],
    properties: definitionProperties(limits),
  }) as const;

export const updateAgentSchema = (limits: AgentLimits) =>
  ({
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: definitionProperties(limits),
  }) as const;

export interface AgentBody {
  name: string;
  description?: string | null;
  prompt: unknown[];
  placeholders: unknown[];
  metadata?: Record<string, unknown>;
  tools?: unknown[];
}

export const agentSchema = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    prompt: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          role: { enum: ['system', 'user', 'assistant'] },
          template: { type: 'string' },
          include: { type: 'boolean' },
        },
      },
    },
    placeholders: { type: 'array', items: { type: 'object' } },
    metadata: { type: 'object' },
    tools: { type: 'array', items: { type: 'object' } },
    version: { type: 'integer' },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
  },
} as const;

const streamSchema = { enum: [true, false, 'ndjson', 'sse'] } as const;

/** SPEC §9.1 (and §10: a dry run accepts the same body and ignores what it does not use). */
export const executeAgentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['prompt', 'classification'],
  properties: {
    prompt: { type: 'object' },
    classification: {
      anyOf: [
        { type: 'string' },
        { type: 'object' },
        { type: 'array', maxItems: 100, items: { anyOf: [{ type: 'string' }, { type: 'object' }] } },
      ],
    },
    filters: { type: 'object' },
    stream: streamSchema,
    tracing: { type: 'boolean' },
    temperature: { type: 'number', minimum: 0, maximum: 2 },
  },
} as const;

export interface ExecuteAgentBody {
  prompt: Record<string, unknown>;
  classification: unknown;
  filters?: Record<string, unknown>;
  stream?: true | false | 'ndjson' | 'sse';
  tracing?: boolean;
  temperature?: number;
}
