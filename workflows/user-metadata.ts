// Temporal user metadata (issue 13 "readable at a glance"): the one-line summary and the details
// every workflow starts with, shared by the API (workflow starts) and the workflows (child
// starts), so the UI's workflow list reads "agent Support v3 · pipeline kb · LLM gpt" instead of
// bare ids. Ids and resource names only, never content: a name is what an administrator called
// an agent, pipeline, LLM or chain, not a prompt, variable or answer. Like every payload, the
// metadata is encrypted by the payload codec; the UI shows it through the codec endpoint.

export interface WorkflowLabel {
  /** The execution kind (`agent`, `llm_query`, `gateway`, `chain`, `chain_step`, `reference`) or `ingestion`. */
  kind: string;
  agent?: { id: string; version?: number; name?: string };
  pipeline?: { id: string; name?: string };
  llm?: { id: string; name?: string };
  chain?: { id: string; name?: string };
  prompt?: { id: string };
  /** A chain step's order. */
  step?: number;
  parentExecutionId?: string;
  documentVersionId?: string;
  /** A document batch (`ingestion_batch`) and how many documents it holds. */
  batch?: { id: string; documents: number };
}

interface WorkflowMetadata {
  staticSummary: string;
  staticDetails: string;
}

const KIND_TITLES: Record<string, string> = {
  agent: 'agent execution',
  llm_query: 'LLM query',
  gateway: 'gateway prompt',
  chain: 'chain',
  chain_step: 'chain step',
  reference: 'reference prompt',
  ingestion: 'document ingestion',
  ingestion_batch: 'document batch ingestion',
};

const NAME_MAX = 60;

/** One line, at most NAME_MAX characters, in quotes: a name cannot break the summary's markdown line. */
function quoted(name: string): string {
  const line = name.replace(/\s+/g, ' ').trim();
  return `"${line.length > NAME_MAX ? `${line.slice(0, NAME_MAX - 1)}…` : line}"`;
}

type Part = [what: string, summary: string, details: string];

/** A named resource: its name (or id) in the summary, name and id in the details. */
function resource(what: string, r: { id: string; name?: string }, suffix = ''): Part {
  const name = r.name ? quoted(r.name) : undefined;
  return [what, `${what} ${name ?? r.id}${suffix}`, `${name ? `${name} ` : ''}\`${r.id}\`${suffix}`];
}

/** The parts of a label in reading order; the parent and document version are in the details only. */
function parts(label: WorkflowLabel): Part[] {
  const out: Part[] = [];
  if (label.chain) out.push(resource('chain', label.chain));
  if (label.step !== undefined) out.push(['step', `step ${label.step}`, String(label.step)]);
  if (label.agent) {
    const version = label.agent.version !== undefined ? ` v${label.agent.version}` : '';
    out.push(resource('agent', label.agent, version));
  }
  if (label.prompt) out.push(resource('prompt', label.prompt));
  if (label.pipeline) out.push(resource('pipeline', label.pipeline));
  if (label.llm) out.push(resource('LLM', label.llm));
  if (label.batch)
    out.push([
      'batch',
      `${label.batch.documents} documents`,
      `\`${label.batch.id}\`, ${label.batch.documents} documents`,
    ]);
  if (label.documentVersionId) out.push(['document version', '', `\`${label.documentVersionId}\``]);
  if (label.parentExecutionId) out.push(['parent execution', '', `\`${label.parentExecutionId}\``]);
  return out;
}

/** `staticSummary` and `staticDetails` of a workflow start (client or child). */
export function workflowMetadata(label: WorkflowLabel): WorkflowMetadata {
  const title = KIND_TITLES[label.kind] ?? label.kind;
  const named = parts(label);
  const summary = [title, ...named.map(([, text]) => text).filter(Boolean)].join(' · ');
  const details = [`**${title}**`, ...named.map(([what, , text]) => `- ${what}: ${text}`)].join('\n');
  return { staticSummary: summary, staticDetails: details };
}
