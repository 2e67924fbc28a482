// Text splitters (SPEC §3) are LangChain's, so `chunk_size`/`chunk_overlap` mean exactly what users
// of LangChain expect: lengths in characters (UTF-16 code units), overlap carried between chunks.
// On top of LangChain we add one guarantee: no chunk exceeds the fragment limit (SPEC §18).
import { CharacterTextSplitter, RecursiveCharacterTextSplitter } from '@langchain/textsplitters';
import { DEFAULT_LIMITS } from '../domain/limits';

export type SplitterProvider = 'recursive_character' | 'character';

export interface SplitterParameters {
  /** Maximum chunk length in characters, 1 to the fragment limit (validated by the API). */
  chunk_size: number;
  /** Characters shared by consecutive chunks, 0..chunk_size-1. */
  chunk_overlap: number;
  /** `character` only; default "\n\n". */
  separator?: string;
}

/** LangChain's defaults, spelled out because SPEC §3 promises exactly these. */
const RECURSIVE_SEPARATORS = ['\n\n', '\n', ' ', ''];

function recursiveSplitter(parameters: SplitterParameters): RecursiveCharacterTextSplitter {
  return new RecursiveCharacterTextSplitter({
    chunkSize: parameters.chunk_size,
    chunkOverlap: parameters.chunk_overlap,
    separators: RECURSIVE_SEPARATORS,
  });
}

/**
 * The chunks of `text`, in order. `maxChunkChars` is the fragment limit (SPEC §18, configurable);
 * a `chunk_size` above it is lowered to it.
 */
export async function splitText(
  provider: SplitterProvider,
  parameters: SplitterParameters,
  text: string,
  maxChunkChars: number = DEFAULT_LIMITS.fragmentChars,
): Promise<string[]> {
  const bounded: SplitterParameters =
    parameters.chunk_size <= maxChunkChars
      ? parameters
      : {
          ...parameters,
          chunk_size: maxChunkChars,
          chunk_overlap: Math.min(parameters.chunk_overlap, maxChunkChars - 1),
        };
  if (provider === 'recursive_character') {
    // The recursive splitter's last separator is "" (single characters), so it never yields a
    // chunk longer than chunk_size.
    return recursiveSplitter(bounded).splitText(text);
  }
  if (provider !== 'character') throw new Error(`Unknown text splitter provider: ${String(provider)}`);

  const chunks = await new CharacterTextSplitter({
    chunkSize: bounded.chunk_size,
    chunkOverlap: bounded.chunk_overlap,
    separator: parameters.separator ?? '\n\n',
  }).splitText(text);
  // LangChain's character splitter keeps a run without the separator whole, however long (and
  // console.warns "Created a chunk of size N"). Chunks up to the fragment limit are kept, as in
  // LangChain; a longer one is re-split by the recursive splitter with the same size and overlap,
  // so a fragment never exceeds the limit.
  if (chunks.every((chunk) => chunk.length <= maxChunkChars)) return chunks;
  const recursive = recursiveSplitter(bounded);
  const result: string[] = [];
  for (const chunk of chunks) {
    if (chunk.length <= maxChunkChars) result.push(chunk);
    else result.push(...(await recursive.splitText(chunk)));
  }
  return result;
}
