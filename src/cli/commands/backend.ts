import type { CommandModule } from 'yargs';
import { BackendChoice, BACKENDS, initBackend, tfVersion } from '../../backend/backend';
import { installBackend } from '../../backend/backend_install';
import { fusedLibraryPath } from '../../backend/fused_build';
import { backendKernels } from '../../backend/kernels';

interface InstallArgs {
  gpu: boolean;
  from?: string;
  'tf-version'?: string;
  force: boolean;
}

const install: CommandModule<object, InstallArgs> = {
  command: 'install',
  describe: 'Build the native TensorFlow backend (tfjs-node, or tfjs-node-gpu with --gpu) against a TensorFlow C library',
  builder: (y) =>
    y
      .option('gpu', { type: 'boolean', default: false, describe: 'tfjs-node-gpu against a CUDA 12 TensorFlow (the `tensorflow` wheel)' })
      .option('from', { type: 'string', describe: 'a TensorFlow wheel, an unpacked wheel or site-packages dir, or a libtensorflow tarball' })
      .option('tf-version', { type: 'string', describe: 'pin the TensorFlow version to find or download, e.g. 2.21.0' })
      .option('force', { type: 'boolean', default: false, describe: 'rebuild the addon even if it was built against this library' })
      .example('$0 backend install', 'use the TensorFlow python3 imports, else pip download tensorflow-cpu')
      .example('$0 backend install --from tensorflow_cpu-2.21.0-cp311-cp311-manylinux_2_27_x86_64.whl', 'offline: a copied wheel')
      .example('$0 backend install --gpu', 'CUDA 12 GPUs (Hopper included) through the tensorflow wheel'),
  handler: (args) => {
    const log = (l: string) => process.stderr.write(`${l}\n`);
    const r = installBackend({ gpu: args.gpu, from: args.from, tfVersion: args['tf-version'], force: args.force, log });
    process.stdout.write(
      `${r.package} ready: TensorFlow ${r.tfVersion} from ${r.library.source}; --backend auto picks ${r.autoPicks}; fused ops ${r.fusedProblem ? `off (${r.fusedProblem})` : 'on'}\n`,
    );
  },
};

interface InfoArgs {
  backend: string;
}

const info: CommandModule<object, InfoArgs> = {
  command: 'info',
  describe: 'Which backend runs here and why the others do not',
  builder: (y) => y.option('backend', { type: 'string', choices: BACKENDS as unknown as string[], default: 'auto' }),
  handler: async (args) => {
    const b = await initBackend(args.backend as BackendChoice, (l) => process.stdout.write(`${l}\n`));
    const v = tfVersion();
    if (v) process.stdout.write(`TensorFlow ${v}\n`);
    // The kernel set chosen at backend start; loading the native ops printed why when they cannot run.
    if (v && b.name === 'tensorflow' && backendKernels().native) process.stdout.write(`fused ops: ${fusedLibraryPath(v).lib}\n`);
    if (b.choice === 'wasm' || b.choice === 'cpu') process.stdout.write('for the native backend: ndbg backend install (docs/model.md, "Backends")\n');
  },
};

/** `ndbg backend ...`: set up and inspect the compute backend (docs/model.md, "Backends"). */
export const backendCommand: CommandModule = {
  command: 'backend <command>',
  describe: 'Install the native TensorFlow backend; show which backend runs',
  builder: (y) => y.command(install).command(info).demandCommand(1, 'Pick a subcommand: install, info'),
  handler: () => undefined,
};
