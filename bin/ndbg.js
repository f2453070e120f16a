#!/usr/bin/env node
'use strict';
// The CLI is compiled TypeScript; `npm install` builds it through the `prepare` script.
const path = require('path');
const fs = require('fs');
const entry = path.join(__dirname, '..', 'dist', 'cli', 'main.js');
if (!fs.existsSync(entry)) {
  process.stderr.write('ndbg: dist/ is missing; run `npm run build` in ' + path.dirname(__dirname) + '\n');
  process.exit(1);
}
require(entry).main(process.argv.slice(2));
