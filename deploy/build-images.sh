#!/usr/bin/env bash
# Builds the image gamesolver:latest without pulling anything: compiles the binaries on this
# machine, copies them with the shared libraries they link (found by ldd) into deploy/.rootfs,
# and builds deploy/Dockerfile.offline (FROM scratch).
#   deploy/build-images.sh [TAG]        (default tag: gamesolver:latest)
set -euo pipefail
cd "$(dirname "$0")/.."
tag="${1:-gamesolver:latest}"
cargo build --release -p gamesolver -p gamesolver-worker
root=deploy/.rootfs
rm -rf "$root" deploy/.rootfs-data
mkdir -p "$root/usr/local/bin" "$root/tmp" "$root/etc" deploy/.rootfs-data
# /data comes from its own COPY --chown (a directory copied with the rest stays root-owned).
touch deploy/.rootfs-data/.keep
cp target/release/gamesolver target/release/gamesolver-worker "$root/usr/local/bin/"
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
