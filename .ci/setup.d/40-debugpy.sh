#!/usr/bin/env bash
# debugpy, the Python DAP server VS Code uses, for the side-by-side check of `ndbg dap`
# (test/dap/debugpy.test.ts, bench/dap/run.ts; docs/dap.md). It goes into the Python peers'
# venv made by 20-python-peers.sh; a pip that cannot install it leaves that test to say
# "skipped: why". --retries 0: an unreachable index next to the local one only waits.
set -uo pipefail
cd "$(dirname "$0")/../.."
py=.venv/bin/python
if [ ! -x "$py" ]; then
  echo "ci: no .venv (20-python-peers.sh could not make it); the debugpy comparison will say skipped"
  exit 0
fi
"$py" -m pip install -q --disable-pip-version-check --retries 0 --timeout 15 debugpy \
  || echo "ci: pip could not install debugpy; the debugpy comparison will say skipped"
"$py" -c 'import debugpy; print("ci: debugpy", debugpy.__version__)' \
  || echo "ci: debugpy does not import; the debugpy comparison will say skipped"
