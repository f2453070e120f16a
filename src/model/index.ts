/**
 * The model stage (docs/model.md): the Llama-style decoder in tfjs, its config, its reference
 * kernels, checkpoints, sampling and Hugging Face export/import.
 */
export { LlamaModel, disposeCache, type KvCache } from './model';
export { modelConfigSchema, resolveModelConfig, loadModelConfig, modelStats, parameterShapes, type ModelConfig, type ModelConfigInput, type ModelStats } from './config';
// Kept for library users of `model.initBackend`; the backend stage (`backend`) owns them.
export { initBackend, BACKENDS, type BackendChoice, type BackendInfo } from '../backend/backend';
export { REFERENCE_KERNELS } from './layers';
export { loadModelFromCheckpoint, writeModelCheckpoint, readCheckpointConfig, readCheckpointWeights } from './checkpoint';
export { generate, sampleToken, type GenerateOptions, type GenerateResult } from './generate';
export { writeHfModel, readHfModel, toHfConfig, fromHfConfig } from './hf';
export { encodeSafetensors, decodeSafetensors, readSafetensors, writeSafetensors, type NamedTensor, type TensorMap } from './safetensors';
