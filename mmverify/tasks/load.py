"""Loading tasks from ``anchors/``: the task as validated, immutable data.

Anchors are trusted data, but they are still checked hard: ``task.json`` must
validate against the shipped JSON Schema, and a set of semantic checks rejects
what a schema cannot see (duplicate ids, a metric path the oracle lacks, a zero
anchor without an absolute band, an exclusion that is not declared, a unit the
artifact schema does not pin). Every failure names the file, the field and the
problem.
"""
from __future__ import annotations

import json
import os
from decimal import Decimal
from fractions import Fraction
from functools import lru_cache
from typing import Any, Mapping

from mmverify.reading import paths
from mmverify.reading.artifact import ArtifactError, parse_file
from mmverify.reading.jsonstrict import loads_strict
from mmverify.reading.numbers import is_decimal_text, to_fraction
from mmverify.tasks.spec import Band, MetricSpec, Paper, PanelValue, TaskLoadError, TaskSpec

# --------------------------------------------------------------------------- I/O

ANCHORS_HINT = "pass --anchors DIR or set MMVERIFY_ANCHORS to an anchors folder"


def default_anchors_dir() -> str:
    """``$MMVERIFY_ANCHORS``, else the anchors bundled with the package."""
    env = os.environ.get("MMVERIFY_ANCHORS")
    if env:
        return env
    # the package's own folder, found without importlib.resources (whose import
    # pulls in tempfile, shutil, zipfile and more: a tenth of a cold start)
    bundled = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "anchors")
    if os.path.isdir(bundled):
        return bundled
    # editable/source checkout: anchors/ sits beside the package folder
    from pathlib import Path   # here only: an installed package's start never needs it

    return str(Path(__file__).resolve().parents[2] / "anchors")


