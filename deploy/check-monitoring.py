#!/usr/bin/env python3
"""Offline check of the monitoring files (standard library only).

The Grafana dashboard must parse, name only metrics and labels the Rust
source exports (read from the `gauge!`/`counter!` calls of the coordinator
and the worker, so a renamed metric breaks this check, not a dashboard in
production), and use the datasource uid the provisioning file defines; the
provisioned dashboard path must be where compose mounts the dashboards.
"""

import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
DASHBOARDS = ROOT / "deploy/grafana/dashboards"
DATASOURCES = ROOT / "deploy/grafana/provisioning/datasources"
PROVIDERS = ROOT / "deploy/grafana/provisioning/dashboards"
COMPOSE = ROOT / "deploy/compose.yaml"
SOURCES = [ROOT / "coordinator/src", ROOT / "worker/src"]

# Labels Prometheus adds to every scraped series.
SCRAPE_LABELS = {"instance", "job", "__name__"}
# PromQL words that look like names but are not metrics.
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool",
            "offset", "and", "or", "unless", "inf", "nan"}

MACRO = re.compile(r'\b(?:gauge|counter|histogram)!\(\s*"([A-Za-z_:][A-Za-z0-9_:]*)"((?:[^;])*?)\)')
LABEL_KEY = re.compile(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*=>')


def exported():
    """Metric names and label names the Rust source exports."""
    metrics, labels = set(), set()
    for root in SOURCES:
        for path in sorted(root.rglob("*.rs")):
            text = path.read_text(encoding="utf-8")
            for match in MACRO.finditer(text):
                metrics.add(match.group(1))
                labels.update(LABEL_KEY.findall(match.group(2)))
    return metrics, labels


def names_in(expr):
    """(metric names, label names) a PromQL expression refers to."""
    labels = set()
    # Grafana variables ($worker, ${worker}, $__rate_interval) are not PromQL.
    expr = re.sub(r"\$\{?\w+\}?", "x", expr)
    for matchers in re.findall(r"\{([^}]*)\}", expr):
        labels.update(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)", matchers))
    for clause in re.findall(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", expr):
        labels.update(name.strip() for name in clause.split(",") if name.strip())
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)
    bare = re.sub(r"\{[^}]*\}", "", bare)
    bare = re.sub(r"\[[^\]]*\]", "", bare)
    bare = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", bare)
    metrics = set()
    for match in re.finditer(r"(?<![\w.])([A-Za-z_:][A-Za-z0-9_:]*)(\s*\()?", bare):
        name, call = match.group(1), match.group(2)
        if call or name.lower() in KEYWORDS:
            continue
        metrics.add(name)
    return metrics, labels


def yaml_values(path, key):
    """Values of `key:` lines in a simple YAML file (no YAML parser in the stdlib)."""
    pattern = re.compile(rf"^\s*-?\s*{key}:\s*['\"]?([^'\"#\s]+)", re.MULTILINE)
    return pattern.findall(path.read_text(encoding="utf-8"))


def panels_of(dashboard):
    for panel in dashboard.get("panels", []):
        yield panel
        yield from panel.get("panels", [])


def check_dashboard(path, metrics, labels, uids, errors):
    try:
        dashboard = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        errors.append(f"{path.name}: not JSON: {err}")
        return 0
    where = path.relative_to(ROOT)
    for key in ("uid", "title", "panels", "schemaVersion"):
        if key not in dashboard:
            errors.append(f"{where}: no '{key}'")
    variables = {v.get("name") for v in dashboard.get("templating", {}).get("list", [])}
    ids, queries = set(), []
    for variable in dashboard.get("templating", {}).get("list", []):
        if variable.get("type") == "query":
            query = variable.get("query")
            query = query.get("query", "") if isinstance(query, dict) else query or ""
            found = re.match(r"label_values\(\s*([A-Za-z_:][\w:]*)\s*,\s*(\w+)\s*\)", query)
            if not found:
                errors.append(f"{where}: variable {variable.get('name')}: unsupported query {query!r}")
            else:
                queries.append((f"variable {variable.get('name')}", variable, found.group(1), {found.group(2)}))
    for panel in panels_of(dashboard):
        title = panel.get("title", "?")
        if panel.get("type") == "row":
            continue
        if panel.get("id") in ids:
            errors.append(f"{where}: panel id {panel.get('id')} used twice")
        ids.add(panel.get("id"))
        if not {"x", "y", "w", "h"} <= set(panel.get("gridPos", {})):
            errors.append(f"{where}: panel '{title}': no full gridPos")
        if not panel.get("targets"):
            errors.append(f"{where}: panel '{title}': no query")
        for target in panel.get("targets", []):
            expr = target.get("expr", "")
            if not expr:
                errors.append(f"{where}: panel '{title}' {target.get('refId')}: empty expr")
                continue
            used_metrics, used_labels = names_in(expr)
            queries.append((f"panel '{title}' {target.get('refId')}", target, None, used_labels))
            for name in sorted(used_metrics - metrics):
                errors.append(f"{where}: panel '{title}': metric {name} is not exported by the Rust source")
            if not used_metrics:
                errors.append(f"{where}: panel '{title}': no metric in {expr!r}")
        queries.append((f"panel '{title}'", panel, None, set()))
        for ref in re.findall(r"\$\{?(\w+)\}?", json.dumps(panel.get("targets", []))):
            if ref not in variables and not ref.startswith("__"):
                errors.append(f"{where}: panel '{title}': unknown variable ${ref}")
    for what, holder, metric, used_labels in queries:
        if metric is not None and metric not in metrics:
            errors.append(f"{where}: {what}: metric {metric} is not exported by the Rust source")
        for label in sorted(used_labels - labels - SCRAPE_LABELS):
            errors.append(f"{where}: {what}: label {label} is not exported by the Rust source")
        datasource = holder.get("datasource")
        if datasource is None:
            errors.append(f"{where}: {what}: no datasource")
        elif not isinstance(datasource, dict) or datasource.get("uid") not in uids:
            errors.append(f"{where}: {what}: datasource {datasource!r} is not one of {sorted(uids)}")
    return len(ids)


def main():
    errors = []
    metrics, labels = exported()
    if not metrics:
        errors.append("no metric found in the Rust source: has the gauge!/counter! style changed?")
    uids = set()
    for path in sorted(DATASOURCES.glob("*.yaml")):
        uids.update(yaml_values(path, "uid"))
    if not uids:
        errors.append(f"no datasource uid in {DATASOURCES.relative_to(ROOT)}")
    mounted = {target for _, target in re.findall(r"\./grafana/([\w/]+):([^:\s]+)", COMPOSE.read_text(encoding="utf-8"))}
    for path in sorted(PROVIDERS.glob("*.yaml")):
        for provided in yaml_values(path, "path"):
            if provided not in mounted:
                errors.append(f"{path.relative_to(ROOT)}: path {provided} is not mounted by deploy/compose.yaml")
    dashboards = sorted(DASHBOARDS.glob("*.json"))
    if not dashboards:
        errors.append(f"no dashboard in {DASHBOARDS.relative_to(ROOT)}")
    panels = sum(check_dashboard(path, metrics, labels, uids, errors) for path in dashboards)
    for error in errors:
        print(f"check-monitoring: {error}", file=sys.stderr)
    if errors:
        return 1
    print(f"monitoring files valid: {len(dashboards)} dashboard(s), {panels} panels, "
          f"{len(metrics)} exported metrics")
    return 0


if __name__ == "__main__":
    sys.exit(main())
