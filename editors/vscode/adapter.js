#!/usr/bin/env node
'use strict';
// VS Code starts this file as the debug adapter and talks DAP over its stdin/stdout; it hands
// both to `ndbg dap`. $NDBG_BIN names the ndbg command (default: `ndbg` on PATH, e.g. after
// `npm link` in the ndbg repository).
const { spawn } = require('child_process');
const child = spawn(process.env.NDBG_BIN || 'ndbg', ['dap'], { stdio: 'inherit' });
child.on('error', (e) => {
  process.stderr.write(`ndbg-debug: cannot start "${process.env.NDBG_BIN || 'ndbg'} dap": ${e.message}\n`);
  process.exit(1);
});
child.on('exit', (code) => process.exit(code ?? 0));
