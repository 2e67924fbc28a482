// Prebuilds the workflow bundle (production and tests), so workers start without running webpack.
// Usage: node dist/scripts/build-workflow-bundle.js [output path]
import { bundleWorkflowCode } from '@temporalio/worker';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { failureConverterPath } from '../infra/failure-converter';
import { WORKFLOW_INTERCEPTORS_MODULE } from '../infra/telemetry';

export async function buildWorkflowBundle(outputPath: string): Promise<void> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../workflows'),
    failureConverterPath,
    // OpenTelemetry's workflow interceptors, active only for runs started with a trace context.
    workflowInterceptorModules: [WORKFLOW_INTERCEPTORS_MODULE],
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn: console.warn, error: console.error },
  });
  await writeFile(outputPath, code);
}

if (require.main === module) {
  const output = process.argv[2] ?? path.join(__dirname, '..', 'workflow-bundle.js');
  buildWorkflowBundle(output).then(
    () => console.log(`workflow bundle written to ${output}`),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );
}
