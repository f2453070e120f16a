/**
 * `ndbg dap`'s debug adapter: DAP requests in, the neural debugger's stops out. Built on
 * @vscode/debugadapter (the protocol's maintained Node implementation: framing, sequencing,
 * request dispatch and the event classes), so this file holds only ndbg's side: which NDL
 * actions a request takes (requests.ts), what a stop shows, and the bad-input policy (every
 * problem is one error response or `output` event; nothing here may bring the adapter down).
 */
import * as path from 'path';
import { Breakpoint, DebugSession as DapSession, ExitedEvent, Handles, InitializedEvent, OutputEvent, Scope, Source, StackFrame, StoppedEvent, TerminatedEvent, Thread, Variable } from '@vscode/debugadapter';
import type { DebugProtocol } from '@vscode/debugprotocol';
import { UserError } from '../util/errors';
import { loadProgram, parseLaunchArgs, type LaunchConfig, type LoadedProgram } from './launch';
import { entry, forwardRequest, inverseRequest, MAX_STEPS_PER_REQUEST, type InverseKind, type RequestOutcome, type StepKind } from './requests';
import { Stepper } from './stepper';
import { replay, Timeline, type ShownStop } from './timeline';
import { childrenOf, type Child } from './values';
import { describeStop, differences, type FrameView, type StopView } from './view';

const THREAD = 1;
/** sourceReference of the CONTEXT text (the program plus the `main` wrapper the model sees). */
const ENTRY_SOURCE = 1;

interface FrameHandle {
  frame: FrameView;
  real?: FrameView;
  /** The function that just returned and its value (the top frame of a return stop). */
  returned?: { name: string; value: string | null };
}

export class NdbgDebugAdapter extends DapSession {
  private program: LoadedProgram | undefined;
  private stepper: Stepper | undefined;
  private timeline = new Timeline();
  private breakpoints = new Set<number>();
  private frames = new Handles<FrameHandle>();
  private variables = new Handles<Child[]>();
  private configurationDone!: () => void;
  private readonly configured = new Promise<void>((resolve) => (this.configurationDone = resolve));
  /** Requests that move the session run one after another, in the order they came. */
  private queue: Promise<void> = Promise.resolve();
  private exited = false;
  private stopCount = 0;

  /** `load` turns a checked launch configuration into a program and completer (tests pass their own completer). */
  constructor(private readonly cwd = process.cwd(), private readonly load: (config: LaunchConfig, cwd: string) => Promise<LoadedProgram> = loadProgram) {
    super();
    this.setDebuggerLinesStartAt1(true);
    this.setDebuggerColumnsStartAt1(true);
  }

  protected override initializeRequest(response: DebugProtocol.InitializeResponse): void {
    response.body = {
      supportsConfigurationDoneRequest: true,
      supportsStepBack: true,
      supportsEvaluateForHovers: true,
      supportsTerminateRequest: true,
      // What ndbg cannot do, said plainly: no conditions, no function or exception breakpoints, no setVariable.
      supportsConditionalBreakpoints: false,
      supportsHitConditionalBreakpoints: false,
      supportsFunctionBreakpoints: false,
      supportsSetVariable: false,
      supportsRestartRequest: false,
      supportsStepInTargetsRequest: false,
      supportsGotoTargetsRequest: false,
      exceptionBreakpointFilters: [],
    };
    this.sendResponse(response);
  }

  protected override async launchRequest(response: DebugProtocol.LaunchResponse, args: DebugProtocol.LaunchRequestArguments): Promise<void> {
    try {
      const config = parseLaunchArgs(args);
      this.program = await this.load(config, this.cwd);
      this.stepper = this.makeStepper();
    } catch (e) {
      return this.fail(response, e);
    }
    this.sendEvent(new InitializedEvent());
    await this.configured;
    this.sendResponse(response);
    this.enqueue(async () => {
      const s = this.stepper as Stepper;
      const out = await entry(s, this.view);
      if (!(this.program as LoadedProgram).config.stopOnEntry && s.direction === 'forward' && out.reason !== 'exit') {
        this.record('entry');
        await this.move(() => forwardRequest(s, this.view, 'continue', this.breakpoints));
      } else this.show(out, 'entry');
    });
  }

  protected override configurationDoneRequest(response: DebugProtocol.ConfigurationDoneResponse): void {
    this.configurationDone();
    this.sendResponse(response);
  }

