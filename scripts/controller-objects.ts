// The Temporal Worker Controller's CRDs are not served by the Go module proxy, so its objects
// cannot be validated against their own schemas here (docs/decisions.md, "Kubernetes"). What
// matters in them is what the controller makes of them: for each version, a Deployment from a
// WorkerDeployment's pod template, and an HPA, a ScaledObject or a PDB from a
// WorkerResourceTemplate, with the fields it injects (`{}` sentinels) filled in. This filter
// (stdin → stdout, YAML streams) replaces each of those objects with what the controller would
// create for one build, so that kubeconform validates them strictly against the Kubernetes
// schemas; a Connection carries no Kubernetes object and is dropped (scripts/check-chart.sh
// counts what it replaced). Every other object passes through unchanged.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
}
interface PodTemplate {
  metadata?: { labels?: Record<string, string> };
}
interface TemplatedSpec {
  scaleTargetRef?: object;
  selector?: { matchLabels?: object };
}

const BUILD_ID = 'check-build';

/** The versioned Deployment the controller runs for one build of a WorkerDeployment. */
export function versionedDeployment(wd: Obj): Obj {
  const name = `${wd.metadata.name}-${BUILD_ID}`;
  const versionLabels = { 'temporal.io/build-id': BUILD_ID, 'temporal.io/deployment-name': wd.metadata.name };
  const spec = wd.spec ?? {};
  const template = structuredClone(spec['template']) as PodTemplate;
  template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, ...versionLabels } };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, ...(wd.metadata.labels ? { labels: wd.metadata.labels } : {}) },
    spec: {
      ...(spec['replicas'] !== undefined ? { replicas: spec['replicas'] } : {}),
      selector: { matchLabels: versionLabels },
      template,
    },
  };
}

/** One build's copy of a WorkerResourceTemplate's object, with the controller's injections. */
export function renderedTemplate(wrt: Obj): Obj {
  const object = structuredClone(wrt.spec?.['template']) as Obj;
  const ref = wrt.spec?.['workerDeploymentRef'] as { name: string };
  const target = `${ref.name}-${BUILD_ID}`;
  const spec = (object.spec ?? {}) as TemplatedSpec;
  if (isEmpty(spec.scaleTargetRef))
    spec.scaleTargetRef =
      object.kind === 'ScaledObject'
        ? { name: target }
        : { apiVersion: 'apps/v1', kind: 'Deployment', name: target };
  if (spec.selector && isEmpty(spec.selector.matchLabels))
    spec.selector.matchLabels = { 'temporal.io/build-id': BUILD_ID };
  return { ...object, metadata: { name: `${wrt.metadata.name}-${BUILD_ID}` }, spec: { ...spec } };
}

const isEmpty = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && Object.keys(v as object).length === 0;

function project(object: Obj): Obj | undefined {
  if (object.apiVersion !== 'temporal.io/v1alpha1') return object;
  if (object.kind === 'WorkerDeployment') return versionedDeployment(object);
  if (object.kind === 'WorkerResourceTemplate') return renderedTemplate(object);
  if (object.kind === 'Connection') return undefined;
  throw new Error(`unknown Worker Controller kind ${object.kind}`);
}

function main(): void {
  const objects = parseAllDocuments(readFileSync(0, 'utf8'))
    .map((d) => d.toJS() as Obj | null)
    .filter((o): o is Obj => o !== null);
  const out = objects.map(project).filter((o): o is Obj => o !== undefined);
  const replaced = objects.filter((o) => o.apiVersion === 'temporal.io/v1alpha1').length;
  // As JSON documents: every string quoted, so no YAML 1.1 reader takes `off` for a boolean.
  process.stdout.write(out.map((o) => `---\n${JSON.stringify(o)}\n`).join(''));
  console.error(
    `[check-chart] ${replaced} Worker Controller object(s) replaced by what the controller makes of them`,
  );
}

if (require.main === module) main();
