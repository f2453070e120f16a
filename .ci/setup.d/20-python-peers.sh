#!/usr/bin/env bash
# The Python peers that tests compare ndbg with (transformers, tokenizers, TensorBoard's reader,
# PyTorch for the scale-out bridge) go into one virtual environment, `.venv/` at the repository
# root; test/helpers/peer-python.ts finds it (or $NDBG_PEER_PYTHON). A pip that cannot install
# them leaves the tests that need them to say "skipped: why".
# --retries 0 --timeout 15: where pip also lists an unreachable index (offline machines with a
# local wheel index), each retry there only waits.
set -uo pipefail
cd "$(dirname "$0")/../.."
venv=.venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" || { echo "ci: cannot create $venv (python3 -m venv failed)"; exit 0; }
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check --retries 0 --timeout 15 -r scale/requirements-peers.txt \
  || echo "ci: pip could not install the Python peers; tests that need them will say skipped"
