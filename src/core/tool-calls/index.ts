/** The tool-calls room's door: resolving a model step's calls, running approved ones, and their shapes. */
export { approvedCall, resolveApprovedCall, waitingApprovals } from './approved-call.js';
export { inCallOrder, resolveToolCalls } from './resolve.js';
export { recordNotRun, runTool, validateCall } from './run.js';
export type {
  Delegation,
  DelegationOutcome,
  ParkedRun,
  PendingCall,
  Resolution,
  ToolResult,
  ToolScope,
} from './scope.js';
