"""deploy/k8s, checked offline: each overlay rendered by kustomize (`kubectl kustomize`,
kustomize v5 built into kubectl) and every manifest validated against the Kubernetes
schemas of the kubernetes-validate package (strict: unknown fields fail); the RayCluster
against the KubeRay CRD's schema (tests/deploy/kuberay_raycluster_v1.schema.json, which
says where it comes from), its pod templates against Kubernetes' PodTemplateSpec."""

from __future__ import annotations

import json
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml
from redis.connection import parse_url
from referencing import Registry, Resource

from tests.deploy.files import DEPLOY
from tests.deploy.redis_run import answers_without_password, run_start_command

K8S_VERSION = "1.31"  # the oldest Kubernetes these manifests are meant for
OVERLAYS = ("cpu-demo", "gpu")
KUBECTL = shutil.which("kubectl")
RAYCLUSTER_SCHEMA = Path(__file__).with_name("kuberay_raycluster_v1.schema.json")
APPS = ("rlstudio-web", "rlstudio-worker", "rlstudio-beat")
# What KubeRay (v1.5.1+) does for `authOptions: {mode: token}` without a secretName: a
# Secret named after the RayCluster, the token under this key (ray-operator's
# raycluster_controller.go createAuthSecret, utils.RAY_AUTH_TOKEN_SECRET_KEY).
RAY_TOKEN_KEY = "auth_token"

pytestmark = pytest.mark.skipif(
    KUBECTL is None, reason="kubectl (with kustomize built in) is not installed"
)


