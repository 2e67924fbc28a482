// Domain objects → API bodies (timestamps as ISO strings, internal fields dropped).
import type { ApiKey } from '../db/api-key-store';
import type { Llm } from '../db/llm-store';

export const presentApiKey = (k: ApiKey) => ({
  id: k.id,
  name: k.name,
  description: k.description,
  permissions: k.permissions,
  created_at: k.created_at.toISOString(),
  updated_at: k.updated_at.toISOString(),
});

export const presentLlm = (l: Llm) => ({
  id: l.id,
  name: l.name,
  description: l.description,
  endpoint: l.endpoint,
  model: l.model,
  provider: l.provider,
  resumable: l.resumable,
  has_api_key: true,
  created_at: l.created_at.toISOString(),
  updated_at: l.updated_at.toISOString(),
});
