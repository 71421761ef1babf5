# Sourced by the installers (tools/vllm-lab/install.sh, tools/peers/install.sh): a Python 3.11
# to base venvs on, and a pinned uv in a small venv of its own. Each caller defines `log`.

# Prints a Python 3.11 interpreter's real path ($LAB_PYTHON first, then PATH; pyenv shims are
# resolved through sys.executable); fails when there is none.
find_python() {
  local c
  for c in "${LAB_PYTHON:-}" python3.11 python3; do
    [ -n "$c" ] || continue
    command -v "$c" >/dev/null 2>&1 || continue
    "$c" -c 'import sys; assert sys.version_info[:2] == (3, 11); print(sys.executable)' 2>/dev/null \
      && return 0
  done
  return 1
}

# True when $1 is an executable uv at version $2.
uv_is() {
  [ -x "$1" ] && [ "$("$1" --version 2>/dev/null | awk '{print $2}')" = "$2" ]
}

# Makes $1 a venv holding uv==$2 (from base interpreter $3) unless it already holds it.
ensure_uv() {
  if uv_is "$1/bin/uv" "$2"; then
    log "uv $2 present"
  else
    log "installing uv==$2"
    rm -rf "$1"
    "$3" -m venv "$1"
    "$1/bin/python" -m pip install --quiet --disable-pip-version-check "uv==$2"
  fi
}