  protected override setBreakPointsRequest(response: DebugProtocol.SetBreakpointsResponse, args: DebugProtocol.SetBreakpointsArguments): void {
    const wanted = args.breakpoints ?? (args.lines ?? []).map((line) => ({ line }));
    const s = this.stepper;
    const program = this.program;
    const ours = program !== undefined && args.source.path !== undefined && path.resolve(this.cwd, args.source.path) === program.file;
    if (ours) this.breakpoints = new Set();
    response.body = {
      breakpoints: wanted.map((b) => {
        const bp = new Breakpoint(false, b.line) as DebugProtocol.Breakpoint;
        if (!s || !program) bp.message = 'the program is not loaded yet (launch first)';
        else if (!ours) bp.message = `ndbg debugs only ${program.file}`;
        else if (s.direction === 'inverse') bp.message = 'an inverse session has no breakpoints (NDL defines none going backwards)';
        else if ((b as DebugProtocol.SourceBreakpoint).condition || (b as DebugProtocol.SourceBreakpoint).hitCondition) bp.message = 'ndbg has no conditional breakpoints';
        else {
          const t = s.breakpointTarget(b.line);
          if ('error' in t) bp.message = t.error;
          else {
            bp.verified = true;
            this.breakpoints.add(b.line);
          }
        }
        return bp;
      }),
    };
    this.sendResponse(response);
  }

  protected override setExceptionBreakPointsRequest(response: DebugProtocol.SetExceptionBreakpointsResponse): void {
    this.sendResponse(response);
  }

  protected override threadsRequest(response: DebugProtocol.ThreadsResponse): void {
    response.body = { threads: [new Thread(THREAD, 'main')] };
    this.sendResponse(response);
  }

  protected override stackTraceRequest(response: DebugProtocol.StackTraceResponse, args: DebugProtocol.StackTraceArguments): void {
    const stop = this.timeline.current;
    if (!stop || stop.model.kind === 'exit') return this.error(response, 'there is no stop to show (the program is not stopped)');
    const model = stop.model;
    const real = stop.real && stop.real.kind !== 'exit' ? stop.real : undefined;
    const frames = model.frames.map((f, i) => {
      const handle = this.frames.create({
        frame: f,
        real: real?.frames[i],
        ...(i === 0 && model.kind === 'return' ? { returned: { name: model.returned, value: model.value } } : {}),
      });
      return new StackFrame(handle, f.line === undefined ? `${f.func} (SRC not in the program)` : f.func, this.sourceOf(f), f.line ?? 0, 1);
    });
    const start = args.startFrame ?? 0;
    const count = args.levels ? args.levels : frames.length;
    response.body = { stackFrames: frames.slice(start, start + count), totalFrames: frames.length };
    this.sendResponse(response);
  }

  protected override sourceRequest(response: DebugProtocol.SourceResponse, args: DebugProtocol.SourceArguments): void {
    if (!this.stepper || (args.sourceReference ?? args.source?.sourceReference) !== ENTRY_SOURCE) return this.error(response, 'no such source');
    response.body = { content: this.stepper.session.source.context, mimeType: 'text/x-python' };
    this.sendResponse(response);
  }

  protected override scopesRequest(response: DebugProtocol.ScopesResponse, args: DebugProtocol.ScopesArguments): void {
    const h = this.frames.get(args.frameId);
    if (!h) return this.error(response, `no frame ${args.frameId} at this stop`);
    const scopes = [new Scope(this.stepper && !this.program?.oracle ? 'Locals (predicted)' : 'Locals', this.variables.create(Object.entries(h.frame.locals).map(([name, value]) => ({ name, value }))), false)];
    if (h.returned) scopes.push(new Scope('Return value', this.variables.create([{ name: h.returned.name, value: h.returned.value ?? '(none: an exception left the frame)' }]), false));
    if (h.real) scopes.push(new Scope('(real)', this.variables.create(Object.entries(h.real.locals).map(([name, value]) => ({ name, value }))), false));
    response.body = { scopes };
    this.sendResponse(response);
  }

