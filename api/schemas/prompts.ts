// Seed 002 payloads (SPEC §12): stored prompts, routing policies and the gateway execute.
import type { Limits } from '../../domain/limits';
import { nameSchema } from './common';

const uuid = { type: 'string', format: 'uuid' } as const;
const nullableUuid = { anyOf: [uuid, { type: 'null' }] } as const;
type TemplateLimit = Pick<Limits, 'templateBytes'>;
/**
 * SPEC §18: a template is at most the configured template limit; ajv counts characters (never
 * more than bytes), the route checks bytes.
 */
const templateText = (limits: TemplateLimit) =>
  ({ type: 'string', maxLength: limits.templateBytes }) as const;

export const attachmentSchema = {
  oneOf: [
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'fileId'],
      properties: { type: { const: 'file' }, fileId: { type: 'string', minLength: 1, maxLength: 512 } },
    },
    {
      type: 'object',
      additionalProperties: false,
      required: ['type', 'url'],
      properties: {
        type: { const: 'url' },
        url: { type: 'string', format: 'uri', pattern: '^https?://', maxLength: 4096 },
      },
    },
  ],
} as const;

const promptProperties = (limits: TemplateLimit) =>
  ({
    name: nameSchema,
    systemPrompt: { anyOf: [templateText(limits), { type: 'null' }] },
    userPrompt: { ...templateText(limits), minLength: 1 },
    temperature: { anyOf: [{ type: 'number', minimum: 0, maximum: 2 }, { type: 'null' }] },
    attachment: { anyOf: [attachmentSchema, { type: 'null' }] },
    routingPolicyId: nullableUuid,
    customGatewayId: nullableUuid,
    requiresAttachment: { type: 'boolean' },
    requiresDynamicData: { type: 'boolean' },
  }) as const;

export const createPromptSchema = (limits: TemplateLimit) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['name', 'userPrompt'],
    properties: {
      promptId: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
      ...promptProperties(limits),
    },
  }) as const;

export const updatePromptSchema = (limits: TemplateLimit) =>
  ({
    type: 'object',
    additionalProperties: false,
    minProperties: 1,
    properties: promptProperties(limits),
  }) as const;

export interface PromptBody {
  promptId?: string;
  name: string;
  systemPrompt?: string | null;
  userPrompt: string;
  temperature?: number | null;
  attachment?: { type: 'file'; fileId: string } | { type: 'url'; url: string } | null;
  routingPolicyId?: string | null;
  customGatewayId?: string | null;
  requiresAttachment?: boolean;
  requiresDynamicData?: boolean;
}

export const routingPolicyBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name', 'llms'],
  properties: {
    name: nameSchema,
    llms: { type: 'array', minItems: 1, maxItems: 20, uniqueItems: true, items: uuid },
  },
} as const;

export const updateRoutingPolicySchema = {
  ...routingPolicyBodySchema,
  required: [],
  minProperties: 1,
} as const;

export interface RoutingPolicyBody {
  name: string;
  llms: string[];
}

export const gatewayExecuteSchema = (limits: TemplateLimit) =>
  ({
    type: 'object',
    additionalProperties: false,
    required: ['prompt'],
    properties: {
      prompt: { ...templateText(limits), minLength: 1 },
      sourcePromptId: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
      temperature: { type: 'number', minimum: 0, maximum: 2 },
      variables: {
        type: 'object',
        maxProperties: 100,
        propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]*$' },
        additionalProperties: { type: 'string', maxLength: 100 * 1024 },
      },
      stream: { anyOf: [{ type: 'boolean' }, { enum: ['ndjson', 'sse'] }] },
    },
  }) as const;

export interface GatewayExecuteBody {
  prompt: string;
  sourcePromptId?: string;
  temperature?: number;
  variables?: Record<string, string>;
  stream?: boolean | 'ndjson' | 'sse';
}

const successFlag = { type: 'boolean', const: true } as const;
export const promptEnvelopeSchema = {
  type: 'object',
  required: ['success', 'prompt'],
  properties: { success: successFlag, prompt: { type: 'object' } },
} as const;
