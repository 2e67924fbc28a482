// Runs inside the workflow sandbox (bundled through `workflowInterceptorModules`, see
// scripts/build-workflow-bundle.ts and worker.ts): OpenTelemetry's workflow interceptors, active
// only for a workflow whose start carried a trace context, i.e. one started by an API with
// telemetry on (infra/telemetry.ts). Other workflows run exactly as without this module: no spans,
// no extra headers on their activities, no sink calls. Whether a run is traced is fixed by its
// start headers, so replays take the same path.
//
// The SDK evaluates a workflow's modules anew for every workflow it creates, so OpenTelemetry's
// modules (half of the bundle's) load only for a traced run: a type import here, the module
// itself required on the traced path (≈ 3 ms of worker CPU saved per untraced execution,
// docs/decisions.md "Untraced workflows load no OpenTelemetry").
import type * as OtelWorkflow from '@temporalio/interceptors-opentelemetry/lib/workflow';
import type {
  ActivityInput,
  ContinueAsNewInput,
  DisposeInput,
  GetLogAttributesInput,
  LocalActivityInput,
  Next,
  QueryInput,
  SignalInput,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowInternalsInterceptor,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';

/** The header the client interceptor writes (`@temporalio/interceptors-opentelemetry`). */
const TRACE_HEADER = '_tracer-data';

interface Traced {
  inbound: OtelWorkflow.OpenTelemetryInboundInterceptor;
  outbound: OtelWorkflow.OpenTelemetryOutboundInterceptor;
  internals: OtelWorkflow.OpenTelemetryInternalsInterceptor;
}

function tracedInterceptors(): Traced {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only for traced runs (above)
  const otel = require('@temporalio/interceptors-opentelemetry/lib/workflow') as typeof OtelWorkflow;
  return {
    inbound: new otel.OpenTelemetryInboundInterceptor(),
    outbound: new otel.OpenTelemetryOutboundInterceptor(),
    internals: new otel.OpenTelemetryInternalsInterceptor(),
  };
}

export const interceptors = (): WorkflowInterceptors => {
  let traced: Traced | undefined;

  const inbound: WorkflowInboundCallsInterceptor = {
    execute(input: WorkflowExecuteInput, next: Next<WorkflowInboundCallsInterceptor, 'execute'>) {
      if (!(TRACE_HEADER in input.headers)) return next(input);
      traced = tracedInterceptors();
      return traced.inbound.execute(input, next);
    },
    handleSignal(input: SignalInput, next: Next<WorkflowInboundCallsInterceptor, 'handleSignal'>) {
      return traced ? traced.inbound.handleSignal(input, next) : next(input);
    },
    handleQuery(input: QueryInput, next: Next<WorkflowInboundCallsInterceptor, 'handleQuery'>) {
      return traced ? traced.inbound.handleQuery(input, next) : next(input);
    },
    handleUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'handleUpdate'>) {
      return traced ? traced.inbound.handleUpdate(input, next) : next(input);
    },
    validateUpdate(input: UpdateInput, next: Next<WorkflowInboundCallsInterceptor, 'validateUpdate'>) {
      return traced ? traced.inbound.validateUpdate(input, next) : next(input);
    },
  };

  const outbound: WorkflowOutboundCallsInterceptor = {
    scheduleActivity(input: ActivityInput, next: Next<WorkflowOutboundCallsInterceptor, 'scheduleActivity'>) {
      return traced ? traced.outbound.scheduleActivity(input, next) : next(input);
    },
    scheduleLocalActivity(
      input: LocalActivityInput,
      next: Next<WorkflowOutboundCallsInterceptor, 'scheduleLocalActivity'>,
    ) {
      return traced ? traced.outbound.scheduleLocalActivity(input, next) : next(input);
    },
    startChildWorkflowExecution(
      input: StartChildWorkflowExecutionInput,
      next: Next<WorkflowOutboundCallsInterceptor, 'startChildWorkflowExecution'>,
    ) {
      return traced ? traced.outbound.startChildWorkflowExecution(input, next) : next(input);
    },
    continueAsNew(input: ContinueAsNewInput, next: Next<WorkflowOutboundCallsInterceptor, 'continueAsNew'>) {
      return traced ? traced.outbound.continueAsNew(input, next) : next(input);
    },
    signalWorkflow(
      input: SignalWorkflowInput,
      next: Next<WorkflowOutboundCallsInterceptor, 'signalWorkflow'>,
    ) {
      return traced ? traced.outbound.signalWorkflow(input, next) : next(input);
    },
    getLogAttributes(
      input: GetLogAttributesInput,
      next: Next<WorkflowOutboundCallsInterceptor, 'getLogAttributes'>,
    ) {
      return traced ? traced.outbound.getLogAttributes(input, next) : next(input);
    },
  };

  const internals: WorkflowInternalsInterceptor = {
    dispose(input: DisposeInput, next: Next<WorkflowInternalsInterceptor, 'dispose'>) {
      return traced ? traced.internals.dispose(input, next) : next(input);
    },
  };

  return { inbound: [inbound], outbound: [outbound], internals: [internals] };
};