def read_trusted_json(file: str) -> Any:
    """Read an anchor JSON file exactly (decimals for non-integers)."""
    try:
        with open(file, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise TaskLoadError(file, "(file)", f"cannot read: {exc.strerror}") from None

    try:
        return loads_strict(raw.decode("utf-8"),
                            duplicate_key=lambda key: TaskLoadError(file, key, "duplicate key"),
                            non_finite=lambda name: TaskLoadError(file, "(value)", f"non-finite number {name}"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise TaskLoadError(file, "(file)", f"not valid JSON: {exc}") from None


@lru_cache(maxsize=1)
def task_json_schema() -> dict:
    from importlib import resources

    text = resources.files("mmverify.schemas").joinpath("task.schema.json").read_text("utf-8")
    return json.loads(text)


def _error_field(error) -> str:
    return "/".join(str(p) for p in error.absolute_path) or "(top level)"


def load_index(anchors_dir: str | None = None) -> list[dict]:
    anchors_dir = anchors_dir or default_anchors_dir()
    file = os.path.join(anchors_dir, "index.json")
    if not os.path.exists(file):
        # an anchors folder without an index: every sub-folder with a task.json
        try:
            names = sorted(os.listdir(anchors_dir))
        except OSError as exc:
            raise TaskLoadError(anchors_dir, "(folder)", f"cannot list anchors: {exc.strerror} "
                                f"({ANCHORS_HINT})") from None
        found = [{"id": n} for n in names if os.path.exists(os.path.join(anchors_dir, n, "task.json"))]
        if not found:
            # a wrong or empty --anchors folder is an error, not a folder of no tasks
            why = "does not exist" if not os.path.isdir(anchors_dir) else "holds no index.json and no task folder"
            raise TaskLoadError(anchors_dir, "(folder)", f"not an anchors folder: it {why} "
                                f"(a folder with <task-id>/task.json; {ANCHORS_HINT})")
        return found
    data = read_trusted_json(file)
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        raise TaskLoadError(file, "tasks", "must be a list of task entries")
    return data["tasks"]


def task_ids(anchors_dir: str | None = None) -> list[str]:
    return [t["id"] for t in load_index(anchors_dir)]


def load_all(anchors_dir: str | None = None) -> list[TaskSpec]:
    anchors_dir = anchors_dir or default_anchors_dir()
    return [load_task(tid, anchors_dir) for tid in task_ids(anchors_dir)]


def load_task(task_id: str, anchors_dir: str | None = None) -> TaskSpec:
    """The task ``task_id`` of an anchors folder (default: ``$MMVERIFY_ANCHORS`` or
    the bundled anchors), validated and cached; raises :class:`TaskLoadError`."""
    anchors_dir = anchors_dir or default_anchors_dir()
    return _load_task_cached(task_id, os.path.abspath(anchors_dir))


@lru_cache(maxsize=256)
def _load_task_cached(task_id: str, anchors_dir: str) -> TaskSpec:
    if not paths._KEY.fullmatch(task_id.replace("-", "_")):
        raise TaskLoadError(task_id, "id", "not a valid task id")
    directory = os.path.join(anchors_dir, task_id)
    file = os.path.join(directory, "task.json")
    if not os.path.exists(file):
        raise TaskLoadError(file, "(file)", f"no task {task_id!r} in {anchors_dir}{_did_you_mean(task_id, anchors_dir)}")
    raw = read_trusted_json(file)
    return build_task(raw, directory, file)


def _did_you_mean(task_id: str, anchors_dir: str) -> str:
    """``"; did you mean 'x'?"`` for the closest task ids of the folder (or "")."""
    import difflib

    try:
        names = sorted(n for n in os.listdir(anchors_dir) if os.path.exists(os.path.join(anchors_dir, n, "task.json")))
    except OSError:
        return ""
    close = difflib.get_close_matches(task_id, names, n=3, cutoff=0.8)
    return "; did you mean " + " or ".join(repr(c) for c in close) + "?" if close else ""


# ----------------------------------------------------------------------- building

def _validated_key(file: str, schema_file: str, oracle_file: str) -> str | None:
    """Compiled-task cache key of the checks of a task's three files (their
    bytes), or None when one cannot be read or the cache is off."""
    from mmverify.tasks import cache

    if cache.cache_dir() is None:
        return None
    content = []
    try:
        for name in (file, schema_file, oracle_file):
            with open(name, "rb") as fh:
                content.append(fh.read())
    except OSError:
        return None
    return cache.key_of("task-validated", *content)


def build_task(raw: Any, directory: str, file: str = "task.json") -> TaskSpec:
    # The jsonschema checks (task.json against the shipped schema, the artifact
    # schema against the metaschema) and the parse of the oracle artifact are
    # skipped when the compiled-task cache holds a record that these exact bytes
    # (task, schema, oracle) passed every check with this engine; every other
    # check runs on every load.
    from mmverify.tasks import cache

    schema_file = os.path.join(directory, "artifact.schema.json")
    key = (_validated_key(file, schema_file, os.path.join(directory, "oracle.json"))
           if os.path.basename(file) == "task.json" else None)
    known = key is not None and cache.load(key) is True
    if not known:
        import jsonschema

        validator = jsonschema.Draft202012Validator(task_json_schema())
        errors = sorted(validator.iter_errors(raw), key=lambda e: (list(map(str, e.absolute_path)), e.message))
        if errors:
            e = errors[0]
            raise TaskLoadError(file, _error_field(e), e.message)
    if os.path.basename(os.path.normpath(directory)) != raw["id"]:
        raise TaskLoadError(file, "id", f"id {raw['id']!r} does not match its folder name")

    metrics = tuple(_metric(m, file, i) for i, m in enumerate(raw["metrics"]))
    _unique([m.id for m in metrics], file, "metrics", "metric id")
    _unique([g["id"] for g in raw["gates"]], file, "gates", "gate id")
    by_id = {m.id: m for m in metrics}
    for i, m in enumerate(metrics):
        for k, sid in enumerate(m.supported_by):
            if sid not in by_id or sid == m.id or by_id[sid].supported_by:
                raise TaskLoadError(file, f"metrics/{i} ({m.id})/supported_by/{k}",
                                    f"{sid!r} must be another metric of the task that is not itself supported_by")
    panel = tuple(_paper(p, by_id, file, i) for i, p in enumerate(raw["panel"]))
    _unique([p.paper_id for p in panel], file, "panel", "paper id")
    if not any(p.oracle for p in panel):
        raise TaskLoadError(file, "panel", "no paper is marked oracle: true")

    schema = read_trusted_json(schema_file)
    _check_artifact_schema(schema, schema_file, metrics, metaschema=not known)

    split = raw.get("literature_split")
    if split:
        for mid in split["metrics"]:
            if mid not in by_id:
                raise TaskLoadError(file, "literature_split/metrics", f"unknown metric {mid!r}")

    task = TaskSpec(
        id=raw["id"], suite=raw["suite"], year=int(raw["year"]), problem=raw["problem"],
        problem_id=raw.get("problem_id"), title=raw["title"], headline=raw["headline"],
        headline_reason=raw.get("headline_reason"), literature_split=split,
        provenance=raw["provenance"], metrics=metrics, gates=tuple(raw["gates"]), panel=panel,
        artifact_schema=schema, directory=directory, notes=tuple(raw.get("notes", ())),
        strict_schema=raw.get("strict_schema", False),
        replay=raw.get("replay"),
    )
    if task.replay is not None:
        _check_replay(task, file)
    if not known:
        _check_oracle(task, file)
    if key is not None and not known:
        cache.store(key, True)
    return task


def _check_replay(task: TaskSpec, file: str) -> None:
    """The declared replay module exists, is this task's, and its official data loads."""
    from mmverify.replay import official_data, replay_module

    try:
        mod = replay_module(task)
    except ValueError as exc:
        raise TaskLoadError(file, "replay", str(exc)) from None
    if mod.TASK_ID != task.id:
        raise TaskLoadError(file, "replay", f"replay module {task.replay!r} is for task {mod.TASK_ID!r}")
    try:
        official_data(mod, task)
    except Exception as exc:  # noqa: BLE001 - any defect of the shipped data is a task error
        raise TaskLoadError(os.path.join(task.directory, "data"), "replay",
                            f"official data of replay {task.replay!r} does not load: {type(exc).__name__}: {exc}") from None


def _unique(ids: list[str], file: str, field_: str, what: str) -> None:
    seen = set()
    for i in ids:
        if i in seen:
            raise TaskLoadError(file, field_, f"duplicate {what} {i!r}")
        seen.add(i)


def _metric(m: Mapping[str, Any], file: str, i: int) -> MetricSpec:
    where = f"metrics/{i} ({m['id']})"
    try:
        path = paths.parse_path(m["path"])
    except paths.PathError as exc:
        raise TaskLoadError(file, where + "/path", str(exc)) from None
    if m.get("match_by") and not path.is_list:
        raise TaskLoadError(file, where + "/match_by", "match_by needs a [*] path")
    band = None
    if "band" in m:
        ((kind, text),) = m["band"].items()
        band = Band(kind, to_fraction(text), text)
        if kind in ("abs", "rel") and band.value == 0:
            raise TaskLoadError(file, where + "/band", f"{kind} band of 0 scores nothing but exact hits")
    if m["direction"] == "exact_value" and band is not None:
        raise TaskLoadError(file, where + "/band", "exact_value metrics take no band")
    weight = Fraction(Decimal(str(m["weight"])))
    return MetricSpec(
        id=m["id"], path=path, unit=m["unit"], direction=m["direction"], weight=weight, band=band,
        match_by=m.get("match_by"), comparable=m.get("comparable", True),
        comparable_reason=m.get("comparable_reason"), ungated_reason=m.get("ungated_reason"),
        description=m.get("description", ""), supported_by=tuple(m.get("supported_by", ())),
        guess_reason=m.get("guess_reason"),
    )


def _panel_value(value: Any, metric: MetricSpec, file: str, where: str) -> PanelValue:
    def scalar(v: Any) -> Any:
        if metric.direction == "exact_value" and not is_decimal_text(v):
            return v  # a label
        f = to_fraction(v)
        if f is None:
            raise TaskLoadError(file, where, f"{v!r} is not a decimal string")
        return f

    if metric.is_list:
        if metric.match_by:
            if not isinstance(value, dict):
                raise TaskLoadError(file, where, f"metric matched by {metric.match_by!r} needs an object of values")
            return tuple(sorted((k, scalar(v)) for k, v in value.items()))
        if not isinstance(value, list):
            raise TaskLoadError(file, where, "list-valued metric needs an array of values")
        return tuple(scalar(v) for v in value)
    if isinstance(value, (list, dict)):
        raise TaskLoadError(file, where, "scalar metric needs a single value")
    return scalar(value)


def _paper(p: Mapping[str, Any], metrics: Mapping[str, MetricSpec], file: str, i: int) -> Paper:
    where = f"panel/{i} ({p['paper_id']})"
    values, excluded = p["values"], p.get("excluded", {})
    for mid in list(values) + list(excluded) + list(p.get("units", {})) + list(p.get("audit", {})):
        if mid not in metrics:
            raise TaskLoadError(file, f"{where}", f"unknown metric id {mid!r}")
    parsed = {}
    for mid, v in values.items():
        if mid in excluded:
            raise TaskLoadError(file, f"{where}/values/{mid}", "metric is both reported and excluded")
        metric = metrics[mid]
        pv = _panel_value(v, metric, file, f"{where}/values/{mid}")
        parsed[mid] = pv
        if metric.direction != "exact_value" and metric.band is not None and metric.band.kind != "abs":
            anchors = [x for _, x in pv] if metric.match_by else (pv if metric.is_list else [pv])
            if any(a == 0 for a in anchors):
                raise TaskLoadError(file, f"{where}/values/{mid}",
                                    "anchor value 0 needs an absolute band ({\"abs\": ...})")
    for mid in metrics:
        if mid not in values and mid not in excluded:
            raise TaskLoadError(file, f"{where}/excluded",
                                f"metric {mid!r} is neither reported nor excluded with a reason")
    for key in p.get("context", {}):
        try:
            paths.parse_path(key)
        except paths.PathError as exc:
            raise TaskLoadError(file, f"{where}/context", str(exc)) from None
    return Paper(
        paper_id=p["paper_id"], title=p.get("title", ""), award=p["award"], oracle=p.get("oracle", False),
        provenance=p["provenance"], values=parsed, value_text=dict(values), units=p.get("units", {}),
        excluded=dict(excluded), context=p.get("context", {}), audit=p.get("audit", {}),
    )


# ------------------------------------------------------------- artifact schema

def schema_at(schema: Mapping[str, Any], path: paths.FieldPath) -> Mapping[str, Any] | None:
    """The sub-schema describing the field at ``path`` (None if not described)."""
    node: Any = schema
    for seg in path.segments:
        if not isinstance(node, dict):
            return None
        if isinstance(seg, str):
            node = node.get("properties", {}).get(seg)
        else:
            prefix = node.get("prefixItems")
            if seg != paths.WILDCARD and prefix and seg < len(prefix):
                node = prefix[seg]
            else:
                node = node.get("items")
        if node is None:
            return None
    return node


def _check_artifact_schema(schema: Any, file: str, metrics: tuple[MetricSpec, ...], metaschema: bool = True) -> None:
    if metaschema:
        import jsonschema

        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise TaskLoadError(file, _error_field(exc), f"not a valid JSON Schema: {exc.message}") from None
    if schema.get("$schema") != "https://json-schema.org/draft/2020-12/schema":
        raise TaskLoadError(file, "$schema", "must declare JSON Schema 2020-12")
    for m in metrics:
        sub = schema_at(schema, m.path)
        if sub is None:
            raise TaskLoadError(file, m.path.text, f"metric {m.id!r} reads a field the schema does not describe")
        if m.direction == "exact_value" and _is_label_schema(sub):
            continue
        if "x-unit" not in sub:
            raise TaskLoadError(file, m.path.text, f"field read by metric {m.id!r} has no x-unit")
        if sub["x-unit"] != m.unit:
            raise TaskLoadError(file, m.path.text,
                                f"x-unit {sub['x-unit']!r} differs from metric {m.id!r} unit {m.unit!r}")


def _is_label_schema(sub: Mapping[str, Any]) -> bool:
    t = sub.get("type")
    return t == "string" or t == "boolean" or "enum" in sub


def _check_oracle(task: TaskSpec, file: str) -> None:
    try:
        oracle = parse_file(task.oracle_path)
    except ArtifactError as exc:
        raise TaskLoadError(task.oracle_path, "(file)", f"oracle artifact unreadable: {exc.message}") from None
    for m in task.metrics:
        found = paths.items(oracle.data, m.path) if m.is_list else paths.get(oracle.data, m.path)
        if isinstance(found, paths.Missing):
            raise TaskLoadError(file, f"metrics/{m.id}/path", f"the oracle artifact lacks it ({found.reason})")
