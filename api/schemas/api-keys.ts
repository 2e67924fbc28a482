// API key payloads (SPEC §2).
import { descriptionSchema, nameSchema } from './common';

const permissionsSchema = {
  type: 'array',
  maxItems: 200,
  uniqueItems: true,
  items: { type: 'string', minLength: 1, maxLength: 300 },
} as const;

const apiKeyProperties = {
  name: nameSchema,
  description: descriptionSchema,
  permissions: permissionsSchema,
} as const;

export const createApiKeySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['name'],
  properties: apiKeyProperties,
} as const;

export interface CreateApiKeyBody {
  name: string;
  description?: string | null;
  permissions?: string[];
}

export const updateApiKeySchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: apiKeyProperties,
} as const;

export type UpdateApiKeyBody = Partial<CreateApiKeyBody>;

export const apiKeySchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    permissions: { type: 'array', items: { type: 'string' } },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    secret: { type: 'string', description: 'Only in the create response' },
  },
} as const;
