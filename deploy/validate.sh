#!/usr/bin/env bash
# Offline checks of the deployment files: the Kubernetes manifests as
# kustomize renders them, against the Kubernetes schemas (strict); the
# compose file against the Compose specification; the Slurm script's syntax;
# the Grafana dashboard and provisioning against the metrics the code exports.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/deploy-venv
if [ ! -x "$venv/bin/kubernetes-validate" ] || [ ! -x "$venv/bin/check-jsonschema" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet kubernetes-validate==1.37.0 check-jsonschema==0.39.0
fi

rendered=target/k8s-rendered.yaml
if command -v kubectl >/dev/null 2>&1; then
  kubectl kustomize deploy/k8s > "$rendered"
else
  echo "WARNING: no kubectl here: validating the manifests without the kustomize step" >&2
  for f in namespace secret coordinator worker; do cat "deploy/k8s/$f.yaml"; echo "---"; done > "$rendered"
fi
"$venv/bin/kubernetes-validate" --strict "$rendered"
"$venv/bin/check-jsonschema" --builtin-schema vendor.compose-spec deploy/compose.yaml
bash -n deploy/slurm/perft.sbatch
python3 deploy/check-monitoring.py
echo "deploy files valid"
