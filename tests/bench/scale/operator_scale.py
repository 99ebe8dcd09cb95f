#!/usr/bin/env python3
"""Helper of operator_scale.sh: talks to the sandbox's API server directly (admin token).

  operator_scale.py submit  --kind slurmjob|pod --namespace NS --count N --ranks R --gpus G
                            --out FILE [--threads 16] [--timeout 300] [--rate R [--load-pct P]]
      Watches the namespace's pods, creates N SlurmJobs (R nodes x G GPUs each) or N plain pods
      (G GPUs, schedulerName default-scheduler) on --threads connections, and waits until
      N*R (or N) pods are bound, then (SlurmJobs) until every job is RUNNING. Writes the
      timings to FILE (JSON), with the API server's own request counts (apiserver_request_total
      from its /metrics) from before the first create to that point, by verb and resource, less
      this helper's own requests. With --rate, open-loop arrivals: object i is sent at R objects
      a second from the first (i / R seconds after it), whatever became of the ones before, so
      each job's submit -> all bound latency is measured under that load (--load-pct: the share
      of measured capacity R stands for, recorded with the figures).
  operator_scale.py cleanup --namespace NS [--timeout 120]
      Deletes the namespace's SlurmJobs, then its pods with gracePeriodSeconds 0 (removing their
      finalizers: the operator is stopped by then); waits until no SlurmJob, pod, Service or
      NetworkPolicy is left.
  operator_scale.py annotate FILE [--label L] [--pid PID] [--metrics-url URL] [--log LOG]
      Adds to a phase's FILE: a label, the operator's VmRSS/VmHWM, its /metrics (histogram
      means, a few counters) and its log's cycle lines (slowest cycle, warning/error lines).
  operator_scale.py report [--nodes N] FILE...
      Prints the summary of the phases' JSON files (written by operator_scale.sh), and last one
      line of JSON to compare runs by: nodes, pods/s of each side and their ratio, API writes
      per pod.

Environment: KUBESLURM_APISERVER, KUBESLURM_CA_FILE, KUBESLURM_TOKEN (`sandbox env`).
Benchmarks measure; nothing here asserts a time.
"""
import argparse
import http.client
import json
import os
import queue
import re
import ssl
import sys
import threading
import time
import urllib.parse
import urllib.request
from datetime import datetime, timezone

SJ_PATH = "/apis/kubeslurm.io/v1alpha1/namespaces/{ns}/slurmjobs"
POD_PATH = "/api/v1/namespaces/{ns}/pods"
JOB_LABEL = "kubeslurm.io/job-name"
BENCH_LABEL = "kubeslurm-bench"
WRITE_VERBS = ("POST", "PUT", "PATCH", "DELETE", "APPLY")
# Written by the node simulator (pod and node status, node leases) and kube-controller-manager
# (endpoints, a new namespace's CA ConfigMap and tokens): not by a scheduler, in either phase.
# Leases are the operator's leader election too, a few writes a second whatever the load.
BACKGROUND_RESOURCES = ("pods/status", "nodes/status", "nodes", "leases", "endpoints",
                        "endpointslices", "configmaps", "serviceaccounts/token")
REQUEST_RE = re.compile(r'^apiserver_request_total\{([^}]*)\} ([0-9.e+]+)$')
LABEL_RE = re.compile(r'(\w+)="([^"]*)"')


