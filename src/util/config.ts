import * as fs from 'fs';
import { z } from 'zod';
import { UserError } from './errors';

/**
 * Every command that takes a config reads it the same way: a JSON file, then `--set
 * dotted.path=value` overrides (value parsed as JSON when it parses, else kept as a string),
 * then validation with the command's zod schema. Schemas should be `.strict()` so an unknown
 * field is an error, not a silently ignored typo.
 */
export function parseOverride(spec: string): { path: string[]; value: unknown } {
  const eq = spec.indexOf('=');
  if (eq <= 0) throw new UserError(`--set ${spec}: expected FIELD=VALUE, e.g. --set train.steps=100`);
  const path = spec.slice(0, eq).split('.');
  if (path.some((p) => p === '')) throw new UserError(`--set ${spec}: empty field name in "${spec.slice(0, eq)}"`);
  const raw = spec.slice(eq + 1);
  let value: unknown = raw;
  try {
    value = JSON.parse(raw);
  } catch {
    // Not JSON: a bare string such as a path or a backend name.
  }
  return { path, value };
}

export function applyOverride(target: Record<string, unknown>, path: string[], value: unknown): void {
  let node: Record<string, unknown> = target;
  for (const key of path.slice(0, -1)) {
    const next = node[key];
    if (next === undefined) node[key] = {};
    else if (typeof next !== 'object' || next === null || Array.isArray(next)) {
      throw new UserError(`--set ${path.join('.')}: "${key}" is not an object in the config`);
    }
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1]] = value;
}

export function formatZodError(source: string, error: z.ZodError): string {
  const lines = error.issues.map((issue) => {
    const where = issue.path.length ? issue.path.join('.') : '(root)';
    return `  ${where}: ${issue.message}`;
  });
  return `invalid config ${source}:\n${lines.join('\n')}`;
}

/** Validates a plain object against a schema, throwing one UserError that names every bad field. */
export function validateConfig<S extends z.ZodTypeAny>(schema: S, raw: unknown, source: string): z.infer<S> {
  const result = schema.safeParse(raw);
  if (!result.success) throw new UserError(formatZodError(source, result.error));
  return result.data;
}

export function readJsonFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UserError(`cannot read config ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  try {
    const value = JSON.parse(text) as unknown;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new Error('the top level must be a JSON object');
    }
    return value as Record<string, unknown>;
  } catch (e) {
    throw new UserError(`invalid JSON in config ${file}: ${(e as Error).message}`);
  }
}

export interface LoadConfigOptions {
  /** JSON file to start from; omitted means the schema's defaults only. */
  file?: string;
  /** Object merged under the file (embedded defaults). */
  defaults?: Record<string, unknown>;
  /** `dotted.path=value` strings from `--set`. */
  overrides?: string[];
}

export function loadConfig<S extends z.ZodTypeAny>(schema: S, opts: LoadConfigOptions): z.infer<S> {
  const merged: Record<string, unknown> = structuredClone(opts.defaults ?? {});
  if (opts.file) deepMerge(merged, readJsonFile(opts.file));
  for (const spec of opts.overrides ?? []) {
    const { path, value } = parseOverride(spec);
    applyOverride(merged, path, value);
  }
  const source = opts.file ?? '(defaults)';
  return validateConfig(schema, merged, opts.overrides?.length ? `${source} with --set overrides` : source);
}

function deepMerge(target: Record<string, unknown>, source: Record<string, unknown>): void {
  for (const [k, v] of Object.entries(source)) {
    const t = target[k];
    if (isPlainObject(t) && isPlainObject(v)) deepMerge(t, v);
    else target[k] = v;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
