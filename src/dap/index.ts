/**
 * The DAP stage (docs/dap.md): the neural debugger behind the Debug Adapter Protocol, so that
 * editors (VS Code, nvim-dap, ...) drive it like any debugger.
 */
export { NdbgDebugAdapter } from './adapter';
export { serveStdio, serveTcp } from './server';
export { parseLaunchArgs, loadProgram } from './launch';
export type { LaunchConfig, LoadedProgram } from './launch';
export { childrenOf } from './values';
export type { FrameView, StopView } from './view';