class Api:
    def __init__(self):
        url = urllib.parse.urlsplit(os.environ["KUBESLURM_APISERVER"])
        self.host, self.port = url.hostname, url.port or 443
        self.ctx = ssl.create_default_context(cafile=os.environ["KUBESLURM_CA_FILE"])
        self.headers = {
            "Authorization": "Bearer " + os.environ["KUBESLURM_TOKEN"],
            "Accept": "application/json",
            "Content-Type": "application/json",
        }
        self.local = threading.local()

    def connect(self, timeout=60):
        return http.client.HTTPSConnection(self.host, self.port, context=self.ctx,
                                           timeout=timeout)

    def request(self, method, path, body=None, content_type=None):
        """One request on this thread's kept-alive connection; returns (status, parsed body)."""
        headers = dict(self.headers)
        if content_type:
            headers["Content-Type"] = content_type
        for attempt in range(2):
            conn = getattr(self.local, "conn", None)
            if conn is None:
                conn = self.local.conn = self.connect()
            try:
                conn.request(method, path, body=None if body is None else json.dumps(body),
                             headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                return resp.status, (json.loads(data) if data else None)
            except (http.client.HTTPException, OSError):
                conn.close()
                self.local.conn = None
                if attempt:
                    raise
        raise RuntimeError("unreachable")


def api_request_counts(api):
    """apiserver_request_total summed by "VERB resource[/subresource]"."""
    conn = api.connect()
    conn.request("GET", "/metrics", headers={"Authorization": api.headers["Authorization"]})
    resp = conn.getresponse()
    text = resp.read().decode()
    conn.close()
    if resp.status != 200:
        return None
    counts = {}
    for line in text.splitlines():
        m = REQUEST_RE.match(line)
        if not m:
            continue
        labels = dict(LABEL_RE.findall(m.group(1)))
        resource = labels.get("resource", "")
        if labels.get("subresource"):
            resource += "/" + labels["subresource"]
        key = f"{labels.get('verb', '')} {resource}"
        counts[key] = counts.get(key, 0) + float(m.group(2))
    return counts


def cpu_seconds(pids):
    """utime + stime of each named process (/proc/PID/stat), in seconds."""
    tick = os.sysconf("SC_CLK_TCK")
    out = {}
    for name, pid in pids.items():
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            out[name] = (int(fields[11]) + int(fields[12])) / tick
        except (OSError, IndexError, ValueError):
            pass
    return out


def request_delta(before, after, own):
    """What the phase cost the API server, less this helper's own requests (`own`)."""
    if before is None or after is None:
        return None
    delta = {}
    for key, value in after.items():
        d = value - before.get(key, 0) - own.get(key, 0)
        if d > 0:
            delta[key] = int(round(d))
    return dict(sorted(delta.items()))


# Who reported an event: the operator (event_recorder.cc's reportingController) or kube-scheduler.
SCHEDULER_EVENT_SOURCES = ("kubeslurm.io/operator", "kubeslurm-operator", "default-scheduler")


def scheduler_events(items):
    """The scheduler's own event writes among a namespace's events: a POST per event object, a
    PATCH per repeat the recorder folded into it (its count). The API server's request counts
    have no client label, so its events/POST counts every component's events in every namespace
    (the nodes' registration, the endpoint controller's warnings) as the scheduler's."""
    posts = patches = 0
    for e in items:
        # core/v1 names the reporter reportingComponent; events.k8s.io (kube-scheduler's) is
        # listed here with it, and older recorders fill only source.component.
        sources = (e.get("reportingComponent"), e.get("reportingController"),
                   (e.get("source") or {}).get("component"))
        if not any(s in SCHEDULER_EVENT_SOURCES for s in sources if s):
            continue
        posts += 1
        patches += max(0, e.get("count", 1) - 1)
    return posts, patches


def write_summary(delta, pods, own_events=None):
    """Writes per pod: all of them, and those of the scheduler's side (not BACKGROUND_RESOURCES;
    its events, when `own_events` (posts, patches) is given, counted from the events it reported
    rather than from the API server's events requests of every client)."""
    if delta is None or not pods:
        return None
    writes = {k: v for k, v in delta.items() if k.split(" ")[0] in WRITE_VERBS}
    scheduler = {k: v for k, v in writes.items() if k.split(" ")[1] not in BACKGROUND_RESOURCES}
    if own_events is not None:
        scheduler.pop("POST events", None)
        scheduler.pop("PATCH events", None)
        posts, patches = own_events
        if posts:
            scheduler["POST events"] = posts
        if patches:
            scheduler["PATCH events"] = patches
        scheduler = dict(sorted(scheduler.items()))
    reads = {k: v for k, v in delta.items() if k.split(" ")[0] in ("GET", "LIST")}
    return {
        "scheduler_writes": scheduler,
        "scheduler_writes_per_pod": round(sum(scheduler.values()) / pods, 2),
        "all_writes_per_pod": round(sum(writes.values()) / pods, 2),
        "reads": reads,
    }


def parse_time(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc).timestamp()


def percentile(values, p):
    """Nearest-rank percentile (p in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))  # ceil
    return ordered[int(rank) - 1]


class PodWatch(threading.Thread):
    """Follows the namespace's pods on this machine's clock: which are bound and live now (a
    nodeName, no deletionTimestamp, not Failed), and when each job last became fully bound.
    Done when `expected` pods are bound and live at the same time."""

    def __init__(self, api, ns, selector, expected, per_job):
        super().__init__(daemon=True)
        self.api, self.ns, self.selector = api, ns, selector
        self.expected, self.per_job = expected, per_job
        self.lock = threading.Lock()
        self.live = {}         # pod name -> job key
        self.first_bound = {}  # pod name -> first time seen bound
        self.job_live = {}     # job key -> live bound pods
        self.job_full_at = {}  # job key -> latest time its live bound pods reached per_job
        self.lost = {}         # why bound pods stopped counting -> how many
        self.done_at = None
        self.done = threading.Event()
        self.ready = threading.Event()
        self.error = None
        self.relists = 0

    def _set(self, name, job, bound, why, now):
        if bound and name not in self.live:
            self.live[name] = job
            self.first_bound.setdefault(name, now)
            self.job_live[job] = self.job_live.get(job, 0) + 1
            if self.job_live[job] == self.per_job:
                self.job_full_at[job] = now
        elif not bound and name in self.live:
            job = self.live.pop(name)
            self.job_live[job] -= 1
            self.lost[why] = self.lost.get(why, 0) + 1
        self.check(now)

    def check(self, now):
        if self.done_at is None and len(self.live) >= self.expected:
            self.done_at = now
            self.done.set()

    def _note(self, pod, now, deleted=False):
        md, status = pod["metadata"], pod.get("status", {})
        job = md.get("labels", {}).get(JOB_LABEL, md["name"])
        why = None
        if deleted:
            why = "deleted"
        elif md.get("deletionTimestamp"):
            why = "terminating"
        elif status.get("phase") == "Failed":
            why = "Failed " + status.get("reason", "")
        bound = bool(pod.get("spec", {}).get("nodeName")) and why is None
        with self.lock:
            self._set(md["name"], job, bound, why, now)

    def run(self):
        try:
            while not self.done.is_set():
                q = urllib.parse.urlencode({"labelSelector": self.selector})
                status, listed = self.api.request("GET", POD_PATH.format(ns=self.ns) + "?" + q)
                if status != 200:
                    raise RuntimeError(f"list pods: HTTP {status}")
                now = time.time()
                with self.lock:
                    names = {p["metadata"]["name"] for p in listed["items"]}
                    for name in [n for n in self.live if n not in names]:
                        self._set(name, None, False, "deleted", now)
                for pod in listed["items"]:
                    self._note(pod, now)
                rv = listed["metadata"]["resourceVersion"]
                q = urllib.parse.urlencode({"labelSelector": self.selector, "watch": "1",
                                            "resourceVersion": rv, "timeoutSeconds": "900",
                                            "allowWatchBookmarks": "true"})
                conn = self.api.connect(timeout=None)
                conn.request("GET", POD_PATH.format(ns=self.ns) + "?" + q,
                             headers=self.api.headers)
                resp = conn.getresponse()
                if resp.status != 200:
                    raise RuntimeError(f"watch pods: HTTP {resp.status}")
                self.ready.set()
                while not self.done.is_set():
                    line = resp.readline()
                    if not line:
                        break
                    now = time.time()
                    event = json.loads(line)
                    if event.get("type") in ("ADDED", "MODIFIED"):
                        self._note(event["object"], now)
                    elif event.get("type") == "DELETED":
                        self._note(event["object"], now, deleted=True)
                    elif event.get("type") == "ERROR":
                        break  # e.g. 410 Gone: list again
                conn.close()
                if not self.done.is_set():
                    self.relists += 1
        except Exception as e:  # reported by the caller
            self.error = repr(e)
            self.ready.set()
            self.done.set()


def slurmjob(name, ranks, gpus, sleep):
    return {
        "apiVersion": "kubeslurm.io/v1alpha1",
        "kind": "SlurmJob",
        "metadata": {"name": name, "labels": {BENCH_LABEL: "operator"}},
        "spec": {"jobName": name, "user": "bench", "nodes": ranks, "gpusPerNode": gpus,
                 "script": f"#!/bin/sh\nsleep {sleep}\n"},
    }


def plain_pod(name, gpus, sleep):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": {BENCH_LABEL: "kube-scheduler"}},
        "spec": {
            "schedulerName": "default-scheduler",
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 0,
            "containers": [{
                "name": "main", "image": "busybox", "command": ["sleep", str(sleep)],
                "resources": {"limits": {"nvidia.com/gpu": str(gpus)}},
            }],
        },
    }


def cmd_submit(a):
    api = Api()
    ns = a.namespace
    if a.kind == "slurmjob":
        selector, expected = JOB_LABEL, a.count * a.ranks
        path = SJ_PATH.format(ns=ns)
        objects = [slurmjob(f"g-{i:05d}", a.ranks, a.gpus, a.sleep) for i in range(a.count)]
    else:
        selector, expected = BENCH_LABEL, a.count
        path = POD_PATH.format(ns=ns)
        objects = [plain_pod(f"p-{i:05d}", a.gpus, a.sleep) for i in range(a.count)]
    per_job = a.ranks if a.kind == "slurmjob" else 1

    watch = PodWatch(api, ns, selector, expected, per_job)
    watch.start()
    watch.ready.wait(60)
    if watch.error:
        sys.exit(f"watch: {watch.error}")

    cpu_pids = dict(item.split("=", 1) for item in a.cpu.split(",") if "=" in item) if a.cpu else {}
    cpu_before = cpu_seconds(cpu_pids)
    counts_before = api_request_counts(api)
    work = queue.Queue()
    for i, o in enumerate(objects):
        work.put((i, o))
    posted = {}  # name -> (sent, returned) on this machine's clock
    failures = []
    lock = threading.Lock()

    def creator():
        while True:
            try:
                i, o = work.get_nowait()
            except queue.Empty:
                return
            if a.rate > 0:  # open loop: object i goes out i / rate seconds after the first
                time.sleep(max(0.0, t0 + i / a.rate - time.time()))
            sent = time.time()
            try:
                status, body = api.request("POST", path, o)
            except Exception as e:
                status, body = 0, {"message": repr(e)}
            returned = time.time()
            with lock:
                if status == 201:
                    posted[o["metadata"]["name"]] = (sent, returned)
                else:
                    failures.append(f"{o['metadata']['name']}: HTTP {status} "
                                    f"{(body or {}).get('message', '')}")

    t0 = time.time()
    threads = [threading.Thread(target=creator) for _ in range(a.threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    t_created = time.time()
    if failures:
        print(f"{len(failures)} creates failed, e.g. {failures[0]}", file=sys.stderr)
    expected = min(expected, len(posted) * per_job)
    with watch.lock:
        watch.expected = expected
        watch.check(time.time())
    finished = watch.done.wait(a.timeout)
    t_end = time.time()
    if watch.error:
        print(f"watch: {watch.error}", file=sys.stderr)
    # A gang's life as the issue counts it ends at RUNNING: the operator's status write after
    # the kubelets report the pods Running. Polled (one LIST a second, subtracted below).
    own = {("POST " + ("slurmjobs" if a.kind == "slurmjob" else "pods")): len(posted)}
    t_running = None
    if a.kind == "slurmjob" and finished:
        deadline = time.time() + a.timeout
        while time.time() < deadline:
            status, jobs = api.request("GET", path)
            own["LIST slurmjobs"] = own.get("LIST slurmjobs", 0) + 1
            items = jobs.get("items", []) if status == 200 else []
            if items and all(j.get("status", {}).get("state") == "RUNNING" for j in items):
                t_running = time.time()
                break
            time.sleep(1)
    counts_after = api_request_counts(api)
    cpu_after = cpu_seconds(cpu_pids)
    requests = request_delta(counts_before, counts_after, own)
    window = time.time() - t0
    # CPU seconds each process used from the first create to the end of the phase, and the
    # cores that makes on average: an API server near the machine's cores is the limit.
    cpu = {name: {"seconds": round(cpu_after[name] - cpu_before[name], 2),
                  "cores": round((cpu_after[name] - cpu_before[name]) / window, 2)}
           for name in cpu_before if name in cpu_after}

    with watch.lock:
        live = len(watch.live)
        t_last = watch.done_at or t_end
        first = min(watch.first_bound.values()) if watch.first_bound else None
        # Per job: POST sent -> the last time its pods became all bound (ms, this machine's
        # clock), for the jobs fully bound at the end.
        lat = [watch.job_full_at[j] - posted[j][0] for j in posted
               if watch.job_live.get(j, 0) >= per_job and j in watch.job_full_at]
        lost = dict(watch.lost)
        ever_bound = len(watch.first_bound)

    # The same from the API server's timestamps (seconds resolution): creationTimestamp of the
    # SlurmJob (or pod) -> the latest PodScheduled lastTransitionTime of its pods.
    status, pods = api.request("GET", POD_PATH.format(ns=ns) + "?" +
                               urllib.parse.urlencode({"labelSelector": selector}))
    sched_by_job, created_by_job, first_sched = {}, {}, None
    for pod in pods.get("items", []) if status == 200 else []:
        md = pod["metadata"]
        job = md.get("labels", {}).get(JOB_LABEL, md["name"])
        if a.kind == "pod":
            created_by_job[job] = parse_time(md["creationTimestamp"])
        for c in pod.get("status", {}).get("conditions", []):
            if c.get("type") == "PodScheduled" and c.get("status") == "True":
                ts = parse_time(c["lastTransitionTime"])
                sched_by_job[job] = max(ts, sched_by_job.get(job, 0))
                first_sched = ts if first_sched is None else min(first_sched, ts)
    if a.kind == "slurmjob":
        status, jobs = api.request("GET", path)
        for j in jobs.get("items", []) if status == 200 else []:
            created_by_job[j["metadata"]["name"]] = parse_time(j["metadata"]["creationTimestamp"])
    server_lat = [sched_by_job[j] - created_by_job[j] for j in created_by_job if j in sched_by_job]

    # The namespace's events by type and reason (Warnings tell why a gang was rolled back).
    events = {}
    status, listed = api.request("GET", f"/api/v1/namespaces/{ns}/events")
    listed_events = listed.get("items", []) if status == 200 else []
    for e in listed_events:
        key = f"{e.get('type', '')} {e.get('reason', '')}"
        events[key] = events.get(key, 0) + e.get("count", 1)

    wall = t_last - t0
    out = {
        "kind": a.kind, "namespace": ns, "objects": len(objects), "created": len(posted),
        "create_failures": len(failures), "pods_expected": expected,
        "pods_bound": live, "complete": bool(finished and live >= expected),
        "pods_ever_bound": ever_bound, "bound_pods_lost": lost, "events": events,
        "create_s": round(t_created - t0, 3),
        "submit_to_all_bound_s": round(wall, 3),
        "after_creates_to_all_bound_s": round(max(0.0, t_last - t_created), 3),
        "pods_per_s": round(live / wall, 1) if wall > 0 else None,
        "first_bound_after_s": round(first - t0, 3) if first else None,
        "job_latency_ms": {
            "n": len(lat),
            "p50": round(percentile(lat, 50) * 1e3) if lat else None,
            "p99": round(percentile(lat, 99) * 1e3) if lat else None,
            "max": round(max(lat) * 1e3) if lat else None,
        },
        "job_latency_server_s": {
            "n": len(server_lat),
            "p50": percentile(server_lat, 50) if server_lat else None,
            "p99": percentile(server_lat, 99) if server_lat else None,
            "max": max(server_lat) if server_lat else None,
        },
        "submit_to_all_running_s": round(t_running - t0, 3) if t_running else None,
        "api_requests": requests,
        "cpu": cpu,
        "cpu_window_s": round(window, 3),
        "writes": write_summary(requests, live, scheduler_events(listed_events)),
        "watch_relists": watch.relists,
        "watch_error": watch.error,
        "rate_per_s": a.rate or None,
        "load_pct": a.load_pct,
    }
    with open(a.out, "w") as f:
        json.dump(out, f)
    print(json.dumps(out))
    return 0 if out["complete"] else 1


def cmd_cleanup(a):
    api = Api()
    ns = a.namespace
    deadline = time.time() + a.timeout
    grace0 = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0,
              "propagationPolicy": "Background"}
    while time.time() < deadline:
        # Again each round: a collection delete that outlives the API server's request timeout
        # (200 jobs on a loaded machine) ends part-way, and what it left is never deleted.
        api.request("DELETE", SJ_PATH.format(ns=ns), {"kind": "DeleteOptions", "apiVersion": "v1",
                                                      "propagationPolicy": "Background"})
        status, jobs = api.request("GET", SJ_PATH.format(ns=ns) + "?limit=1")
        if status == 404 or not jobs.get("items"):
            break
        time.sleep(1)
    while time.time() < deadline:
        api.request("DELETE", POD_PATH.format(ns=ns), grace0)
        status, pods = api.request("GET", POD_PATH.format(ns=ns))
        if status == 200 and not pods.get("items"):
            break
        # The operator is stopped: nobody releases the rank pods' job-tracking finalizer.
        for pod in (pods or {}).get("items", []):
            if pod["metadata"].get("finalizers"):
                api.request("PATCH", POD_PATH.format(ns=ns) + "/" + pod["metadata"]["name"],
                            {"metadata": {"finalizers": None}}, "application/merge-patch+json")
        time.sleep(1)
    # The garbage collector removes the jobs' Services and NetworkPolicies (owner references)
    # after the jobs: waited for, so that its deletes do not land in the next phase's figures.
    while time.time() < deadline:
        left = 0
        for path in (f"/api/v1/namespaces/{ns}/pods",
                     f"/api/v1/namespaces/{ns}/services",
                     f"/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies"):
            status, listed = api.request("GET", path + "?limit=1")
            left += len((listed or {}).get("items", [])) if status == 200 else 0
        if left == 0:
            return 0
        time.sleep(0.5)
    left = []
    for kind, path in (("slurmjobs", SJ_PATH.format(ns=ns)), ("pods", POD_PATH.format(ns=ns)),
                       ("services", f"/api/v1/namespaces/{ns}/services"),
                       ("networkpolicies",
                        f"/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies")):
        status, listed = api.request("GET", path)
        items = (listed or {}).get("items", []) if status == 200 else []
        if items:
            first = items[0]["metadata"]
            left.append(f"{len(items)} {kind} (e.g. {first.get('name')}, finalizers "
                        f"{first.get('finalizers')}, deleting {'deletionTimestamp' in first})")
    print(f"cleanup of {ns}: objects left after {a.timeout} s: {'; '.join(left)}",
          file=sys.stderr)
    return 1


def read_metrics(url):
    text = urllib.request.urlopen(url, timeout=10).read().decode()
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        key, _, value = line.rpartition(" ")
        try:
            samples[key] = float(value)
        except ValueError:
            pass

    def hist(name):
        s = samples.get(name + "_sum")
        c = samples.get(name + "_count")
        return {"count": c, "sum_s": s, "mean_ms": round(s / c * 1e3, 2) if c else None}

    def total(prefix):
        return {k: v for k, v in samples.items() if k.startswith(prefix)}

    return {
        "cycle": hist("kubeslurm_scheduler_cycle_duration_seconds"),
        "plan": hist("kubeslurm_scheduler_plan_duration_seconds"),
        "gang_admission": hist("kubeslurm_gang_admission_duration_seconds"),
        "cycles_total": total("kubeslurm_scheduler_cycles_total"),
        "gang_admissions_total": total("kubeslurm_gang_admissions_total"),
        "api_errors_total": total("kubeslurm_api_errors_total"),
        "budget_exhausted_total": total("kubeslurm_scheduler_budget_exhausted_total"),
        "jobs_started_total": total("kubeslurm_jobs_started_total"),
    }


CYCLE_RE = re.compile(r"cycle ([0-9.]+) ms \(plan ([0-9.]+) ms\)")


def log_stats(path):
    cycles, worst, worst_plan, warnings = 0, 0.0, 0.0, 0
    with open(path, errors="replace") as f:
        for line in f:
            m = CYCLE_RE.search(line)
            if m:
                cycles += 1
                worst = max(worst, float(m.group(1)))
                worst_plan = max(worst_plan, float(m.group(2)))
            fields = line.split(" ", 2)  # "2024-01-01T00:00:00.000Z W text" (%L: I W E C)
            if len(fields) > 1 and fields[1] in ("W", "E", "C"):
                warnings += 1
    return {"cycles": cycles, "max_cycle_ms": worst, "max_plan_ms": worst_plan,
            "warnings": warnings}


def cmd_annotate(a):
    with open(a.file) as f:
        out = json.load(f)
    if a.label:
        out["label"] = a.label
    if a.pid:
        rss = {}
        with open(f"/proc/{a.pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    rss[key] = value.strip()
        out["rss"] = rss
    if a.metrics_url:
        out["metrics"] = read_metrics(a.metrics_url)
    if a.log:
        out["log"] = log_stats(a.log)
    with open(a.file, "w") as f:
        json.dump(out, f)
    return 0


def cmd_report(a):
    phases = []
    for path in a.files:
        with open(path) as f:
            phases.append(json.load(f))
    baseline = next((p for p in phases if p.get("kind") == "pod"), None)
    print()
    print("== operator scale benchmark ==")
    for p in phases:
        label = p.get("label", p.get("kind"))
        lat, srv = p["job_latency_ms"], p["job_latency_server_s"]
        print(f"{label}:")
        if p.get("rate_per_s"):
            per = p["pods_expected"] / max(p["objects"], 1)
            print(f"  open-loop arrivals: {p['rate_per_s']:.2f} objects/s = "
                  f"{p['rate_per_s'] * per:.1f} pods/s offered"
                  + (f" ({p['load_pct']:g}% of the first operator phase's pods/s)"
                     if p.get("load_pct") is not None else ""))
        print(f"  {p['pods_bound']}/{p['pods_expected']} pods bound"
              f"{'' if p['complete'] else ' (INCOMPLETE)'}; create {p['create_s']} s "
              f"({p['created']} objects, {p['create_failures']} failed); submit -> all bound "
              f"{p['submit_to_all_bound_s']} s = {p['pods_per_s']} pods/s "
              f"(first bound after {p['first_bound_after_s']} s; last bound "
              f"{p['after_creates_to_all_bound_s']} s after the last create)")
        if p.get("bound_pods_lost") or p.get("pods_ever_bound", 0) > p["pods_bound"]:
            print(f"  {p.get('pods_ever_bound')} pods were bound at some point; bound pods that "
                  f"stopped counting: {p.get('bound_pods_lost')}")
        warnings = {k: v for k, v in p.get("events", {}).items() if not k.startswith("Normal ")}
        if warnings:
            print("  warning events: " + ", ".join(f"{k} {v}" for k, v in warnings.items()))
        unit = "job" if p["kind"] == "slurmjob" else "pod"
        print(f"  per {unit}: POST -> all its pods bound (watch, ms): p50 {lat['p50']} p99 {lat['p99']}"
              f" max {lat['max']} (n {lat['n']}); server timestamps (1 s resolution): "
              f"p50 {srv['p50']} p99 {srv['p99']} max {srv['max']} s")
        if baseline is not None and p is not baseline and p["pods_per_s"] and baseline["pods_per_s"]:
            print(f"  ratio pods/s vs kube-scheduler (same run): "
                  f"{p['pods_per_s'] / baseline['pods_per_s']:.2f}x")
        w = p.get("writes")
        if w:
            print(f"  API writes per pod, submit -> {'all RUNNING' if p['kind'] == 'slurmjob' else 'all bound'}"
                  f" (API server's counts): {w['scheduler_writes_per_pod']} by the scheduler's side"
                  f" ({', '.join(f'{k} {v}' for k, v in w['scheduler_writes'].items())});"
                  f" {w['all_writes_per_pod']} with the node simulator's and controllers'")
            if w["reads"]:
                print("  reads: " + ", ".join(f"{k} {v}" for k, v in w["reads"].items()))
        if p.get("cpu"):
            per = ""
            if "operator" in p["cpu"] and p["pods_bound"]:
                per = (f"; operator {p['cpu']['operator']['seconds'] / p['pods_bound'] * 1000:.1f}"
                       f" CPU s per 1,000 pods")
            print(f"  CPU over {p['cpu_window_s']} s (seconds, average cores): " +
                  ", ".join(f"{k} {v['seconds']} ({v['cores']})" for k, v in p["cpu"].items()) + per)
        if p.get("submit_to_all_running_s"):
            print(f"  submit -> all RUNNING {p['submit_to_all_running_s']} s")
        if "rss" in p:
            print(f"  operator RSS: VmRSS {p['rss'].get('VmRSS')}, VmHWM {p['rss'].get('VmHWM')}")
        m = p.get("metrics")
        if m:
            print(f"  metrics: cycle mean {m['cycle']['mean_ms']} ms (n {m['cycle']['count']:.0f}),"
                  f" plan mean {m['plan']['mean_ms']} ms (n {m['plan']['count']:.0f}),"
                  f" gang admission mean {m['gang_admission']['mean_ms']} ms"
                  f" (n {m['gang_admission']['count']:.0f})")
            extra = {**m["gang_admissions_total"], **m["api_errors_total"],
                     **m["budget_exhausted_total"]}
            if extra:
                print("  counters: " + ", ".join(f"{k} {v:g}" for k, v in extra.items()))
        if "log" in p:
            lg = p["log"]
            print(f"  log: {lg['cycles']} cycle lines, slowest {lg['max_cycle_ms']} ms "
                  f"(plan {lg['max_plan_ms']} ms), {lg['warnings']} warning/error lines")
    print("JSON " + json.dumps(phases))
    # One line to compare runs by. The default (create) placement's first phase is the operator's
    # figure; what this benchmark does not measure yet is null.
    operator = next((p for p in phases
                     if p.get("kind") == "slurmjob" and not p.get("rate_per_s")), None)
    at_half = next((p for p in phases if p.get("kind") == "slurmjob" and p.get("load_pct") == 50),
                   None)
    summary = {
        "nodes": a.nodes,
        "ratio_vs_kube_scheduler": (round(operator["pods_per_s"] / baseline["pods_per_s"], 3)
                                    if operator and baseline and operator["pods_per_s"]
                                    and baseline["pods_per_s"] else None),
        "operator_pods_per_s": operator["pods_per_s"] if operator else None,
        "kube_scheduler_pods_per_s": baseline["pods_per_s"] if baseline else None,
        "writes_per_pod": ((operator.get("writes") or {}).get("scheduler_writes_per_pod")
                           if operator else None),
        "kube_scheduler_writes_per_pod": ((baseline.get("writes") or {})
                                          .get("scheduler_writes_per_pod")
                                          if baseline else None),
        "p99_bound_ms_at_50pct": at_half["job_latency_ms"]["p99"] if at_half else None,
        "rss_mib_5k_nodes_50k_jobs": None,
    }
    print(json.dumps(summary))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("submit")
    s.add_argument("--kind", choices=["slurmjob", "pod"], required=True)
    s.add_argument("--namespace", required=True)
    s.add_argument("--count", type=int, required=True)
    s.add_argument("--ranks", type=int, default=1)
    s.add_argument("--gpus", type=int, default=8)
    s.add_argument("--sleep", type=int, default=3600)
    s.add_argument("--threads", type=int, default=16)
    s.add_argument("--timeout", type=float, default=300)
    s.add_argument("--out", required=True)
    s.add_argument("--cpu", help="NAME=PID,...: CPU seconds each used during the phase")
    s.add_argument("--rate", type=float, default=0,
                   help="objects per second, open loop (0: as fast as the threads go)")
    s.add_argument("--load-pct", type=float, help="the share of capacity --rate stands for")
    c = sub.add_parser("cleanup")
    c.add_argument("--namespace", required=True)
    c.add_argument("--timeout", type=float, default=120)
    n = sub.add_parser("annotate")
    n.add_argument("file")
    n.add_argument("--label")
    n.add_argument("--pid", help="the operator: VmRSS/VmHWM from /proc/PID/status")
    n.add_argument("--metrics-url")
    n.add_argument("--log", help="the operator's log: cycle lines, warnings")
    r = sub.add_parser("report")
    r.add_argument("--nodes", type=int)
    r.add_argument("files", nargs="+")
    a = p.parse_args()
    return {"submit": cmd_submit, "cleanup": cmd_cleanup, "annotate": cmd_annotate,
            "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
