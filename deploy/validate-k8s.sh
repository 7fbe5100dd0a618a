#!/usr/bin/env bash
# Validates deploy/k8s/*.yaml against the Kubernetes schemas, offline: kubernetes-validate
# (PyPI) ships the schemas of each Kubernetes release inside the package.
set -euo pipefail
cd "$(dirname "$0")/k8s"
if ! python3 -c 'import kubernetes_validate' 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore kubernetes-validate
fi
version="${K8S_VERSION:-1.30.0}"
for f in namespace.yaml secret.yaml coordinator.yaml worker.yaml; do
  python3 -m kubernetes_validate --strict --kubernetes-version "$version" "$f"
done
echo "k8s manifests valid against Kubernetes $version schemas"
