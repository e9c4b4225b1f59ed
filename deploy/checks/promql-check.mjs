#!/usr/bin/env node
// Checks the PromQL of the Grafana dashboards and the alert rules against a scrape of
// a real lite2onnx-server:
//  - every expression parses (the Prometheus project's own lezer grammar);
//  - every lite2onnx_* series it reads is on /metrics (histograms as _bucket, _sum,
//    _count), and every label it matches on that series exists there;
//  - every other metric is on the declared allow-list (kube-state-metrics, Prometheus);
//  - rate()-style functions get a range, histogram_quantile() reads _bucket by le;
//  - the dashboard copies are identical, panel ids unique, panels do not overlap;
//  - the Helm PrometheusRule rendered with the chart's default thresholds holds the same
//    alerts, expressions (up to job/namespace/pod matchers), for and severity as the
//    plain rules file.
//
//   promql-check.mjs --metrics SCRAPE.txt --allow external-metrics.txt
//       --dashboard A.json [--dashboard B.json ...] --rules alerts.yaml [...]
//       --rendered helm-render-output.yaml [...] [--same-alerts RULES.yaml RENDERED.yaml]
import fs from "node:fs";
import path from "node:path";
import YAML from "yaml";
import { parser } from "@prometheus-io/lezer-promql";

const args = { dashboard: [], rules: [], rendered: [], same: [] };
for (let i = 2; i < process.argv.length; i++) {
  const a = process.argv[i];
  const next = () => process.argv[++i];
  if (a === "--metrics") args.metrics = next();
  else if (a === "--allow") args.allow = next();
  else if (a === "--dashboard") args.dashboard.push(next());
  else if (a === "--rules") args.rules.push(next());
  else if (a === "--rendered") args.rendered.push(next());
  else if (a === "--same-alerts") args.same.push([next(), next()]);
  else {
    console.error(`unknown argument ${a}`);
    process.exit(2);
  }
}
if (!args.metrics || !args.allow) {
  console.error("usage: promql-check.mjs --metrics FILE --allow FILE [--dashboard F] [--rules F] [--rendered F]");
  process.exit(2);
}

const problems = [];
const problem = (where, msg) => problems.push(`${where}: ${msg}`);

