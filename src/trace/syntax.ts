import { spawnSync } from 'child_process';
import { UserError } from '../util/errors';

/**
 * Checks a user's Python file and entry call before anything is traced, so that a syntax error
 * is reported against the user's file and line (or the --call text) rather than as a trace of
 * the generated wrapper. Uses the same `python3` the tracer runs (its grammar, its version).
 */
const CHECK = `
import ast, json, sys
d = json.load(sys.stdin)
def where(e):
    return f"line {e.lineno}" + (f", column {e.offset}" if e.offset else "")
try:
    compile(d["code"], d["file"], "exec", dont_inherit=True)
except SyntaxError as e:
    print(f"{d['file']}:{e.lineno}: {type(e).__name__}: {e.msg}"); sys.exit(0)
except ValueError as e:
    print(f"{d['file']}: {e}"); sys.exit(0)
call = d.get("call")
if call is not None:
    try:
        tree = ast.parse(call.strip(), "--call", "eval")
    except SyntaxError as e:
        print(f"--call {call!r}: {type(e).__name__}: {e.msg} ({where(e)})"); sys.exit(0)
    if not isinstance(tree.body, ast.Call):
        print(f"--call {call!r}: not a call like f(3)")
`;

/** Throws a UserError naming the file and line (or the call) when `code` or `call` does not parse. */
export function checkPythonSyntax(file: string, code: string, call?: string, python = 'python3'): void {
  const r = spawnSync(python, ['-I', '-c', CHECK], { input: JSON.stringify({ file, code, call }), encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new UserError(`cannot run ${python} to check ${file}: ${r.error?.message ?? r.stderr.trim().split('\n').pop()}`);
  const problem = r.stdout.trim();
  if (problem) throw new UserError(problem);
}