  protected override variablesRequest(response: DebugProtocol.VariablesResponse, args: DebugProtocol.VariablesArguments): void {
    const children = this.variables.get(args.variablesReference);
    if (!children) return this.error(response, `no variables ${args.variablesReference} at this stop`);
    response.body = {
      variables: children.map((c) => {
        const nested = childrenOf(c.value);
        return new Variable(c.name, c.value, nested ? this.variables.create(nested) : 0);
      }),
    };
    this.sendResponse(response);
  }

  protected override evaluateRequest(response: DebugProtocol.EvaluateResponse, args: DebugProtocol.EvaluateArguments): void {
    const name = args.expression.trim();
    if (!/^[A-Za-z_]\w*$/.test(name)) return this.error(response, `ndbg evaluates a bare local name (e.g. n); "${name}" is not one`);
    const h = args.frameId !== undefined ? this.frames.get(args.frameId) : undefined;
    const frame = h?.frame ?? (this.timeline.current?.model.kind !== 'exit' ? this.timeline.current?.model.frames[0] : undefined);
    if (!frame) return this.error(response, 'the program is not stopped: there are no locals');
    const value = frame.locals[name];
    if (value === undefined) return this.error(response, `NameError: "${name}" is not in the ${this.program?.oracle ? '' : 'predicted '}locals of ${frame.func}`);
    const nested = childrenOf(value);
    response.body = { result: value, variablesReference: nested ? this.variables.create(nested) : 0 };
    this.sendResponse(response);
  }

  protected override nextRequest(response: DebugProtocol.NextResponse): void {
    this.forward(response, 'next');
  }

  protected override stepInRequest(response: DebugProtocol.StepInResponse): void {
    if (this.stepper?.direction === 'inverse') this.inverse(response, 'stepIn');
    else this.forward(response, 'stepIn');
  }

  protected override stepOutRequest(response: DebugProtocol.StepOutResponse): void {
    this.forward(response, 'stepOut');
  }

  protected override continueRequest(response: DebugProtocol.ContinueResponse): void {
    this.forward(response, 'continue');
  }

  protected override stepBackRequest(response: DebugProtocol.StepBackResponse): void {
    if (this.stepper?.direction === 'inverse') return this.inverse(response, 'stepBack');
    this.back(response, () => this.timeline.back(), 'step');
  }

  protected override reverseContinueRequest(response: DebugProtocol.ReverseContinueResponse): void {
    if (this.stepper?.direction === 'inverse') return this.inverse(response, 'reverseContinue');
    this.back(response, () => this.timeline.backToBreakpoint(this.breakpoints, (s) => (s.model.kind === 'exit' ? undefined : s.model.frames[0].line)), 'breakpoint');
  }

  protected override pauseRequest(response: DebugProtocol.PauseResponse): void {
    this.error(response, 'ndbg runs a request to its stop at once; there is nothing to pause');
  }

  protected override terminateRequest(response: DebugProtocol.TerminateResponse): void {
    this.exited = true;
    this.sendResponse(response);
    this.sendEvent(new TerminatedEvent());
  }

  protected override disconnectRequest(response: DebugProtocol.DisconnectResponse, args: DebugProtocol.DisconnectArguments, request?: DebugProtocol.Request): void {
    this.exited = true;
    super.disconnectRequest(response, args, request);
  }

  // ---- the session's moves

  private readonly view = (s: Stepper): StopView => (this.program?.oracle ? (s.realView() as StopView) : s.modelView());

  private makeStepper(): Stepper {
    const p = this.program as LoadedProgram;
    return new Stepper({ code: p.code, call: p.call, completer: p.completer, trace: p.trace, direction: p.config.direction, verify: p.config.verify, sampling: p.sampling, label: p.label, maxStepsPerRequest: MAX_STEPS_PER_REQUEST[p.oracle ? 'oracle' : 'model'] });
  }

  /** Why the session cannot move, or undefined when it can. */
  private cannotMove(): string | undefined {
    if (!this.stepper || !this.timeline.current) return 'the program is not running (launch it first)';
    if (this.exited) return 'the program has exited';
    return undefined;
  }

  private forward(response: DebugProtocol.Response, kind: StepKind): void {
    const why = this.cannotMove();
    if (why) return this.error(response, why);
    if (this.stepper?.direction === 'inverse') {
      return this.error(response, `this is an inverse session: use stepBack (inv_step_over), reverseContinue (inv_step_call) or stepIn (inv_step_into); "${kind}" runs forward`);
    }
    this.sendResponse(response);
    this.enqueue(async () => {
      if (this.timeline.inThePast) {
        this.stepper = await replay(() => this.makeStepper(), this.stepper as Stepper, (this.timeline.current as ShownStop).commands);
        this.timeline.truncate();
      }
      await this.move(() => forwardRequest(this.stepper as Stepper, this.view, kind, this.breakpoints));
    });
  }

