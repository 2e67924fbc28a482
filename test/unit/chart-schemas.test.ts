// Issue 36: the pieces of the chart's validation that are ours: the strict JSON schemas made from
// the Kubernetes OpenAPI document and CRDs (scripts/k8s-json-schemas.ts), and what the Worker
// Controller makes of the chart's objects (scripts/controller-objects.ts).
import { fileName, strict } from '../../scripts/k8s-json-schemas';
import { renderedTemplate, versionedDeployment } from '../../scripts/controller-objects';

describe('strict schemas (scripts/k8s-json-schemas.ts)', () => {
  it('an object that lists its properties refuses others, at every depth; maps and open objects stay open', () => {
    const schema = strict({
      type: 'object',
      properties: {
        spec: { type: 'object', properties: { replicas: { type: 'integer' } } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        raw: {
          type: 'object',
          properties: { a: { type: 'string' } },
          'x-kubernetes-preserve-unknown-fields': true,
        },
      },
    }) as any;
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.spec.additionalProperties).toBe(false);
    expect(schema.properties.labels.additionalProperties).toEqual({ type: ['string', 'null'] });
    expect(schema.properties.raw.additionalProperties).toBeUndefined();
  });

  it('null is allowed where a value is, and int-or-string takes a number or a string', () => {
    const schema = strict({
      properties: { port: { type: 'string', format: 'int-or-string' }, name: { type: 'string' } },
    }) as any;
    expect(schema.properties.name.type).toEqual(['string', 'null']);
    expect(schema.properties.port).toEqual({
      oneOf: [{ type: ['string', 'null'] }, { type: ['number', 'null'] }],
    });
  });

  it('files are named as kubeconform looks them up', () => {
    expect(fileName({ group: 'apps', version: 'v1', kind: 'Deployment' })).toBe('deployment-apps-v1.json');
    expect(fileName({ group: '', version: 'v1', kind: 'Service' })).toBe('service-v1.json');
    expect(fileName({ group: 'monitoring.coreos.com', version: 'v1', kind: 'ServiceMonitor' })).toBe(
      'servicemonitor-monitoring-v1.json',
    );
  });
});

describe("the Worker Controller's objects as it renders them (scripts/controller-objects.ts)", () => {
  it('a WorkerDeployment becomes one versioned Deployment with its pod template and replicas', () => {
    const template = {
      metadata: { labels: { app: 'w' } },
      spec: { containers: [{ name: 'w', image: 'i' }] },
    };
    const deployment = versionedDeployment({
      apiVersion: 'temporal.io/v1alpha1',
      kind: 'WorkerDeployment',
      metadata: { name: 'agentry-worker' },
      spec: { replicas: 3, template, rollout: { strategy: 'Progressive' } },
    });
    expect(deployment).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment', spec: { replicas: 3 } });
    const spec = deployment.spec as any;
    expect(spec.selector.matchLabels).toEqual(
      expect.objectContaining({ 'temporal.io/build-id': expect.any(String) }),
    );
    expect(spec.template.metadata.labels).toMatchObject({ app: 'w', ...spec.selector.matchLabels });
    expect(spec.template.spec).toEqual(template.spec);
    expect(spec.rollout).toBeUndefined();
  });

  it("a WorkerResourceTemplate's {} sentinels are filled in as the controller injects them", () => {
    const wrt = (kind: string, spec: object) => ({
      apiVersion: 'temporal.io/v1alpha1',
      kind: 'WorkerResourceTemplate',
      metadata: { name: 'agentry-worker-x' },
      spec: { workerDeploymentRef: { name: 'agentry-worker' }, template: { apiVersion: 'v', kind, spec } },
    });
    const hpa = renderedTemplate(
      wrt('HorizontalPodAutoscaler', { scaleTargetRef: {}, maxReplicas: 4 }),
    ) as any;
    expect(hpa.spec.scaleTargetRef).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      name: expect.stringMatching(/^agentry-worker-/),
    });
    expect(hpa.spec.maxReplicas).toBe(4);
    const scaled = renderedTemplate(wrt('ScaledObject', { scaleTargetRef: {} })) as any;
    expect(scaled.spec.scaleTargetRef).toEqual({ name: expect.stringMatching(/^agentry-worker-/) });
    const pdb = renderedTemplate(wrt('PodDisruptionBudget', { selector: { matchLabels: {} } })) as any;
    expect(Object.keys(pdb.spec.selector.matchLabels)).toEqual(['temporal.io/build-id']);
  });
});
