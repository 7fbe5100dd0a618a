#!/usr/bin/env bash
# Builds the image gamesolver:latest without pulling anything: compiles the binaries on this
# machine, copies them with the shared libraries they link (found by ldd) into deploy/.rootfs,
# and builds deploy/Dockerfile.offline (FROM scratch). The copies in the image are stripped
# (a 29 MB image: binaries of 16.5 and 9.0 MB, glibc and the loader 3.2 MB); the host binaries stay as they are.
#   deploy/build-images.sh [--no-build] [TAG]     (default tag: gamesolver:latest)
# --no-build takes target/release/{gamesolver,gamesolver-worker} as they are (CI: built by
# `cargo test --workspace --release` just before; a `cargo build -p ...` there may rebuild
# dependencies with other features, which costs minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
build=1
if [ "${1:-}" = "--no-build" ]; then
  build=0
  shift
fi
tag="${1:-gamesolver:latest}"
if [ "$build" = 1 ]; then
  cargo build --release -p gamesolver -p gamesolver-worker
fi
for b in gamesolver gamesolver-worker; do
  if [ ! -x "target/release/$b" ]; then
    echo "build-images: target/release/$b is missing (run without --no-build)" >&2
    exit 1
  fi
done
root=deploy/.rootfs
rm -rf "$root" deploy/.rootfs-data
mkdir -p "$root/usr/local/bin" "$root/tmp" "$root/etc" deploy/.rootfs-data
# /data comes from its own COPY --chown (a directory copied with the rest stays root-owned).
touch deploy/.rootfs-data/.keep
for b in gamesolver gamesolver-worker; do
  strip -o "$root/usr/local/bin/$b" "target/release/$b"
done
for bin in "$root"/usr/local/bin/*; do
  ldd "$bin" | awk '/=> \//{print $3} /^[ \t]*\/lib/{print $1}' | while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
done
# Name resolution inside containers (service names such as "coordinator").
printf 'hosts: files dns\n' > "$root/etc/nsswitch.conf"
printf 'gamesolver:x:10001:10001::/data:/nonexistent\n' > "$root/etc/passwd"
printf 'gamesolver:x:10001:\n' > "$root/etc/group"
chmod 1777 "$root/tmp"
docker build -q -f deploy/Dockerfile.offline -t "$tag" deploy >/dev/null
echo "built $tag ($(docker image inspect -f '{{.Size}}' "$tag") bytes)"
