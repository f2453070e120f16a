/**
 * The state tree and the debugger oracle (spec ndl.md §4, §6): build trees from a trace, move
 * through them with debugger actions, and check the forward actions against real pdb.
 */
export * from './vocabulary';
export * from './types';
export { buildForwardTree, buildInverseTree } from './tree';
export { nextNode, availableActions, breakpointTargets, breakpointLine, breakpointLocation } from './actions';
export { forwardContext, inverseContext, statementLines, traceContext } from './source';