@cache
def render(overlay: str) -> tuple[dict[str, Any], ...]:
    done = subprocess.run(
        [str(KUBECTL), "kustomize", str(DEPLOY / "k8s" / "overlays" / overlay)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return tuple(doc for doc in yaml.safe_load_all(done.stdout) if doc)


def by_kind(overlay: str, kind: str) -> dict[str, dict[str, Any]]:
    return {m["metadata"]["name"]: m for m in render(overlay) if m["kind"] == kind}


def raycluster_validator() -> jsonschema.Draft202012Validator:
    folder = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    [strict] = sorted(folder.glob(f"v{K8S_VERSION}.*-local-strict"))
    definitions = json.loads((strict / "_definitions.json").read_text())
    schema = json.loads(RAYCLUSTER_SCHEMA.read_text())
    registry: Registry = Registry().with_resources(
        [
            (definitions["$id"], Resource.from_contents(definitions)),
            (schema["$id"], Resource.from_contents(schema)),
        ]
    )
    return jsonschema.Draft202012Validator(schema, registry=registry)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_manifest_is_valid_against_the_kubernetes_schemas(overlay: str) -> None:
    kinds = set()
    for manifest in render(overlay):
        kinds.add(manifest["kind"])
        if manifest["apiVersion"] == "ray.io/v1":
            continue  # a custom resource: the KubeRay test below
        kubernetes_validate.validate(manifest, K8S_VERSION, strict=True)
    expected = {"Deployment", "Service", "Ingress", "Job", "ConfigMap", "Secret"}
    assert expected | {"PersistentVolumeClaim", "RayCluster"} <= kinds


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_raycluster_is_valid_against_the_kuberay_crd_schema(overlay: str) -> None:
    [cluster] = by_kind(overlay, "RayCluster").values()
    raycluster_validator().validate(cluster)
    group = cluster["spec"]["workerGroupSpecs"][0]
    assert group["minReplicas"] <= group["replicas"] <= group["maxReplicas"]


def test_the_schemas_refuse_a_misspelt_field() -> None:
    [cluster] = by_kind("gpu", "RayCluster").values()
    cluster = json.loads(json.dumps(cluster))
    cluster["spec"]["workerGroupSpecs"][0]["maxReplica"] = 4
    with pytest.raises(jsonschema.ValidationError, match="maxReplica"):
        raycluster_validator().validate(cluster)
    web = json.loads(json.dumps(by_kind("gpu", "Deployment")["rlstudio-web"]))
    web["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(web, K8S_VERSION, strict=True)


def test_the_gpu_workers_ask_for_gpus_and_the_cpu_demo_for_none() -> None:
    def worker_resources(overlay: str) -> dict[str, Any]:
        [cluster] = by_kind(overlay, "RayCluster").values()
        container = cluster["spec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
        return dict(container["resources"]["limits"])

    assert worker_resources("gpu")["nvidia.com/gpu"] == "8"
    assert "nvidia.com/gpu" not in worker_resources("cpu-demo")
    [cluster] = by_kind("gpu", "RayCluster").values()
    assert cluster["spec"]["enableInTreeAutoscaling"] is True


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_apps_have_probes_requests_non_root_users_and_what_they_mount_exists(
    overlay: str,
) -> None:
    deployments = by_kind(overlay, "Deployment")
    claims = set(by_kind(overlay, "PersistentVolumeClaim"))
    configs, secrets = set(by_kind(overlay, "ConfigMap")), set(by_kind(overlay, "Secret"))
    pods = [deployments[name]["spec"]["template"]["spec"] for name in APPS if "worker" not in name]
    pods.append(by_kind(overlay, "Job")["rlstudio-migrate"]["spec"]["template"]["spec"])
    [cluster] = by_kind(overlay, "RayCluster").values()
    pods.append(cluster["spec"]["headGroupSpec"]["template"]["spec"])
    pods += [g["template"]["spec"] for g in cluster["spec"]["workerGroupSpecs"]]
    for pod in pods:
        assert pod["securityContext"]["runAsNonRoot"] is True
        for volume in pod.get("volumes", []):
            if "persistentVolumeClaim" in volume:
                assert volume["persistentVolumeClaim"]["claimName"] in claims
        for container in pod["containers"]:
            assert container["resources"]["requests"]
            assert container["image"].split(":")[-1] == "0.1.0", container["image"]
            for source in container.get("envFrom", []):
                if "configMapRef" in source:
                    assert source["configMapRef"]["name"] in configs
                if "secretRef" in source:
                    assert source["secretRef"]["name"] in secrets
    # The Celery worker is root for the reward sandbox, with that one capability only.
    worker = deployments["rlstudio-worker"]["spec"]["template"]["spec"]
    assert worker["containers"][0]["securityContext"]["capabilities"] == {"add": ["SYS_ADMIN"]}
    assert worker["containers"][0]["securityContext"]["allowPrivilegeEscalation"] is False
    for name in ("rlstudio-web", "rlstudio-worker"):
        [container] = deployments[name]["spec"]["template"]["spec"]["containers"]
        assert "readinessProbe" in container and "livenessProbe" in container, name
    web = deployments["rlstudio-web"]["spec"]["template"]["spec"]["containers"][0]
    assert web["readinessProbe"]["httpGet"]["path"] == "/api/health"
    assert deployments["rlstudio-beat"]["spec"]["replicas"] == 1


def test_the_images_pin_the_ray_version_the_raycluster_declares() -> None:
    [cluster] = by_kind("gpu", "RayCluster").values()
    pin = f'"ray[default]=={cluster["spec"]["rayVersion"]}"'
    for dockerfile in ("studio.Dockerfile", "trainer.Dockerfile"):
        assert pin in (DEPLOY / "docker" / dockerfile).read_text(), dockerfile


def studio_pods(overlay: str) -> dict[str, dict[str, Any]]:
    deployments = by_kind(overlay, "Deployment")
    pods = {name: deployments[name]["spec"]["template"]["spec"] for name in APPS}
    pods["rlstudio-migrate"] = by_kind(overlay, "Job")["rlstudio-migrate"]["spec"]["template"][
        "spec"
    ]
    return pods


def secret_data(overlay: str) -> dict[str, str]:
    return dict(by_kind(overlay, "Secret")["rlstudio-secrets"]["stringData"])


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_raycluster_has_token_auth_and_the_studio_pods_get_its_token(overlay: str) -> None:
    [cluster] = by_kind(overlay, "RayCluster").values()
    # No secretName: the operator generates the token into a Secret of the cluster's name.
    assert cluster["spec"]["authOptions"] == {"mode": "token"}
    ray_version = tuple(int(part) for part in cluster["spec"]["rayVersion"].split("."))
    assert ray_version >= (2, 52, 0)  # Ray's token authentication
    token_ref = {"secretKeyRef": {"name": cluster["metadata"]["name"], "key": RAY_TOKEN_KEY}}
    for name, pod in studio_pods(overlay).items():
        for container in pod["containers"]:
            env = {e["name"]: e for e in container.get("env", [])}
            assert env["RAY_AUTH_MODE"] == {"name": "RAY_AUTH_MODE", "value": "token"}, name
            assert env["RAY_AUTH_TOKEN"]["valueFrom"] == token_ref, name
    # The operator sets both on the Ray containers (KubeRay v1.5.1 appends them without
    # looking, so a copy here would be a second, conflicting entry).
    groups = [cluster["spec"]["headGroupSpec"], *cluster["spec"]["workerGroupSpecs"]]
    for group in groups:
        for container in group["template"]["spec"]["containers"]:
            names = {e["name"] for e in container.get("env", [])}
            assert not names & {"RAY_AUTH_MODE", "RAY_AUTH_TOKEN"}, container["name"]
    # Nothing the studio's pods load with envFrom sets it either.
    config = by_kind(overlay, "ConfigMap")["rlstudio-config"]["data"]
    assert not {"RAY_AUTH_MODE", "RAY_AUTH_TOKEN"} & (set(config) | set(secret_data(overlay)))


def test_the_schema_refuses_an_unknown_auth_mode_or_field() -> None:
    [cluster] = by_kind("gpu", "RayCluster").values()
    for auth_options, field in (({"mode": "tokens"}, "tokens"), ({"mod": "token"}, "mod")):
        broken = json.loads(json.dumps(cluster))
        broken["spec"]["authOptions"] = auth_options
        with pytest.raises(jsonschema.ValidationError, match=field):
            raycluster_validator().validate(broken)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_redis_url_carries_a_password(overlay: str) -> None:
    url = secret_data(overlay)["REDIS_URL"]
    assert parse_url(url)["password"], url


def test_the_demo_redis_wants_the_password_of_its_url(tmp_path: Path) -> None:
    secret = secret_data("cpu-demo")
    password = secret["REDIS_PASSWORD"]
    assert parse_url(secret["REDIS_URL"])["password"] == password
    deployment = by_kind("cpu-demo", "Deployment")["redis"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    assert container["env"] == [
        {
            "name": "REDISCLI_AUTH",
            "valueFrom": {"secretKeyRef": {"name": "rlstudio-secrets", "key": "REDIS_PASSWORD"}},
        }
    ]
    start = container["args"]  # after the image's entrypoint, as compose's `command`
    assert "command" not in container
    assert "$(" not in " ".join(start)  # no Kubernetes expansion onto the command line
    probe = container["readinessProbe"]["exec"]["command"]
    assert probe[:2] == ["sh", "-c"]
    with run_start_command(start, password, tmp_path) as running:
        assert not answers_without_password(running.socket)
        assert running.health_check(probe[2], password) == 0
        assert running.health_check(probe[2], "a-wrong-password") != 0
