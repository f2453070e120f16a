#!/usr/bin/env bash
# The scale-out trainer (scale/, docs/scale-out.md) runs in the Python peers' venv made by
# 20-python-peers.sh: make sure scale/requirements.txt is satisfied there (CPU torch, gloo) and
# say which versions the tests will use. Tests that cannot import them print "skipped: why".
# --retries 0: the machine's pip config lists an unreachable default index next to the local one;
# each retry there only waits.
set -uo pipefail
cd "$(dirname "$0")/../.."
py=.venv/bin/python
if [ ! -x "$py" ]; then
  echo "ci: no .venv (20-python-peers.sh could not make it); the scale/ tests will say skipped"
  exit 0
fi
"$py" -m pip install -q --disable-pip-version-check --retries 0 -r scale/requirements.txt \
  || echo "ci: pip could not install scale/requirements.txt; the scale/ tests will say skipped"
"$py" -c 'import torch, torch.distributed, transformers, pyarrow; print("ci: scale-out: torch", torch.__version__, "(gloo:", torch.distributed.is_gloo_available(), ") transformers", transformers.__version__, "pyarrow", pyarrow.__version__)' \
  || echo "ci: the scale-out Python side does not import; the scale/ tests will say skipped"
