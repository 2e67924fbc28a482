// DX-5: the Keyword search attributes operators filter the Temporal UI by (ids only). Shared by
// the API (workflow starts) and the workflows (child workflow starts).
import { defineSearchAttributeKey, SearchAttributeType, type SearchAttributePair } from '@temporalio/common';

export const SearchAttributes = {
  AgentId: defineSearchAttributeKey('AgentId', SearchAttributeType.KEYWORD),
  PipelineId: defineSearchAttributeKey('PipelineId', SearchAttributeType.KEYWORD),
  LlmId: defineSearchAttributeKey('LlmId', SearchAttributeType.KEYWORD),
  ApiKeyId: defineSearchAttributeKey('ApiKeyId', SearchAttributeType.KEYWORD),
  ChainId: defineSearchAttributeKey('ChainId', SearchAttributeType.KEYWORD),
} as const;

type SearchAttributeName = keyof typeof SearchAttributes;

/** The pairs of the attributes that have a value. */
export function searchAttributePairs(
  values: Partial<Record<SearchAttributeName, string | null | undefined>>,
): SearchAttributePair[] {
  return Object.entries(values)
    .filter((entry): entry is [SearchAttributeName, string] => typeof entry[1] === 'string')
    .map(([name, value]) => ({ key: SearchAttributes[name], value }) as SearchAttributePair);
}
