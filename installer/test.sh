#!/usr/bin/env bash
# Set up (if needed) and run the test suite: installer/test.sh [pytest arguments]
# e.g. installer/test.sh -m "not slow"   or   installer/test.sh tests/test_models.py -x
# Exits with pytest's status; "no tests collected" (pytest exit 5) counts as a failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${VISA_VENV:-$ROOT/.venv}"
log() { printf '[test] %s\n' "$*"; }

t0=$(date +%s)
bash "$ROOT/installer/setup.sh"
t1=$(date +%s)

log "running pytest (Qt offscreen)"
status=0
QT_QPA_PLATFORM=offscreen HF_HUB_OFFLINE=1 "$VENV/bin/python" -m pytest -q "$@" || status=$?
t2=$(date +%s)

if [ "$status" = 5 ]; then
  log "FAILED: pytest collected no tests"
  status=1
fi
log "setup took $((t1 - t0)) s, tests took $((t2 - t1)) s"
if [ "$status" = 0 ]; then log "all tests passed"; else log "tests FAILED (exit $status)"; fi
exit "$status"
