#!/usr/bin/env node
// deploy/compose without a Docker engine: the wiring `docker compose up` relies on.
//  - every service has an image or a build whose context holds its Dockerfile;
//  - every bind-mounted host path exists (relative to the compose file);
//  - the server runs as the image's numeric non-root user on a read-only root;
//  - Prometheus' rule_files are files mounted into the Prometheus container, and its
//    scrape targets are compose services on a port they publish or expose;
//  - Grafana's dashboard provider path is a directory mounted into Grafana.
//   compose.mjs [COMPOSE_FILE]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import YAML from "yaml";

const here = path.dirname(fileURLToPath(import.meta.url));
const file = process.argv[2] || path.join(here, "../compose/docker-compose.yaml");
const dir = path.dirname(file);
const problems = [];
const fail = (m) => problems.push(m);
const load = (f) => YAML.parse(fs.readFileSync(f, "utf8"));

const compose = load(file);
const services = compose.services || {};
if (!services.lite2onnx) fail("no lite2onnx service");

// service -> [{src, dst}] of bind mounts; service -> container ports.
const mounts = {};
const ports = {};
for (const [name, svc] of Object.entries(services)) {
  if (!svc.image && !svc.build) fail(`${name}: neither image nor build`);
  if (svc.build) {
    const ctx = path.resolve(dir, svc.build.context || ".");
    const df = path.join(ctx, svc.build.dockerfile || "Dockerfile");
    if (!fs.existsSync(df)) fail(`${name}: build context ${ctx} has no ${svc.build.dockerfile || "Dockerfile"}`);
  }
  mounts[name] = [];
  for (const v of svc.volumes || []) {
    const [src, dst] = String(v).split(":");
    if (!src.startsWith(".") && !src.startsWith("/")) continue; // a named volume
    const host = path.resolve(dir, src);
    if (!fs.existsSync(host)) fail(`${name}: mounts ${src}, which does not exist (${host})`);
    else mounts[name].push({ src: host, dst });
  }
  ports[name] = new Set();
  for (const p of svc.ports || []) ports[name].add(String(p).split(":").pop().split("/")[0]);
  for (const p of svc.expose || []) ports[name].add(String(p));
}

const server = services.lite2onnx || {};
if (!/^[1-9][0-9]*:[0-9]+$/.test(String(server.user || ""))) fail("lite2onnx: user must be a numeric non-root UID:GID");
if (server.read_only !== true) fail("lite2onnx: read_only must be true");
if (!(server.cap_drop || []).includes("ALL")) fail("lite2onnx: cap_drop must include ALL");

// The file mounted at DST in SERVICE, or undefined.
const mountedAt = (service, dst) => (mounts[service] || []).find((m) => dst === m.dst || dst.startsWith(`${m.dst}/`));

const prom = mountedAt("prometheus", "/etc/prometheus/prometheus.yml");
if (!prom) fail("prometheus: no prometheus.yml mounted at /etc/prometheus/prometheus.yml");
else {
  const cfg = load(prom.src);
  for (const r of cfg.rule_files || []) {
    const m = mountedAt("prometheus", r);
    if (!m) fail(`prometheus.yml: rule file ${r} is not mounted into the prometheus service`);
    else if (!fs.statSync(m.src).isFile()) fail(`prometheus.yml: rule file ${r} is not a file`);
  }
  let targets = 0;
  for (const job of cfg.scrape_configs || []) {
    for (const sc of job.static_configs || []) {
      for (const t of sc.targets || []) {
        targets++;
        const [host, port] = t.split(":");
        if (!services[host]) fail(`prometheus.yml: job ${job.job_name} scrapes ${t}: no service ${host}`);
        else if (!ports[host].has(port)) fail(`prometheus.yml: job ${job.job_name} scrapes ${t}: ${host} has no port ${port}`);
      }
    }
  }
  if (!(cfg.scrape_configs || []).some((j) => j.job_name === "lite2onnx")) {
    fail('prometheus.yml: no job "lite2onnx" (deploy/prometheus/alerts.yaml selects job="lite2onnx")');
  }
  if (targets === 0) fail("prometheus.yml: no scrape targets");
}

for (const m of mounts.grafana || []) {
  if (!m.dst.startsWith("/etc/grafana/provisioning/dashboards/")) continue;
  for (const p of load(m.src).providers || []) {
    const target = mountedAt("grafana", p.options?.path || "");
    if (!target) fail(`grafana: dashboard provider path ${p.options?.path} is not mounted`);
    else if (!fs.readdirSync(target.src).some((f) => f.endsWith(".json"))) fail(`grafana: ${target.src} holds no dashboard`);
  }
}

if (problems.length) {
  for (const p of problems) console.log(`FAIL: ${p}`);
  process.exit(1);
}
console.log(`compose: ${Object.keys(services).length} services wired (build context, mounts, scrape targets, rules, dashboards)`);
