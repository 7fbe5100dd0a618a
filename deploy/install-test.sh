#!/usr/bin/env bash
# The README's "Install" and "Run the service" as a new user meets them, on this machine:
#  1. the install commands (`cargo install --locked --path server`, `... --path worker`) into a
#     fresh root; CARGO_TARGET_DIR points at this checkout's target/ so that what the test step
#     built is reused (a user without it builds from scratch, about 10 minutes on 2 cores);
#  2. the release archive: `deploy/release.sh --no-build`, its checksum checked with the README's
#     `sha256sum -c` line, unpacked, every file checked against its SHA256SUMS;
#  3. the README's quick start block, with the installed binaries and the archive's, each in an
#     empty environment: a fresh HOME, no GAMESOLVER_* variable, PATH = the binaries + /usr/bin
#     + /bin, a folder outside the repository (so nothing is read from the source tree).
# Usage: deploy/install-test.sh   (from anywhere; needs cargo, curl, sha256sum, tar)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

echo "install-test: cargo install into $work/root"
for crate in server worker; do
  CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$repo/target}" cargo install --quiet --locked --path "$crate" --root "$work/root"
done
ls "$work/root/bin/gamesolver" "$work/root/bin/gamesolver-worker" >/dev/null

echo "install-test: release archive"
deploy/release.sh --no-build >/dev/null
archive=$(ls -t dist/gamesolver-*.tar.gz | head -1)
(cd dist && sha256sum --quiet -c "$(basename "$archive").sha256")
tar -C "$work" -xzf "$archive"
unpacked="$work/$(basename "$archive" .tar.gz)"
(cd "$unpacked" && sha256sum --quiet -c SHA256SUMS)
"$unpacked/bin/gamesolver" --version

# The quick start block, exactly as in the README but for the port.
block=$(awk '/^## Run the service$/{s=1} s&&/^```sh$/{b=1;next} b&&/^```$/{exit} b' README.md)
[ -n "$block" ] || { echo "install-test: no quick start block in README.md" >&2; exit 1; }
run_quick_start() { # $1: folder of the binaries, $2: a name
  local port home dir out
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
    || shuf -i 20000-60000 -n 1)
  home="$work/home-$2"; dir="$work/run-$2"
  mkdir -p "$home" "$dir"
  out=$(cd "$dir" && env -i HOME="$home" PATH="$1:/usr/bin:/bin" \
    timeout 120 bash -e -c "${block//8080/$port}" 2>&1) || {
    echo "install-test: the quick start failed with the $2 binaries:" >&2
    echo "$out" >&2
    exit 1
  }
  grep -q '"state":"done"' <<<"$out" && grep -q '"value":-2' <<<"$out" || {
    echo "install-test: the quick start with the $2 binaries did not end with value -2:" >&2
    echo "$out" >&2
    exit 1
  }
  echo "install-test: quick start with the $2 binaries: done, value -2"
}
run_quick_start "$work/root/bin" installed
run_quick_start "$unpacked/bin" archive
echo "install-test: PASSED"
