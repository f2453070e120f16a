/**
 * ndbg as a library (`require('ndbg')`): one namespace per pipeline stage, in pipeline order
 * (docs/architecture.md), each the stage's own `src/<stage>/index.ts`, the API its doc in docs/
 * describes. `oracle` is src/debugger (`debugger` is a reserved word) and `evaluation` is src/eval.
 *
 *   const { data, train } = require('ndbg');
 *   await train.trainFromConfig({ config: 'configs/tiny.json', overrides: [], runDir: 'runs/t', resume: false });
 */
export * as programs from './programs';
export * as trace from './trace';
export * as oracle from './debugger';
export * as ndl from './ndl';
export * as tokenizer from './tokenizer';
export * as data from './data';
export * as backend from './backend';
export * as model from './model';
export * as train from './train';
export * as evaluation from './eval';
export * as scaling from './scaling';
export * as dap from './dap';
