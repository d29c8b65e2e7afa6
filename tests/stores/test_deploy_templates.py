"""Deployment templates: manifests parse and hang together; the image refuses to start without tokens.

A Python validator (PyYAML + the keys each kind needs), since kubectl, kubeconform
and docker are not installed here; ``docker compose config`` runs when docker is.
"""

from __future__ import annotations

import ast
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
import yaml
from store_helpers import ROOT

from rft_sdk import RedisStore, store_from_url

TEMPLATES = ROOT / "server_templates"
_REQUIRED = {  # kind -> dotted paths every manifest of that kind must have
    "Deployment": ["spec.selector.matchLabels", "spec.template.metadata.labels", "spec.template.spec.containers"],
    "Service": ["spec.selector", "spec.ports"],
    "HorizontalPodAutoscaler": ["spec.scaleTargetRef.name", "spec.minReplicas", "spec.maxReplicas"],
    "Secret": ["stringData"],
    "Ingress": ["spec.rules", "spec.tls"],
}


def _get(doc: dict, path: str):
    for part in path.split("."):
        if not isinstance(doc, dict) or part not in doc:
            raise KeyError(path)
        doc = doc[part]
    return doc


def _kubernetes() -> list[dict]:
    docs = []
    for path in sorted((TEMPLATES / "kubernetes").glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return docs


def test_kubernetes_manifests_are_complete_and_consistent():
    docs = _kubernetes()
    by_kind: dict[str, dict[str, dict]] = {}
    for doc in docs:
        assert {"apiVersion", "kind", "metadata"} <= set(doc), doc
        for path in _REQUIRED.get(doc["kind"], []):
            _get(doc, path)  # raises KeyError naming the missing key
        by_kind.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc
    assert {"Deployment", "Service", "HorizontalPodAutoscaler", "Secret", "Ingress"} <= set(by_kind)
    deployments = by_kind["Deployment"]
    for dep in deployments.values():
        selector, labels = dep["spec"]["selector"]["matchLabels"], dep["spec"]["template"]["metadata"]["labels"]
        assert selector.items() <= labels.items(), f"{dep['metadata']['name']}: selector does not match its pods"
        for container in dep["spec"]["template"]["spec"]["containers"]:
            assert container["image"] and container["name"]
    for svc in by_kind["Service"].values():  # every Service selects some Deployment's pods
        assert any(svc["spec"]["selector"].items() <= d["spec"]["template"]["metadata"]["labels"].items()
                   for d in deployments.values()), svc["metadata"]["name"]
    hpa = by_kind["HorizontalPodAutoscaler"]["rft-tool-server"]
    assert hpa["spec"]["scaleTargetRef"]["name"] in deployments and hpa["spec"]["minReplicas"] >= 2
    tool = deployments["rft-tool-server"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e for e in tool["env"]}
    ref = env["RFT_AUTH_TOKENS"]["valueFrom"]["secretKeyRef"]
    assert ref["key"] in by_kind["Secret"][ref["name"]]["stringData"]
    store = store_from_url(env["RFT_STORE_URL"]["value"])  # the URL the replicas will use is valid
    assert isinstance(store, RedisStore) and store.client.connection_pool.connection_kwargs["host"] in by_kind["Service"]
    backend = by_kind["Ingress"]["rft-tool-server"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] in by_kind["Service"]


def test_compose_file_has_replicas_redis_and_a_tls_proxy():
    compose = yaml.safe_load((TEMPLATES / "compose" / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"tool", "redis", "proxy"} <= set(services)
    tool = services["tool"]
    assert tool["deploy"]["replicas"] >= 2
    assert (ROOT / tool["build"]["context"].replace("../..", ".") / tool["build"]["dockerfile"]).is_file() or \
        (TEMPLATES / "compose" / tool["build"]["context"] / tool["build"]["dockerfile"]).is_file()
    store = store_from_url(tool["environment"]["RFT_STORE_URL"])
    assert isinstance(store, RedisStore) and store.client.connection_pool.connection_kwargs["host"] == "redis"
    assert "RFT_AUTH_TOKENS" in tool["environment"]
    assert "443:443" in services["proxy"]["ports"]
    caddyfile = services["proxy"]["volumes"][0].split(":")[0]
    assert "dynamic a tool 8000" in (TEMPLATES / "compose" / caddyfile).read_text()


def _has_compose() -> bool:
    return shutil.which("docker") is not None and subprocess.run(
        ["docker", "compose", "version"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _has_compose(), reason="docker compose is not installed (the YAML checks above still ran)")
def test_docker_compose_config_accepts_the_file():
    result = subprocess.run(["docker", "compose", "-f", "docker-compose.yml", "config", "-q"],
                            cwd=TEMPLATES / "compose", env={**os.environ, "RFT_AUTH_TOKENS": "x"},
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_azure_container_app_scales_and_uses_its_secrets():
    app = yaml.safe_load((TEMPLATES / "azure" / "containerapp.yaml").read_text())
    props = app["properties"]
    assert props["configuration"]["ingress"]["external"] is True
    assert props["configuration"]["ingress"]["targetPort"] == 8000
    secrets = {s["name"] for s in props["configuration"]["secrets"]}
    container = props["template"]["containers"][0]
    refs = {e["secretRef"] for e in container["env"] if "secretRef" in e}
    assert {e["name"] for e in container["env"]} >= {"RFT_AUTH_TOKENS", "RFT_STORE_URL"} and refs <= secrets
    assert props["template"]["scale"]["minReplicas"] >= 2


def test_modal_app_defines_an_asgi_function():
    tree = ast.parse((TEMPLATES / "modal" / "modal_app.py").read_text())
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    decorators = {ast.unparse(d) for f in functions for d in f.decorator_list}
    assert "modal.asgi_app()" in decorators and any("min_containers=2" in d for d in decorators)


def _entrypoint(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    rft = fake / "rft"  # stands in for the installed `rft` command: prints what it was asked to run
    rft.write_text('#!/bin/sh\necho "rft $*"\n')
    rft.chmod(rft.stat().st_mode | stat.S_IEXEC)
    return subprocess.run(["sh", str(TEMPLATES / "tool_server" / "entrypoint.sh")], capture_output=True, text=True,
                          env={"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", **env})


def test_image_entrypoint_refuses_to_serve_without_tokens(tmp_path):
    refused = _entrypoint(tmp_path, {})
    assert refused.returncode == 64 and "RFT_AUTH_TOKENS" in refused.stderr and refused.stdout == ""
    served = _entrypoint(tmp_path, {"RFT_AUTH_TOKENS": "t1", "RFT_WORKERS": "3"})
    assert served.returncode == 0
    assert served.stdout.strip() == "rft serve app:server --host 0.0.0.0 --port 8000 --workers 3"
    assert _entrypoint(tmp_path, {"RFT_ALLOW_NO_AUTH": "1"}).returncode == 0
    assert "entrypoint.sh" in (TEMPLATES / "tool_server" / "Dockerfile").read_text()
