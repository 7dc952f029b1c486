#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""End to end: Debian's real Prometheus scrapes four real `gpumon serve` processes, four nodes
of one training job.

The serves play the fake NVML's `demo` (8 H200s), `xid` (2 H200s with XID and uncorrected ECC
events), `h200-training-capture` and `idle-h200` (one H200 each) scenarios, all at
--interval 200, each with GPUMON_HOSTNAME=node-1..node-4 and one rank of job e2e-4711 (ranks
0-3, world size 4) on its agent socket; GPU 0 of each lists a process of that job (a stand-in
process with GPUMON_JOB_ID in its environment). Prometheus (config written from
deploy/prometheus.yml's job, scrape and evaluation every 1 s, deploy/alerts/gpumon-alerts.yml
loaded) scrapes all four. Through Prometheus's HTTP API the test checks that:
  - the four targets are up and the values match the scenarios (GPU counts, memory,
    utilization range, power limit, gpu_info labels, XID counts, the ECC step);
  - no serial number and no UUID (serve runs without --uuid) is in any label or /metrics body;
  - every expression of deploy/dashboard_queries.py runs, with the job dashboard's $job_id set
    to the job; each dashboard/variable one, of the node and of the job dashboard, returns
    data; alert conditions run without error, and the XID and ECC alerts fire on `xid`;
  - /api/v1/rules has the alert group with every alert of the rules file;
  - the stand-in rank on demo (NDJSON hello, an OOM guard split and a loader retune, then a
    step every 0.2 s) reaches Prometheus as gpumon_training_* with its rank and the GPU its PCI
    bus id names, and the guard's split alert fires;
  - one job on four nodes: every rank carries its job_id, each serve names its node, and the
    gpumon-jobs recording rules give one series per job across the four instances (four
    connected ranks, the median rank's step time, the step rate); rank 3 reports 0.25 s
    steps to the others' 0.2 s, so the job dashboard's slowest-rank ratio is 1.25; the job's
    GPU of each node carries its job_id (gpumon_gpu_job_*).

  serve_prometheus_e2e_test.py --gpumon build/gpumon --fake-nvml build/fake-nvml/libnvidia-ml.so.1
Exit 0 pass, 1 fail, 77 skipped (no `prometheus` binary). About 25 s.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serve_test_support import (SKIP, TIMEOUT_S, JobProcess, Rank, Serve,  # noqa: E402
                                check, free_port, http_get, prometheus_test_main,
                                scenario_with_process, wait_for)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEPLOY = os.path.join(ROOT, "deploy")
RULES = os.path.join(DEPLOY, "alerts", "gpumon-alerts.yml")

SCENARIOS = os.path.join(ROOT, "testdata", "scenarios")
SERIAL_MARKS = ["165492300", "1650000000"]  # demo's and the default serial numbers
UUID_MARKS = ["5e1f7c2a", "fa4e0000", "GPU-"]  # demo's and the default UUIDs

# One job on four nodes: each serve's scenario, the host name it plays (GPUMON_HOSTNAME) and
# the step time its rank reports. Rank i runs on node i+1; rank 3's steps are slower.
JOB_ID = "e2e-4711"
NODES = [("demo", "node-1", 0.2), ("xid", "node-2", 0.2),
         ("h200-training-capture", "node-3", 0.2), ("idle-h200", "node-4", 0.25)]


def scenario_devices(name):
    """Per GPU: the scenario's device_template overlaid with its `devices` entry (one level of
    `fields`), enough to read constant fields and static facts."""
    with open(os.path.join(SCENARIOS, name + ".json"), encoding="utf-8") as f:
        sc = json.load(f)
    template = sc.get("device_template", {})
    out = []
    for i in range(max(sc.get("repeat_devices", 0), len(sc.get("devices", [])))):
        entry = sc["devices"][i] if i < len(sc.get("devices", [])) else {}
        dev = dict(template)
        dev.update({k: v for k, v in entry.items() if k != "fields"})
        dev["fields"] = dict(template.get("fields", {}))
        dev["fields"].update(entry.get("fields", {}))
        out.append(dev)
    return out


def prometheus_config(targets):
    """deploy/prometheus.yml's gpumon job with both targets, scraping and evaluating every 1 s.
    Written as JSON (a subset of YAML), so no YAML module is needed."""
    with open(os.path.join(DEPLOY, "prometheus.yml"), encoding="utf-8") as f:
        deploy = f.read()
    # The alert rules match up{job="gpumon"}: the test keeps the shipped job name.
    if "job_name: gpumon" not in deploy or "alerts/gpumon-alerts.yml" not in deploy:
        raise RuntimeError("deploy/prometheus.yml no longer has job gpumon and its rule file")
    return {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s", "scrape_timeout": "1s"},
        "rule_files": [RULES],
        "scrape_configs": [{"job_name": "gpumon", "metrics_path": "/metrics", "scheme": "http",
                            "static_configs": [{"targets": targets}]}],
    }


class Prometheus:
    def __init__(self, binary, config, workdir):
        self.port = free_port()
        path = os.path.join(workdir, "prometheus.yml")
        with open(path, "w", encoding="utf-8") as f:
            json.dump(config, f, indent=1)
        self.log = open(os.path.join(workdir, "prometheus.log"), "w", encoding="utf-8")
        self.proc = subprocess.Popen(
            [binary, "--config.file=" + path, "--storage.tsdb.path=" + os.path.join(workdir, "tsdb"),
             "--web.listen-address=127.0.0.1:%d" % self.port, "--log.level=warn"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        self.base = "http://127.0.0.1:%d" % self.port

    def wait_ready(self):
        def ready():
            if self.proc.poll() is not None:
                raise RuntimeError("prometheus exited with %s" % self.proc.returncode)
            try:
                return http_get(self.base + "/-/ready")[0] == 200
            except OSError:
                return False

        if not wait_for(ready):
            raise RuntimeError("prometheus not ready after %d s" % TIMEOUT_S)

    def api(self, path, **params):
        url = self.base + path + ("?" + urllib.parse.urlencode(params) if params else "")
        status, _, body = http_get(url)
        doc = json.loads(body)
        if status != 200 or doc.get("status") != "success":
            raise RuntimeError("%s: %s %s" % (url, status, body[:500]))
        return doc["data"]

    def query(self, expr):
        return self.api("/api/v1/query", query=expr)["result"]

    def scalar(self, expr):
        """The value of a one-element instant vector, or None."""
        r = self.query(expr)
        return float(r[0]["value"][1]) if len(r) == 1 else None

    def wait_for(self, expr, what):
        """Until `expr` returns data (TIMEOUT_S at most: only a hung test ends there)."""
        if not wait_for(lambda: self.query(expr), interval=0.5):
            raise RuntimeError("timed out after %d s waiting for %s (%s)" % (TIMEOUT_S, what, expr))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def stop_all(prom, serves, work, started, failures):
    """The end of a run: Prometheus and every serve stopped (each must exit 0 on SIGTERM), the
    time taken printed, the work folder removed unless a check failed."""
    if prom:
        prom.stop()
    for serve in serves:
        rc = serve.stop()
        check(rc == 0, "%s: gpumon serve exits 0 on SIGTERM, got %s\n%s"
              % (serve.scenario, rc, serve.output()), failures)
    print("took %.1f s" % (time.monotonic() - started))
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print("kept %s (prometheus.yml, prometheus.log)" % work)


def dashboard_queries(job_id):
    """Every expression of deploy/, the job dashboard's for `job_id`."""
    out = subprocess.run([sys.executable, os.path.join(DEPLOY, "dashboard_queries.py"),
                          "--job-id", job_id],
                         check=True, capture_output=True, text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def job_panel_expr(entries, title, ref="A"):
    """The job dashboard's expression of panel `title`, target `ref`."""
    for e in entries:
        if (e.get("dashboard") == "gpumon-job" and e["source"] == "dashboard"
                and e.get("panel") == title and e.get("ref") == ref):
            return e["expr"]
    raise RuntimeError("the job dashboard has no panel %r target %s" % (title, ref))


def wait_value(prom, expr, want, what, failures, tol=1e-6):
    """Until the one series of `expr` is `want` (within `tol`); a failure names its last value.
    For values of the rules, which change as their inputs arrive."""
    got = [None]

    def near():
        got[0] = prom.scalar(expr)
        return got[0] is not None and abs(got[0] - want) < tol

    ok = wait_for(near, interval=0.5)
    return check(ok, "%s: %s is %s, want %s" % (what, expr, got[0], want), failures)


def alert_names(rules_path):
    names = []
    with open(rules_path, encoding="utf-8") as f:
        for line in f:
            s = line.strip()
            if s.startswith("- alert:"):
                names.append(s.split(":", 1)[1].strip().strip("'\""))
    return sorted(set(names))


def run(args, failures):
    prom_bin = args.prometheus or shutil.which("prometheus")
    if not prom_bin:
        print("SKIP: no prometheus binary (apt-get install prometheus)")
        return SKIP
    work = tempfile.mkdtemp(prefix="gpumon-prom-e2e-")
    serves, holders = [], []
    prom = None
    stepping = threading.Event()
    stepper = None
    started = time.monotonic()
    try:
        # Four nodes of one job: each serve plays its scenario with GPU 0 holding a process of
        # the job (a real process the node reads the job of), under its own host name.
        for scenario, host, _ in NODES:
            holders.append(JobProcess(JOB_ID))
            scenario_dir = scenario_with_process(SCENARIOS, scenario, os.path.join(work, host),
                                                 holders[-1].pid)
            serves.append(Serve(args.gpumon, args.fake_nvml, scenario, ["--interval", "200"],
                                env={"GPUMON_HOSTNAME": host}, scenario_dir=scenario_dir))
        demo, xid = serves[0], serves[1]
        for serve in serves:
            serve.wait_listening()
        # Rank i on node i+1, on its GPU 0 (torch's short PCI bus id form), every rank with the
        # job's id (the Slurm job's, as every node's client would read it), stepping until the
        # end; steps are sent from this thread only.
        job = {"id": JOB_ID, "id_source": "slurm", "slurm_job_id": JOB_ID}
        ranks = []
        for i, (serve, (_, host, _)) in enumerate(zip(serves, NODES)):
            bus0 = json.loads(http_get(serve.base + "/api/v1/devices")[2])["gpus"][0]["pci_bus_id"]
            ranks.append(Rank(serve.agent_socket, pid=7001 + i, rank=i, local_rank=0,
                              world_size=len(NODES), pci_bus_id=bus0[4:], job=job,
                              hostname=host))
        rank = ranks[0]

        def step_all():
            for r, (_, _, step_s) in zip(ranks, NODES):
                r.step(cpu_s=step_s, data_wait_s=0.05, gpu_s=0.15)

        def step_loop():
            step_all()
            # The OOM guard splits and the adaptive loader retunes once: the dashboard's
            # control panels and the guard's alert read these series.
            rank.action("oom_split", reason="oom", batch_size=32, micro_batch_size=16,
                        previous_micro_batch_size=None, summary="CUDA OOM: split 32 into 2 x 16")
            rank.action("loader_retuned", num_workers=4, previous_num_workers=0, epoch=1,
                        summary="num_workers 0 -> 4")
            while not stepping.wait(0.2):
                step_all()
            for r in ranks:
                r.bye()

        stepper = threading.Thread(target=step_loop, daemon=True)
        stepper.start()
        check(any("SIMULATED GPUs (scenario demo)" in l for l in demo.lines),
              "serve prints the SIMULATED label", failures)
        prom = Prometheus(prom_bin, prometheus_config([s.target for s in serves]), work)
        prom.wait_ready()
        d, x = 'instance="%s"' % demo.target, 'instance="%s"' % xid.target
        prom.wait_for('count(up{job="gpumon"} == 1) == %d' % len(serves), "every target up")
        print("%d targets up after %.1f s" % (len(serves), time.monotonic() - started),
              flush=True)

        # XIDs come at 3, 6 and 12 s of the xid scenario (GPU 0) and 8 s (GPU 1, with the ECC
        # step); wait for the last one, and for a few scrapes of history for increase().
        prom.wait_for('gpumon_gpu_xid_errors_total{%s,gpu="0",xid="119"} == 1' % x,
                      "XID 119 of the xid scenario")
        prom.wait_for('count_over_time(up{%s}[1m]) >= 4' % d, "four scrapes of demo")
        prom.wait_for('count_over_time(gpumon_training_steps_total{%s}[1m]) >= 3' % d,
                      "three scrapes of the training rank")
        for severity, gpu in (("critical", "1"), ("warning", "0")):
            prom.wait_for('ALERTS{alertname="GpumonXidError",alertstate="firing",severity="%s",'
                          'gpu="%s"}' % (severity, gpu), "the %s XID alert firing" % severity)

        # --- values against the scenarios -----------------------------------------------
        check(prom.scalar("gpumon_gpus{%s}" % d) == 8, "demo: gpumon_gpus 8", failures)
        check(prom.scalar("gpumon_gpus{%s}" % x) == 2, "xid: gpumon_gpus 2", failures)
        check(prom.scalar("count(gpumon_gpu_info{%s})" % d) == 8, "demo: 8 gpu_info", failures)
        check(prom.scalar("gpumon_simulated{%s}" % d) == 1, "demo: gpumon_simulated 1", failures)
        for serve in serves:
            inst = 'instance="%s"' % serve.target
            devices = scenario_devices(serve.scenario)
            check(len(devices) == prom.scalar("gpumon_gpus{%s}" % inst),
                  "%s: as many GPUs as the scenario" % serve.scenario, failures)
            for i, dev in enumerate(devices):
                sel = '%s,gpu="%d"' % (inst, i)
                got = prom.scalar("gpumon_gpu_memory_total_bytes{%s}" % sel)
                check(got == dev["memory_total_bytes"], "%s GPU %d: memory total %s, scenario %s"
                      % (serve.scenario, i, got, dev["memory_total_bytes"]), failures)
                used = dev["fields"].get("memory_used_bytes")
                if isinstance(used, int):
                    got = prom.scalar("gpumon_gpu_memory_used_bytes{%s}" % sel)
                    check(got == used, "%s GPU %d: memory used %s, scenario %s"
                          % (serve.scenario, i, got, used), failures)
                if "pci_bus_id" in dev:
                    check(prom.scalar('gpumon_gpu_info{%s,pci_bus_id="%s"}'
                                      % (sel, dev["pci_bus_id"])) == 1,
                          "%s GPU %d: pci_bus_id %s" % (serve.scenario, i, dev["pci_bus_id"]),
                          failures)
        lo = prom.scalar("min(min_over_time(gpumon_gpu_utilization_ratio{%s}[1m]))" % d)
        hi = prom.scalar("max(max_over_time(gpumon_gpu_utilization_ratio{%s}[1m]))" % d)
        check(lo is not None and hi is not None and 0.5 <= lo <= hi <= 1.0,
              "demo: utilization in 0.5-1.0 (scenario 58-99 %%), got %s-%s" % (lo, hi), failures)
        check(prom.scalar("count(gpumon_gpu_power_limit_watts{%s} == 700)" % d) == 8,
              "demo: power limit 700 W", failures)
        check(prom.scalar("count(gpumon_gpu_sm_clock_max_hertz{%s} == 1980e6)" % d) == 8,
              "demo: max SM clock 1980 MHz", failures)
        info = prom.query("gpumon_gpu_info{%s}" % d)
        gpus = sorted(int(s["metric"].get("gpu", -1)) for s in info)
        check(gpus == list(range(8)), "demo: gpu_info gpu labels 0-7, got %s" % gpus, failures)
        for s in info:
            m = s["metric"]
            ok = (m.get("name") == "NVIDIA H200" and m.get("driver_version") == "580.159.04"
                  and m.get("cuda_version") == "13.0" and m.get("pci_bus_id", "") != "")
            check(ok, "demo: gpu_info labels %s" % m, failures)
        check(len(prom.query('gpumon_gpu_clock_event_active{%s,gpu="5",'
                             'reason="sw_thermal_slowdown"}' % d)) == 1,
              "demo: GPU 5 has its sw_thermal_slowdown series", failures)
        for gpu, xid_no in (("0", "13"), ("0", "31"), ("0", "119"), ("1", "94")):
            v = prom.scalar('gpumon_gpu_xid_errors_total{%s,gpu="%s",xid="%s"}' % (x, gpu, xid_no))
            check(v == 1, "xid: GPU %s XID %s counted once, got %s" % (gpu, xid_no, v), failures)
        check(prom.scalar('gpumon_gpu_ecc_uncorrected_errors_total{%s,gpu="1"}' % x) == 1,
              "xid: GPU 1 uncorrected ECC 1", failures)

        # --- the training rank -----------------------------------------------------------
        t = '%s,rank="0",local_rank="0",gpu="0"' % d
        for serve in serves:
            check(prom.scalar('gpumon_training_ranks{instance="%s"}' % serve.target) == 1,
                  "%s: 1 training rank" % serve.scenario, failures)
        steps = prom.scalar("gpumon_training_steps_total{%s}" % t)
        check(steps is not None and steps >= 3, "training steps counted on GPU 0: %s" % steps,
              failures)
        mean = prom.scalar("rate(gpumon_training_step_seconds_sum{%s}[1m]) / "
                           "rate(gpumon_training_step_seconds_count{%s}[1m])" % (t, t))
        check(mean is not None and abs(mean - 0.2) < 1e-6, "mean step time 0.2 s: %s" % mean,
              failures)
        # Every 0.2 s step is in the (0.1, 0.25] bucket: the quantile interpolates within it,
        # aggregated across ranks as a fleet would.
        p90 = prom.scalar("histogram_quantile(0.9, sum by (le) "
                          "(rate(gpumon_training_step_seconds_bucket{%s}[1m])))" % d)
        check(p90 is not None and abs(p90 - 0.235) < 1e-6, "p90 step time 0.235 s: %s" % p90,
              failures)
        age = prom.scalar("time() - gpumon_training_last_step_timestamp_seconds{%s}" % t)
        check(age is not None and -5 < age < 600, "last step timestamp is recent: %s" % age,
              failures)
        check(prom.scalar("gpumon_training_allocated_bytes{%s}" % t) == 1 << 30,
              "allocator allocated bytes", failures)
        check(prom.scalar("gpumon_training_rank_connected{%s}" % t) == 1, "rank connected",
              failures)

        # --- one job on four nodes: job_id, and the gpumon-jobs rules across the instances --
        j = 'job_id="%s"' % JOB_ID
        for serve, (_, host, _) in zip(serves, NODES):
            system = json.loads(http_get(serve.base + "/api/v1/devices")[2]).get("system", {})
            check(system.get("hostname") == host, "%s plays %s (GPUMON_HOSTNAME): hostname %r"
                  % (serve.scenario, host, system.get("hostname")), failures)
        prom.wait_for("count(count by (instance) (gpumon_training_steps_total{%s})) == %d"
                      % (j, len(NODES)), "the job's steps from the four instances")
        check(prom.scalar("count(gpumon_training_steps_total{%s})" % j) == len(NODES),
              "every rank carries job_id %s" % JOB_ID, failures)
        prom.wait_for("job:gpumon_training_ranks_connected:count{%s} == %d" % (j, len(NODES)),
                      "the job's four connected ranks, one per serve")
        prom.wait_for("count(job_rank:gpumon_training_step_seconds:mean5m{%s}) == %d"
                      % (j, len(NODES)), "each rank's mean step time")
        prom.wait_for("job:gpumon_training_steps:rate5m{%s} > 0" % j, "the job's step rate")
        # One series per job across the instances: no instance, rank or gpu label left.
        for name in ("job:gpumon_training_ranks_connected:count",
                     "job:gpumon_training_step_seconds:median5m",
                     "job:gpumon_training_steps:rate5m"):
            labels = [s["metric"] for s in prom.query(name)]
            check(labels == [{"__name__": name, "job_id": JOB_ID}],
                  "%s: one series for the job across the instances, got %s" % (name, labels),
                  failures)
        # The ranks' 0.2, 0.2, 0.2 and 0.25 s steps: the median rank's 0.2 s.
        wait_value(prom, "job:gpumon_training_step_seconds:median5m{%s}" % j, 0.2,
                   "the job's median rank step time", failures)
        # The job's process on GPU 0 of each node, as each node reads it (gpumon_gpu_job_*).
        prom.wait_for('count(count by (instance) (gpumon_gpu_job_processes{%s,gpu="0"})) == %d'
                      % (j, len(NODES)), "the job's process on GPU 0 of each node")
        prom.wait_for("count(count by (instance) (gpumon_gpu_job_sm_utilization_ratio{%s})) == %d"
                      % (j, len(NODES)), "the driver's samples of the job's process on each node")
        check(prom.scalar("count(gpumon_gpu_job_memory_bytes{%s} == %d)" % (j, 8 << 30))
              == len(NODES), "the job's 8 GiB on GPU 0 of each node", failures)

        # --- OpenMetrics: Prometheus asks for it first, so it scraped that format ----------
        # Its metadata names a counter family without _total only when it parsed OpenMetrics.
        meta = prom.api("/api/v1/metadata")
        for name, kind in (("gpumon_gpu_xid_errors", "counter"),
                           ("gpumon_training_step_seconds", "histogram"),
                           ("gpumon_gpu_power_watts", "gauge")):
            got = meta.get(name, [{}])[0].get("type")
            check(got == kind, "OpenMetrics metadata: %s typed %s, want %s" % (name, got, kind),
                  failures)

        # --- nothing identifying ----------------------------------------------------------
        labels = prom.api("/api/v1/labels")
        check(not any(n.lower() in ("uuid", "serial") for n in labels),
              "no uuid/serial label without --uuid: %s" % labels, failures)
        for name in labels:
            for value in prom.api("/api/v1/label/%s/values" % name):
                bad = [m for m in SERIAL_MARKS + UUID_MARKS if m in value]
                check(not bad, "label %s=%r carries a serial or UUID" % (name, value), failures)
        for serve in serves:
            for path in ("/metrics", "/api/v1/devices", "/api/v1/current"):
                body = http_get(serve.base + path)[2].decode()
                bad = [m for m in SERIAL_MARKS + UUID_MARKS if m in body]
                check(not bad, "%s %s carries %s" % (serve.scenario, path, bad), failures)

        # --- every expression of the dashboards and the rules -------------------------------
        entries = dashboard_queries(JOB_ID)
        check(len(entries) >= 30, "dashboard_queries.py lists %d expressions" % len(entries),
              failures)
        job_entries = [e for e in entries if e.get("dashboard") == "gpumon-job"]
        check(len(job_entries) >= 20, "dashboard_queries.py lists %d expressions of the job "
              "dashboard" % len(job_entries), failures)
        # The job dashboard's overview over the four nodes: four ranks, the slowest (rank 3,
        # 0.25 s) 1.25 times the median rank's, the job's GPUs on four nodes.
        wait_value(prom, job_panel_expr(entries, "Ranks connected"), len(NODES),
                   "job dashboard: ranks connected", failures)
        wait_value(prom, job_panel_expr(entries, "Slowest rank / median"), 1.25,
                   "job dashboard: slowest rank / median", failures)
        per_node = prom.query(job_panel_expr(entries, "Nodes of the job", "C"))
        check(sorted(s["metric"].get("instance") for s in per_node)
              == sorted(s.target for s in serves)
              and all(float(s["value"][1]) == 1 for s in per_node),
              "job dashboard: one GPU of the job on each node: %s" % per_node, failures)
        with_data = 0
        for e in entries:
            where = e.get("alert") or e.get("record") or "%s %s/%s" % (
                e.get("dashboard", ""), e.get("panel") or e.get("name"), e.get("ref", ""))
            try:
                result = prom.query(e["expr"])
            except RuntimeError as err:
                check(False, "%s %s: does not run: %s" % (e["source"], where, err), failures)
                continue
            if e.get("condition"):
                continue  # returns data only while the alert condition holds
            with_data += bool(result)
            check(bool(result), "%s %s: no data for %s" % (e["source"], where, e["expr"]),
                  failures)
        print("%d expressions run, %d of them must return data and %d did"
              % (len(entries), sum(not e.get("condition") for e in entries), with_data))

        # --- the rules and the alerts they raise --------------------------------------------
        groups = prom.api("/api/v1/rules")["groups"]
        loaded = sorted({r["name"] for g in groups for r in g["rules"] if r["type"] == "alerting"})
        check(loaded == alert_names(RULES), "rules loaded %s, file has %s"
              % (loaded, alert_names(RULES)), failures)
        check(all(r.get("health") == "ok" for g in groups for r in g["rules"]),
              "every rule evaluates (health ok): %s" % [(r["name"], r.get("lastError"))
                                                       for g in groups for r in g["rules"]
                                                       if r.get("health") != "ok"], failures)
        alerts = prom.api("/api/v1/alerts")["alerts"]
        firing = {(a["labels"]["alertname"], a["labels"].get("severity"), a["labels"].get("gpu"))
                  for a in alerts if a["state"] == "firing"}
        print("firing: %s" % sorted(firing, key=str))
        check(("GpumonXidError", "critical", "1") in firing, "XID 94 alert (critical, GPU 1)",
              failures)
        check(("GpumonXidError", "warning", "0") in firing, "XID 13/31/119 alert (warning, GPU 0)",
              failures)
        # increase() sees the ECC step only when Prometheus scraped the 0 before it (at 8 s).
        if prom.scalar('min_over_time(gpumon_gpu_ecc_uncorrected_errors_total{%s,gpu="1"}[5m])'
                       % x) == 0:
            prom.wait_for('ALERTS{alertname="GpumonUncorrectedEccErrors",alertstate="firing"}',
                          "the uncorrected ECC alert")
        else:
            print("note: Prometheus started after the ECC step; its alert is not checked")
        # The guard's counter appeared at 1, which increase() cannot see; the rule's second
        # arm must.
        prom.wait_for('ALERTS{alertname="GpumonOomGuardSplit",alertstate="firing",rank="0"}',
                      "the OOM guard's split alert")
        check(not any(a[0] == "GpumonExporterDown" for a in firing), "exporter not down",
              failures)
    finally:
        stepping.set()
        if stepper:
            stepper.join(5)
        for holder in holders:
            holder.stop()
        stop_all(prom, serves, work, started, failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(prometheus_test_main(__doc__, run))
