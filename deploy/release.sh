#!/usr/bin/env bash
# A release archive for this machine's target: the release binaries `gamesolver` and
# `gamesolver-worker`, README.md, docs/, and SHA256SUMS inside; beside it in dist/, a .sha256
# file for the archive itself. Usage: deploy/release.sh [--no-build]
#   sha256sum -c dist/gamesolver-VERSION-TARGET.tar.gz.sha256    # checks an archive
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" != "--no-build" ]; then
  cargo build --locked --release -p gamesolver -p gamesolver-worker
fi
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
target=$(rustc -vV | sed -n 's/^host: //p')
name="gamesolver-$version-$target"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/bin" dist
bins="${CARGO_TARGET_DIR:-target}/release"
cp "$bins/gamesolver" "$bins/gamesolver-worker" "$stage/$name/bin/"
cp -r README.md docs "$stage/$name/"
(cd "$stage/$name" && find . -type f ! -name SHA256SUMS | sort | xargs sha256sum >SHA256SUMS)
tar -C "$stage" -czf "dist/$name.tar.gz" "$name"
(cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
ls -l "dist/$name.tar.gz"
echo "dist/$name.tar.gz (check: cd dist && sha256sum -c $name.tar.gz.sha256)"
