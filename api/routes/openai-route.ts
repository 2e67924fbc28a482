// How the OpenAI-compatible routes (/v1/...) are declared: one tag, OpenAI's error body, and Bearer
// authentication beside the x-api-key headers (docs/decisions.md, "OpenAI-compatible routes").
import type { RouteSpec } from '../route-registry';
import { openAiErrorBodySchema } from '../schemas/response-objects';

export const openAiRoute = (spec: Omit<RouteSpec, 'tag' | 'errorBody' | 'bearer'>): RouteSpec => ({
  ...spec,
  tag: 'OpenAI-compatible (Responses API)',
  errorBody: openAiErrorBodySchema,
  bearer: true,
});
