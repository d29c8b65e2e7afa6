"""Deployment templates: manifests parse and hang together, and are safe by default.

A Python validator (PyYAML + the keys each kind needs), since kubectl, kubeconform
and docker are not installed here; ``docker compose config`` runs when docker is.
Safe by default: the entrypoint refuses placeholder tokens; ingress timeouts cover
the hosted 600 s call limit; probes use ``/readyz``; Redis has a password and an
append-only file (checked on a real redis-server started with the templates'
arguments); rollout files live on a volume every replica shares; NetworkPolicy,
securityContext and a PodDisruptionBudget; the build context leaves ``.venv`` out;
Modal installs the SDK from this checkout.
"""

from __future__ import annotations

import ast
import asyncio
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import time
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
    "Ingress": ["spec.rules", "spec.tls", "spec.ingressClassName"],
    "PodDisruptionBudget": ["spec.selector.matchLabels"],
    "NetworkPolicy": ["spec.podSelector.matchLabels", "spec.ingress"],
    "PersistentVolumeClaim": ["spec.accessModes", "spec.resources.requests.storage"],
}
HOSTED_CALL_LIMIT_S = 600  # the hosted service waits at most 10 minutes for an answer (hosted protocol §3)


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
    assert store.client.connection_pool.connection_kwargs["password"] == "$(REDIS_PASSWORD)"  # expanded by k8s
    password_ref = env["REDIS_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert password_ref["key"] in by_kind["Secret"][password_ref["name"]]["stringData"]
    assert list(env).index("REDIS_PASSWORD") < list(env).index("RFT_STORE_URL")  # $(VAR) needs it defined first
    backend = by_kind["Ingress"]["rft-tool-server"]["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] in by_kind["Service"]


def test_kubernetes_probes_timeouts_hardening_and_shared_sandboxes():
    docs = _kubernetes()
    by_kind: dict[str, dict[str, dict]] = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc
    pod = by_kind["Deployment"]["rft-tool-server"]["spec"]["template"]["spec"]
    tool = pod["containers"][0]
    assert tool["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert tool["livenessProbe"]["httpGet"]["path"] == "/healthz"  # a Redis outage must not restart replicas
    assert pod["terminationGracePeriodSeconds"] >= HOSTED_CALL_LIMIT_S
    ingress = by_kind["Ingress"]["rft-tool-server"]
    notes = ingress["metadata"]["annotations"]
    for key in ("nginx.ingress.kubernetes.io/proxy-read-timeout", "nginx.ingress.kubernetes.io/proxy-send-timeout"):
        assert int(notes[key]) >= HOSTED_CALL_LIMIT_S, key  # nginx's default is 60 s
    assert ingress["spec"]["ingressClassName"]
    for name, dep in by_kind["Deployment"].items():
        spec = dep["spec"]["template"]["spec"]
        assert spec["securityContext"]["runAsNonRoot"] is True, name
        assert spec["securityContext"]["seccompProfile"]["type"] == "RuntimeDefault", name
        for container in spec["containers"]:
            ctx = container["securityContext"]
            assert ctx["allowPrivilegeEscalation"] is False and ctx["readOnlyRootFilesystem"] is True, name
            assert ctx["capabilities"]["drop"] == ["ALL"], name
    labels = {n: d["spec"]["template"]["metadata"]["labels"] for n, d in by_kind["Deployment"].items()}
    pdb = by_kind["PodDisruptionBudget"]["rft-tool-server"]["spec"]
    assert pdb["selector"]["matchLabels"].items() <= labels["rft-tool-server"].items() and pdb["minAvailable"] >= 1
    redis_policy = by_kind["NetworkPolicy"]["rft-redis"]["spec"]
    assert redis_policy["podSelector"]["matchLabels"].items() <= labels["rft-redis"].items()
    (allowed,) = redis_policy["ingress"][0]["from"]
    assert allowed["podSelector"]["matchLabels"].items() <= labels["rft-tool-server"].items()
    assert by_kind["NetworkPolicy"]["rft-tool-server"]["spec"]["ingress"][0]["ports"] == [
        {"protocol": "TCP", "port": 8000}]
    # rollout files: a ReadWriteMany volume every replica mounts at RFT_SANDBOX_ROOT
    env = {e["name"]: e for e in tool["env"]}
    mounts = {m["name"]: m["mountPath"] for m in tool["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert mounts["sandboxes"] == env["RFT_SANDBOX_ROOT"]["value"]
    claim = by_kind["PersistentVolumeClaim"][volumes["sandboxes"]["persistentVolumeClaim"]["claimName"]]
    assert claim["spec"]["accessModes"] == ["ReadWriteMany"]
    readme = (TEMPLATES / "kubernetes" / "README.md").read_text()
    assert "no session affinity is needed" not in readme and "RFT_SANDBOX_ROOT" in readme
    redis_args = " ".join(by_kind["Deployment"]["rft-redis"]["spec"]["template"]["spec"]["containers"][0]["args"])
    assert "--requirepass" in redis_args and "--appendonly yes" in redis_args


def _redis_binary() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed (apt-get install redis-server)")
        pytest.skip("redis-server is not installed")
    return binary


def _redis_args(text: str, password: str) -> list[str]:
    """The redis-server arguments of a template's shell command, with the password filled in."""
    words = shlex.split(text.replace('"$REDIS_PASSWORD"', password).replace('"$$REDIS_PASSWORD"', password))
    return words[words.index("redis-server") + 1:]


@pytest.mark.parametrize("template", ["kubernetes", "compose"])
def test_template_redis_really_requires_its_password_and_keeps_an_append_only_file(tmp_path, template):
    import redis

    from rft_sdk.testing import free_port

    password = "p" * 32
    if template == "kubernetes":
        (dep,) = [d for d in _kubernetes() if d["kind"] == "Deployment" and d["metadata"]["name"] == "rft-redis"]
        command = dep["spec"]["template"]["spec"]["containers"][0]["args"][0]
        url = {e["name"]: e for e in _kubernetes_tool_env()}["RFT_STORE_URL"]["value"].replace(
            "$(REDIS_PASSWORD)", password)
    else:
        compose = yaml.safe_load((TEMPLATES / "compose" / "docker-compose.yml").read_text())
        command = compose["services"]["redis"]["command"][-1]
        url = _interpolate(compose["services"]["tool"]["environment"]["RFT_STORE_URL"], password)
    args = [a for a in _redis_args(command, password) if a not in ("--dir", "/data")]
    port = free_port()
    url = url.replace("@rft-redis:6379", f"@127.0.0.1:{port}").replace("@redis:6379", f"@127.0.0.1:{port}")
    proc = subprocess.Popen([_redis_binary(), *args, "--port", str(port), "--bind", "127.0.0.1", "--dir",
                             str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        client = redis.Redis(host="127.0.0.1", port=port, password=password)
        for _ in range(200):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        with pytest.raises(redis.AuthenticationError):  # NOAUTH / wrong password: nothing without it
            redis.Redis(host="127.0.0.1", port=port).ping()
        store = store_from_url(url)  # the URL the replicas use carries the password
        assert asyncio.run(_stats_then_close(store))["rollouts"] == 0
    finally:
        proc.terminate()
        proc.wait(timeout=20)


async def _stats_then_close(store) -> dict:
    try:
        return await store.astats()
    finally:
        await store.aclose()


def _kubernetes_tool_env() -> list[dict]:
    (dep,) = [d for d in _kubernetes() if d["kind"] == "Deployment" and d["metadata"]["name"] == "rft-tool-server"]
    return dep["spec"]["template"]["spec"]["containers"][0]["env"]


def test_compose_file_has_replicas_redis_and_a_tls_proxy():
    compose = yaml.safe_load((TEMPLATES / "compose" / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"tool", "redis", "proxy"} <= set(services)
    tool = services["tool"]
    assert tool["deploy"]["replicas"] >= 2
    assert (ROOT / tool["build"]["context"].replace("../..", ".") / tool["build"]["dockerfile"]).is_file() or \
        (TEMPLATES / "compose" / tool["build"]["context"] / tool["build"]["dockerfile"]).is_file()
    store = store_from_url(_interpolate(tool["environment"]["RFT_STORE_URL"]))
    assert isinstance(store, RedisStore) and store.client.connection_pool.connection_kwargs["host"] == "redis"
    assert "RFT_AUTH_TOKENS" in tool["environment"]
    assert "443:443" in services["proxy"]["ports"]
    caddyfile = (TEMPLATES / "compose" / services["proxy"]["volumes"][0].split(":")[0]).read_text()
    assert "dynamic a tool 8000" in caddyfile and "health_uri /readyz" in caddyfile
    timeouts = [int(t) for t in re.findall(r"(?:response_header_timeout|read_timeout) (\d+)s", caddyfile)]
    assert len(timeouts) == 2 and min(timeouts) >= HOSTED_CALL_LIMIT_S
    assert "redis-data:/data" in services["redis"]["volumes"]
    assert "--requirepass" in services["redis"]["command"][-1] and "--appendonly yes" in services["redis"]["command"][-1]
    assert "sandboxes:/var/lib/rft/sandboxes" in tool["volumes"]
    assert tool["environment"]["RFT_SANDBOX_ROOT"] == "/var/lib/rft/sandboxes"
    env_example = dict(line.split("=", 1) for line in (TEMPLATES / "compose" / ".env.example").read_text().splitlines()
                       if line and not line.startswith("#"))
    assert env_example["RFT_AUTH_TOKENS"] == "" and env_example["REDIS_PASSWORD"] == ""  # compose refuses empty ones
    assert "${RFT_AUTH_TOKENS:?" in tool["environment"]["RFT_AUTH_TOKENS"]


def _interpolate(text: str, value: str = "x" * 32) -> str:
    """Compose's ``${VAR}`` / ``${VAR:?message}`` interpolation, every variable set to ``value``."""
    return re.sub(r"\$\{\w+(?::?[?-][^}]*)?\}", value, text)


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
    probes = {p["type"]: p["httpGet"]["path"] for p in container["probes"]}
    assert probes["Readiness"] == "/readyz" and probes["Liveness"] == "/healthz"
    (mount,) = container["volumeMounts"]
    (volume,) = props["template"]["volumes"]
    assert mount["volumeName"] == volume["name"] and volume["storageType"] == "AzureFile"
    assert "240 s" in (TEMPLATES / "azure" / "README.md").read_text()  # Container Apps' request limit, said


def test_modal_app_defines_an_asgi_function_and_installs_the_sdk_from_this_checkout():
    source = (TEMPLATES / "modal" / "modal_app.py").read_text()
    tree = ast.parse(source)
    functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    decorators = {ast.unparse(d) for f in functions for d in f.decorator_list}
    assert "modal.asgi_app()" in decorators and any("min_containers=2" in d for d in decorators)
    calls = {n.func.attr: n for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert "pip_install" not in calls  # "rft-sdk[redis]" by name: no package index serves it
    add_dir = calls["add_local_dir"]
    assert {k.arg: ast.unparse(k.value) for k in add_dir.keywords}["copy"] == "True"  # needed before a build step
    ignored = ast.literal_eval(next(n.value for n in tree.body if isinstance(n, ast.Assign)
                                    and ast.unparse(n.targets[0]) == "IGNORE"))
    assert {".venv", ".git", "runs"} <= set(ignored)
    assert '/src[redis]' in ast.unparse(calls["run_commands"])
    root = ast.unparse(add_dir.args[0])
    assert root == "ROOT" and "ROOT = HERE.parents[1]" in source  # the repository root


# -- the image's build context ------------------------------------------------------------------
def _dockerignore_regex(pattern: str) -> re.Pattern[str]:
    """One .dockerignore pattern as a regex (Go filepath.Match: ``*`` stays inside a path segment; ``**``
    crosses them), as moby's patternmatcher reads it."""
    out = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return re.compile(out + "$")


def _in_context(path: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern matching the path or one of its parent folders decides."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    included = True
    for negated, regex in rules:
        if any(regex.match(p) for p in prefixes):
            included = negated
    return included


def _dockerignore_rules() -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for line in (ROOT / ".dockerignore").read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            rules.append((line.startswith("!"), _dockerignore_regex(line.lstrip("!").strip("/"))))
    return rules


def test_the_build_context_is_what_the_image_copies_and_no_venv(tmp_path):
    rules = _dockerignore_rules()
    for excluded in (".venv/lib/python3.11/site-packages/torch/__init__.py", ".git/HEAD", "runs/os/run/best.pt",
                     "tests/conftest.py", "benchmarks/bench_server.py", "rft_sdk/__pycache__/cli.cpython-311.pyc",
                     "examples/retail/data/db.json.gz"):
        assert not _in_context(excluded, rules), excluded
    dockerfile = (TEMPLATES / "tool_server" / "Dockerfile").read_text()
    sources = [w for line in dockerfile.splitlines() if line.startswith("COPY")
               for w in line.split()[1:-1] if not w.startswith("--")]
    assert sources and "." not in sources
    for source in sources:
        assert (ROOT / source).exists() and _in_context(source, rules), source
    # what the context holds is enough to pip-install the SDK, and small
    total = 0
    for folder, dirs, files in os.walk(ROOT):
        rel = os.path.relpath(folder, ROOT)
        rel = "" if rel == "." else rel + "/"
        dirs[:] = [d for d in dirs if _in_context(rel + d, rules) or any(
            s.startswith(rel + d + "/") for s in sources)]
        for name in files:
            if _in_context(rel + name, rules):
                total += (Path(folder) / name).stat().st_size
                target = tmp_path / "ctx" / rel / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(Path(folder) / name, target)
    assert total < 5 * 2**20, f"build context {total / 2**20:.1f} MiB"
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                            str(tmp_path / "dist"), str(tmp_path / "ctx")], capture_output=True, text=True,
                           timeout=300)
    assert built.returncode == 0, built.stderr[-2000:]
    assert list((tmp_path / "dist").glob("rft_sdk-*.whl"))


def _entrypoint(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    rft = fake / "rft"  # stands in for the installed `rft` command: prints what it was asked to run
    rft.write_text('#!/bin/sh\necho "rft $*"\n')
    rft.chmod(rft.stat().st_mode | stat.S_IEXEC)
    return subprocess.run(["sh", str(TEMPLATES / "tool_server" / "entrypoint.sh")], capture_output=True, text=True,
                          env={"PATH": f"{fake}{os.pathsep}{os.environ['PATH']}", **env})


def _template_placeholders() -> list[str]:
    """Every token value the templates ship: Secret, .env example, Azure secret."""
    secret = next(d for d in _kubernetes() if d["kind"] == "Secret" and d["metadata"]["name"] == "rft-tokens")
    app = yaml.safe_load((TEMPLATES / "azure" / "containerapp.yaml").read_text())
    azure = next(s["value"] for s in app["properties"]["configuration"]["secrets"] if s["name"] == "rft-tokens")
    return [secret["stringData"]["tokens"], azure, "change-me", "CHANGE-ME", "your-token-here-please-1234",
            "a" * 40 + ",change-me"]


def test_image_entrypoint_refuses_to_serve_without_real_tokens(tmp_path):
    refused = _entrypoint(tmp_path, {})
    assert refused.returncode == 64 and "RFT_AUTH_TOKENS" in refused.stderr and refused.stdout == ""
    for placeholder in _template_placeholders():
        result = _entrypoint(tmp_path, {"RFT_AUTH_TOKENS": placeholder})
        assert result.returncode == 64 and result.stdout == "" and "placeholder" in result.stderr, placeholder
    short = _entrypoint(tmp_path, {"RFT_AUTH_TOKENS": "t1"})
    assert short.returncode == 64 and "at least 16" in short.stderr
    token = "0123456789abcdef" * 4
    served = _entrypoint(tmp_path, {"RFT_AUTH_TOKENS": f"{token}, {token[::-1]}", "RFT_WORKERS": "3"})
    assert served.returncode == 0, served.stderr
    assert served.stdout.strip() == "rft serve app:server --host 0.0.0.0 --port 8000 --workers 3"
    assert _entrypoint(tmp_path, {"RFT_ALLOW_NO_AUTH": "1"}).returncode == 0
    dockerfile = (TEMPLATES / "tool_server" / "Dockerfile").read_text()
    assert "entrypoint.sh" in dockerfile and "/readyz" in dockerfile
