#!/usr/bin/env bash
# The native TensorFlow backend, so the model tests run on it as well as on wasm/cpu
# (test/model/numerics.test.ts, test/backend/native_backend.test.ts): `ndbg backend install`
# fetches the tensorflow-cpu wheel with pip (a local index works), keeps its C library in
# ~/.cache/ndbg and builds tfjs-node's addon against it. Idempotent: a second run checks and
# reuses everything (a few seconds).
set -euo pipefail
cd "$(dirname "$0")/../.."

# The addon is C++ built by node-gyp.
if ! command -v g++ >/dev/null 2>&1 || ! command -v make >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq g++ make >/dev/null
  fi
fi

# dist/ (the `prepare` script) and the npm packages. tfjs-node's own install script wants to
# download libtensorflow 2.9.1; offline it fails and npm drops the optional package, which
# `backend install` then installs without that script.
npm install --no-audit --no-fund
node bin/ndbg.js backend install
node bin/ndbg.js backend info