// ---- the scrape: series name -> label names seen --------------------------------
const series = new Map();
for (const line of fs.readFileSync(args.metrics, "utf8").split("\n")) {
  if (!line || line.startsWith("#")) continue;
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s/.exec(line);
  if (!m) continue;
  const labels = series.get(m[1]) || new Set();
  for (const lm of (m[3] || "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) labels.add(lm[1]);
  series.set(m[1], labels);
}
const exported = [...series.keys()].filter((n) => n.startsWith("lite2onnx_"));
if (exported.length === 0) problem(args.metrics, "no lite2onnx_* series in the scrape");

// Labels Prometheus (or a ServiceMonitor) attaches to every scraped series.
const TARGET_LABELS = new Set(["job", "instance", "namespace", "pod", "container", "service", "endpoint"]);

// ---- the allow-list of metrics from elsewhere -----------------------------------
const allowed = new Map();
for (const raw of fs.readFileSync(args.allow, "utf8").split("\n")) {
  const line = raw.replace(/#.*/, "").trim();
  if (!line) continue;
  const [name, source] = line.split(/\s+/);
  allowed.set(name, source || "");
}

// ---- PromQL ---------------------------------------------------------------------
const RANGE_FUNCS = new Set([
  "rate", "irate", "increase", "delta", "idelta", "deriv", "changes", "resets",
  "avg_over_time", "min_over_time", "max_over_time", "sum_over_time", "count_over_time",
  "stddev_over_time", "stdvar_over_time", "last_over_time", "present_over_time", "absent_over_time",
  "quantile_over_time", "predict_linear", "holt_winters",
]);
const used = new Map(); // metric -> Set(where)

function children(node) {
  const out = [];
  for (let c = node.firstChild; c; c = c.nextSibling) out.push(c);
  return out;
}
function find(node, name) {
  const out = [];
  const walk = (n) => {
    if (n.type.name === name) out.push(n);
    for (const c of children(n)) walk(c);
  };
  walk(node);
  return out;
}

function checkExpr(expr, where) {
  const text = expr
    .replace(/\$__rate_interval|\$__interval|\$__range/g, "5m")
    .replace(/\$\{?[A-Za-z_][A-Za-z0-9_]*(:[a-z]+)?\}?/g, "x");
  const tree = parser.parse(text);
  let syntaxError = false;
  tree.iterate({
    enter(n) {
      if (n.type.isError) {
        if (!syntaxError) problem(where, `PromQL syntax error at ${n.from}: ...${text.slice(Math.max(0, n.from - 30), n.from + 10)}...`);
        syntaxError = true;
      }
    },
  });
  if (syntaxError) return;
  const root = tree.topNode;
  const src = (n) => text.slice(n.from, n.to);

  for (const vs of find(root, "VectorSelector")) {
    const id = children(vs).find((c) => c.type.name === "Identifier");
    if (!id) {
      problem(where, `a selector without a metric name: ${src(vs)}`);
      continue;
    }
    const name = src(id);
    if (!used.has(name)) used.set(name, new Set());
    used.get(name).add(where);
    const matchers = find(vs, "LabelName").map(src);
    if (name.startsWith("lite2onnx_")) {
      if (!series.has(name)) {
        const hint = series.has(`${name}_bucket`) ? ` (a histogram: use ${name}_bucket, _sum or _count)` : "";
        problem(where, `${name} is not exported by the server${hint}`);
        continue;
      }
      for (const l of matchers) {
        if (!series.get(name).has(l) && !TARGET_LABELS.has(l)) {
          problem(where, `${name} has no label "${l}" (it has: ${[...series.get(name)].join(", ") || "none"})`);
        }
      }
    } else if (!allowed.has(name)) {
      problem(where, `${name} is neither a lite2onnx_* metric nor on the allow-list ${path.basename(args.allow)}`);
    }
  }

  for (const call of find(root, "FunctionCall")) {
    const fname = src(children(call).find((c) => c.type.name === "FunctionIdentifier"));
    const body = children(call).find((c) => c.type.name === "FunctionCallBody");
    const argsOf = body ? children(body) : [];
    if (RANGE_FUNCS.has(fname)) {
      const arg = argsOf[fname === "quantile_over_time" ? 1 : 0];
      if (!arg || !["MatrixSelector", "SubqueryExpr"].includes(arg.type.name)) {
        problem(where, `${fname}() needs a range vector, got ${arg ? src(arg) : "nothing"}`);
      }
    }
    if (fname === "histogram_quantile") {
      const vec = argsOf[1];
      const names = vec ? find(vec, "VectorSelector").map((v) => src(children(v)[0])) : [];
      if (!names.length || !names.every((n) => n.endsWith("_bucket"))) {
        problem(where, `histogram_quantile() must read *_bucket series: ${vec ? src(vec) : ""}`);
      }
      const grouping = vec ? find(vec, "GroupingLabels").flatMap((g) => find(g, "LabelName").map(src)) : [];
      if (vec && find(vec, "AggregateExpr").length && !grouping.includes("le")) {
        problem(where, `histogram_quantile() over an aggregation that drops le: ${src(vec)}`);
      }
    }
  }
}

// ---- dashboards -----------------------------------------------------------------
const dashboardTexts = [];
for (const file of args.dashboard) {
  const text = fs.readFileSync(file, "utf8");
  dashboardTexts.push([file, text]);
  let dash;
  try {
    dash = JSON.parse(text);
  } catch (e) {
    problem(file, `not JSON: ${e.message}`);
    continue;
  }
  if (!dash.uid || !dash.title) problem(file, "a dashboard needs uid and title");
  const panels = [];
  const walk = (ps) => {
    for (const p of ps || []) {
      panels.push(p);
      walk(p.panels);
    }
  };
  walk(dash.panels);
  const ids = new Set();
  const boxes = [];
  let exprs = 0;
  for (const p of panels) {
    const where = `${path.basename(file)} panel ${p.id} "${p.title}"`;
    if (ids.has(p.id)) problem(where, "duplicate panel id");
    ids.add(p.id);
    if (p.gridPos) {
      const g = p.gridPos;
      if (g.x < 0 || g.x + g.w > 24) problem(where, "gridPos outside the 24 columns");
      for (const [other, o] of boxes) {
        if (g.x < o.x + o.w && o.x < g.x + g.w && g.y < o.y + o.h && o.y < g.y + g.h) problem(where, `overlaps ${other}`);
      }
      boxes.push([where, g]);
    }
    if (p.type === "row") continue;
    if (!p.targets || p.targets.length === 0) problem(where, "a panel without queries");
    for (const t of p.targets || []) {
      if (!t.expr) {
        problem(where, `target ${t.refId} has no expr`);
        continue;
      }
      exprs++;
      checkExpr(t.expr, `${where} ${t.refId}`);
    }
  }
  for (const v of dash.templating?.list || []) {
    const q = typeof v.query === "string" ? v.query : v.query?.query;
    const m = /^label_values\((.*),\s*[a-zA-Z_]+\)$/.exec(q || "");
    if (v.type === "query" && m) checkExpr(m[1], `${path.basename(file)} variable ${v.name}`);
  }
  console.log(`${file}: ${panels.length} panels, ${exprs} queries`);
}
for (let i = 1; i < dashboardTexts.length; i++) {
  if (dashboardTexts[i][1] !== dashboardTexts[0][1]) {
    problem(dashboardTexts[i][0], `differs from ${dashboardTexts[0][0]}: keep the copies identical`);
  }
}

// ---- rules ----------------------------------------------------------------------
const yamlDocs = (file) =>
  YAML.parseAllDocuments(fs.readFileSync(file, "utf8"), { version: "1.1" }).map((d) => {
    if (d.errors.length) problem(file, `YAML: ${d.errors[0].message}`);
    return d.toJS();
  });
function rulesOf(file, groups) {
  const out = [];
  for (const g of groups || []) {
    for (const r of g.rules || []) {
      const name = r.alert || r.record;
      const where = `${path.basename(file)} ${g.name}/${name}`;
      if (!name) problem(where, "a rule needs alert or record");
      if (typeof r.expr !== "string" && typeof r.expr !== "number") {
        problem(where, "no expr");
        continue;
      }
      checkExpr(String(r.expr), where);
      if (r.for !== undefined && !/^([0-9]+(ms|s|m|h|d|w|y))+$/.test(r.for)) problem(where, `bad for: ${r.for}`);
      if (r.alert && !r.labels?.severity) problem(where, "an alert needs a severity label");
      if (r.alert && !r.annotations?.summary) problem(where, "an alert needs a summary annotation");
      out.push(r);
    }
  }
  return out;
}
const ruleSets = new Map();
for (const file of args.rules) {
  const rules = yamlDocs(file).flatMap((d) => rulesOf(file, d?.groups));
  ruleSets.set(file, rules);
  console.log(`${file}: ${rules.length} rules`);
}
for (const file of args.rendered) {
  const rules = yamlDocs(file)
    .filter((d) => d && d.kind === "PrometheusRule")
    .flatMap((d) => rulesOf(file, d.spec?.groups));
  if (rules.length === 0) problem(file, "no PrometheusRule rules rendered");
  ruleSets.set(file, rules);
  console.log(`${file}: ${rules.length} rules of PrometheusRule objects`);
}
const normalize = (e) =>
  String(e)
    .replace(/\s+/g, "")
    .replace(/(job|namespace|pod)=~?"[^"]*",?/g, "")
    .replace(/,}/g, "}")
    .replace(/\{\}/g, "");
for (const [a, b] of args.same) {
  const ra = new Map((ruleSets.get(a) || []).map((r) => [r.alert || r.record, r]));
  const rb = new Map((ruleSets.get(b) || []).map((r) => [r.alert || r.record, r]));
  const names = new Set([...ra.keys(), ...rb.keys()]);
  for (const n of names) {
    const x = ra.get(n);
    const y = rb.get(n);
    if (!x || !y) {
      problem(`${path.basename(a)} vs ${path.basename(b)}`, `${n} is only in ${x ? a : b}`);
      continue;
    }
    if (normalize(x.expr) !== normalize(y.expr)) {
      problem(`${path.basename(a)} vs ${path.basename(b)}`, `${n}: the expressions differ:\n  ${normalize(x.expr)}\n  ${normalize(y.expr)}`);
    }
    if ((x.for || "") !== (y.for || "")) problem(`${path.basename(a)} vs ${path.basename(b)}`, `${n}: for ${x.for} vs ${y.for}`);
    if (x.labels?.severity !== y.labels?.severity) {
      problem(`${path.basename(a)} vs ${path.basename(b)}`, `${n}: severity ${x.labels?.severity} vs ${y.labels?.severity}`);
    }
  }
  console.log(`${a} and ${b}: the same ${names.size} alerts`);
}

// ---- report ---------------------------------------------------------------------
const names = [...used.keys()].sort();
const own = names.filter((n) => n.startsWith("lite2onnx_"));
const other = names.filter((n) => !n.startsWith("lite2onnx_"));
console.log(`metrics used: ${own.length} lite2onnx_* (${own.join(", ")}); others: ${other.join(", ") || "none"}`);
const families = new Set(exported.map((n) => n.replace(/_(bucket|sum|count)$/, "")));
const unused = [...families].filter((f) => !names.some((n) => n === f || n.startsWith(`${f}_`)));
if (unused.length) console.log(`exported but in no dashboard or alert: ${unused.join(", ")}`);
if (problems.length) {
  for (const p of problems) console.log(`FAIL: ${p}`);
  console.log(`promql-check: ${problems.length} problem(s)`);
  process.exit(1);
}
console.log("promql-check: OK");
