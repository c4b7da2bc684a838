// Public surface of the sandbox: start it on a port, or build the app for inject().

export { buildSandboxApp, type SandboxApp } from './app.ts';
export { startSandbox, type RunningSandbox } from './server.ts';
export { sandboxOperator, setOrganizationQuota } from './operator.ts';
export { SANDBOX_DEFAULTS, SANDBOX_MODES, type SandboxMode } from './defaults.ts';
export type { SandboxOptions } from './options.ts';
export type { Clock } from './clock.ts';
export type { FaultSettings, FaultSettingsInput } from './state/faults.ts';
export type { SandboxState } from './state/sandbox-state.ts';
export {
  REVISION_KINDS,
  type DatasetRevisionReport,
  type DatasetRevisionRequest,
  type RevisedOrganization,
  type RevisionKind,
} from './state/dataset-revisions.ts';
export type { SandboxStatsSnapshot } from './state/stats.ts';
export {
  SANDBOX_ERROR_CODES,
  SANDBOX_HTTP_ERROR_CODES,
  SandboxError,
  type SandboxErrorCode,
  type SandboxHttpErrorCode,
} from './errors.ts';
