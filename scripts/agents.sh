#!/usr/bin/env bash
# Installs the pinned agents the end-to-end tests drive (e2e/) from the npm
# registry into AGENTS_DIR, outside the repository, one folder per
# package@version. An installed version is not fetched again.
set -euo pipefail
dir=${AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/transcript-tool/agents}
pins=(
  "@anthropic-ai/claude-code@2.1.328"
  "@openai/codex@0.169.0"
  "@mariozechner/pi-coding-agent@0.73.1"
)
command -v npm >/dev/null || { echo "agents: npm is not installed" >&2; exit 1; }
for pin in "${pins[@]}"; do
  name=${pin%@*}; version=${pin##*@}
  dest="$dir/${name//\//_}@$version"
  if [ -f "$dest/.installed" ]; then continue; fi
  echo "agents: installing $pin into $dest"
  rm -rf "$dest" && mkdir -p "$dest"
  npm install --prefix "$dest" --no-audit --no-fund --loglevel=error "$pin" >/dev/null
  touch "$dest/.installed"
done
echo "agents: installed in $dir"
