#!/usr/bin/env bash
# Set up (if needed), prepare the built-in demo case, and start the VISA Console.
# Arguments are passed to `visa-console`, e.g.  installer/run.sh --case /path/to/case
# Without a display (no DISPLAY / WAYLAND_DISPLAY) the console runs on a virtual screen (Xvfb)
# and saves a screenshot under the user data folder, since nobody can see the window.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
log() { printf '[run] %s\n' "$*"; }

bash "$ROOT/installer/setup.sh"

VENV="${VISA_VENV:-$ROOT/.venv}"
VC="$VENV/bin/visa-console"
PY="$VENV/bin/python"
export HF_HUB_OFFLINE=1

log "preparing the built-in demo case (generated once, then reused)"
if ! "$VC" demo; then
  log "WARNING: the demo case could not be generated (see above); continuing"
fi

if ! "$PY" -c 'import importlib.util, sys; sys.exit(importlib.util.find_spec("app.ui.main") is None)' 2>/dev/null; then
  log "the console window is not part of this build yet; showing what is available instead"
  "$VC" case --info || true
  log "available now: visa-console models --check | visa-console demo | visa-console case PATH --info"
  exit 0
fi

if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  log "starting the console"
  exec "$VC" "$@"
fi

DATA="$("$PY" -c 'from platformdirs import user_data_dir; print(user_data_dir("visa-console"))')"
SHOT="$DATA/screenshots/console-$(date +%Y%m%d-%H%M%S).png"
mkdir -p "$(dirname "$SHOT")"
if command -v xvfb-run >/dev/null 2>&1; then
  log "no display found: running on a virtual screen (Xvfb); a screenshot will be saved"
  status=0
  xvfb-run -a -s "-screen 0 1920x1080x24" "$VC" --screenshot "$SHOT" "$@" || status=$?
else
  log "no display and no xvfb-run (apt-get install xvfb): rendering offscreen"
  status=0
  QT_QPA_PLATFORM=offscreen "$VC" --screenshot "$SHOT" "$@" || status=$?
fi
if [ -f "$SHOT" ]; then
  log "screenshot saved: $SHOT"
else
  log "no screenshot was written (expected at $SHOT)"
fi
exit "$status"