  private inverse(response: DebugProtocol.Response, kind: InverseKind): void {
    const why = this.cannotMove();
    if (why) return this.error(response, why);
    this.sendResponse(response);
    this.enqueue(() => this.move(() => inverseRequest(this.stepper as Stepper, this.view, kind)));
  }

  private back(response: DebugProtocol.Response, go: () => ShownStop | undefined, reason: string): void {
    if (!this.timeline.current) return this.error(response, 'the program is not running (launch it first)');
    if (this.exited) return this.error(response, 'the program has exited');
    this.sendResponse(response);
    this.enqueue(async () => {
      const stop = go();
      if (!stop) this.output('ndbg: already at the first stop of the session');
      this.emitStop(this.timeline.current as ShownStop, stop ? (stop.commands === 0 || reason === 'step' ? 'step' : reason) : 'step');
    });
  }

  private async move(run: () => Promise<RequestOutcome>): Promise<void> {
    const out = await run();
    this.show(out, undefined);
  }

  private show(out: RequestOutcome, reason: string | undefined): void {
    for (const n of out.notes) this.output(n);
    if (out.reason === 'stayed') {
      this.output('ndbg: the model wrote text that does not parse and there is no real state to go on from (launch with "verify": true to continue from the real one); the session stays at its stop: step another way, or again with sampling');
      this.emitStop(out.moved ? this.record('exception') : (this.timeline.current as ShownStop), 'exception');
      return;
    }
    const stop = this.record(reason ?? out.reason);
    if (stop.model.kind === 'exit') {
      this.exited = true;
      this.output(`ndbg: ${describeStop(stop.model)}`);
      this.sendEvent(new ExitedEvent(stop.model.exit === 'normal' || stop.model.exit === 'inv_exit_entry' ? 0 : 1));
      this.sendEvent(new TerminatedEvent());
      return;
    }
    this.emitStop(stop, reason ?? (out.reason === 'limit' ? 'step' : out.reason));
  }

  private record(reason: string): ShownStop {
    const s = this.stepper as Stepper;
    const model = this.view(s);
    const real = this.program?.config.verify ? s.realView() : undefined;
    return this.timeline.record(s, model, real, reason);
  }

  private emitStop(stop: ShownStop, reason: string): void {
    this.frames.reset();
    this.variables.reset();
    this.stopCount++;
    if (stop.real && !this.program?.oracle) {
      const diff = differences(stop.model, stop.real);
      this.output(`ndbg stop ${this.stopCount}: ${diff.length === 0 ? '[=]' : `[≠ ${diff.join(', ')}]`} model: ${describeStop(stop.model)}${diff.length ? `\n    real: ${describeStop(stop.real)}` : ''}`);
    }
    this.sendEvent(new StoppedEvent(reason, THREAD));
  }

  private enqueue(task: () => Promise<void>): void {
    this.queue = this.queue.then(task).catch((e) => {
      // A bug must not take the adapter down with the client's session: say it and end cleanly.
      this.output(`ndbg: internal error: ${(e as Error).stack ?? e}`);
      this.exited = true;
      this.sendEvent(new TerminatedEvent());
    });
  }

  private sourceOf(f: FrameView): Source {
    const p = this.program as LoadedProgram;
    if (f.entry) return new Source(`${path.basename(p.file)} <entry>`, undefined, ENTRY_SOURCE, 'the program with the main wrapper ndbg runs it in');
    return new Source(path.basename(p.file), p.file);
  }

  private output(text: string): void {
    this.sendEvent(new OutputEvent(`${text}\n`, 'console'));
  }

  private error(response: DebugProtocol.Response, message: string): void {
    this.sendErrorResponse(response, { id: 1, format: message, showUser: true });
  }

  private fail(response: DebugProtocol.Response, e: unknown): void {
    if (e instanceof UserError) return this.error(response, e.message);
    this.error(response, `internal error: ${(e as Error).message}`);
    this.output(`ndbg: internal error: ${(e as Error).stack ?? e}`);
  }
}
