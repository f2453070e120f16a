/** The data stage: build Arrow shards (build.ts), stream them for training (loader.ts) and validation (validation.ts). */
export { buildDataset, type BuildOptions } from './build';
export { batchFromRows, cropBatch, rowLenOf, targetCount, type TokenBatch } from './batch';
export { DataSchema, type DataConfig } from './config';
export { MixtureLoader, type LoaderBatch, type LoaderOptions, type LoaderState } from './loader';
export { ValidationStream, type ValidationBatch, type ValidationOptions } from './validation';
export { readManifest, type Manifest } from './manifest';
export { openDatasets } from './dataset';
export { parseSourceSpec, type SourceSpec } from './sources';
