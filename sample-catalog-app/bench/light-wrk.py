#!/usr/bin/env python3
"""What the starter adds on a light endpoint, measured from outside.

Starts OrdersBenchApp (the README's quick start: POST /orders answers from memory,
POST /orders/db inserts one row into PostgreSQL first) in a JVM of its own per variant,
drives it with wrk (16 connections), a fresh UUIDv7 key per request against no key on the
same endpoint, in phases that alternate AB BA, and reads the CPU of the application's
JVM (all of it: GC and JIT included) and of the store servers' processes (postgres,
redis-server) from /proc before and after each phase.

Usage, from sample-catalog-app, after building the test classpath (bench-r2dbc: PostgreSQL's R2DBC
driver and pool, which the r2dbc variants need):
  ../mvnw -o -q -pl sample-catalog-app -am -DskipTests -P'!nullaway,bench-r2dbc' test-compile \
      dependency:build-classpath -Dmdep.outputFile=target/cp.txt -Dmdep.includeScope=test
  python3 bench/light-wrk.py [--variants V,V] [--seconds 5] [--pairs 3] [--warmup 15] [--keyed-warmup 40] \
      [--connections 16] [--out FILE] [--jfr DIR]

A variant is [webflux/]endpoint:store/mode[/atomic|/dedicated|/nonatomic][@size], e.g.
orders:memory/lease, orders:redis/record-after-success, orders-db:postgresql/record-after-success/atomic,
orders:redis/lease@8k, orders:redis/lease@8k+raw (answers stored undeflated by every store),
orders:redis/lease@8k+deflate (deflated from 256 bytes by every store; by default only the JDBC and R2DBC stores deflate),
orders-db:postgresql/lease/atomic+durable, webflux/orders-db:r2dbc/lease+durable (every reservation waits for its WAL
flush: reserve-asynchronous-commit=off, the store's asynchronous commit of an atomic run's reservation off),
webflux/orders:redis/lease (the same controller on WebFlux). The size is the request and the answer: @40 a 200-byte order answered
in about 40 bytes, @1k a 200-byte one answered in about 1 KB, @8k a 2-KB one answered in about
8 KB; without one, the 30-byte order answered in 40 bytes of the earlier runs (only those rows
give the application's own insert).
postgresql/.../atomic keeps the records on the application's DataSource (atomic
completion, the default there); /dedicated gives the store a pool of its own on the same
server.
r2dbc is the R2DBC store on WebFlux only (webflux/orders:r2dbc/lease, webflux/orders-db:r2dbc/lease):
Boot's spring.r2dbc.* ConnectionFactory (pooled) on the same PostgreSQL, in the variant's schema;
webflux/orders-db inserts through R2DBC on that ConnectionFactory, so that the insert and the record
commit in one transaction (atomic completion, the default; /nonatomic sets
idempotency.store.r2dbc.transactional-completion=false: the insert commits alone, the record after
it). WebFlux has /orders/db only with the r2dbc store (JDBC would block an event loop).
The last lines give the application's own insert in the same run, the unit the added costs are
compared with: I (JDBC), unkeyed /orders/db minus unkeyed /orders on Spring MVC, and I_r2dbc
(R2DBC), the same on WebFlux (from the webflux/orders-db:r2dbc and webflux/orders rows); then each
row's added cost in I and, for WebFlux rows, in I_r2dbc, and the rows each variant left in
PostgreSQL (records, orders, orders committed in a record's transaction, transactions that committed
more than one order: none should).
Needs wrk (Debian: apt-get install wrk).
"""

import argparse
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

PG = ["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-q", "-v", "ON_ERROR_STOP=1"]
PG_URL = "jdbc:postgresql://127.0.0.1:5432/test"
R2DBC_URL = "r2dbc:postgresql://127.0.0.1:5432/test"
SERVERS = ("postgres", "redis-server")
TICK = os.sysconf("SC_CLK_TCK")
BODY = '{"item":"book","quantity":1}'


def sized_body(request_bytes, answer_bytes):
    """An order of about request_bytes asking for an answer of about answer_bytes."""
    body = '{"item":"book","quantity":1,"answerBytes":%d,"note":"' % answer_bytes
    words = "please leave the parcel at the door next to the blue bicycle thank you "
    note = (words * (request_bytes // len(words) + 1))[:max(0, request_bytes - len(body) - 2)]
    return body + note + '"}'


# A variant's answer size (its @suffix): the request and the answer, in bytes. Without a suffix, the
# 30-byte order answered in 40 bytes of the earlier runs.
SIZES = {"": (None, 0), "40": (200, 0), "1k": (200, 1000), "8k": (2000, 8000)}

DEFAULT_VARIANTS = ",".join([
    "orders:memory/lease",
    "orders:redis/lease",
    "orders:redis/record-after-success",
    "orders:postgresql/lease/atomic",
    "orders:postgresql/lease/dedicated",
    "orders:postgresql/record-after-success/atomic",
    "orders:postgresql/record-after-success/dedicated",
    "orders-db:postgresql/lease/atomic",
    "orders-db:postgresql/record-after-success/atomic",
    "orders-db:postgresql/record-after-success/dedicated",
])

LUA = r"""
local counter = 0
local keyed = %(keyed)s
local threads = {}
function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  math.randomseed(os.time() * 1000 + tid)
  counter = math.random(0, 16777215) * 256
end
local function hex(n, width)
  local s = ""
  for i = 1, width do
    local d = n %% 16
    s = string.sub("0123456789abcdef", d + 1, d + 1) .. s
    n = (n - d) / 16
  end
  return s
end
local function uuidv7()
  counter = counter + 1
  local ms = os.time() * 1000
  local t = hex(ms, 12)
  return string.sub(t, 1, 8) .. "-" .. string.sub(t, 9, 12) .. "-7" .. hex(math.random(0, 4095), 3)
      .. "-" .. hex(8 + (tid %% 4), 1) .. hex(math.random(0, 4095), 3) .. "-" .. hex(tid, 4) .. hex(counter, 8)
end
function request()
  local headers = { ["Content-Type"] = "application/json" }
  if keyed then headers["Idempotency-Key"] = uuidv7() end
  return wrk.format("POST", "%(path)s", headers, '%(body)s')
end
"""


def proc_ticks(pid):
    """CPU ticks of a process, (user, system), from one read of /proc/PID/stat."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]), int(fields[12])


def context_switches(pid):
    """Voluntary context switches of all threads of a process (a thread blocking on I/O is one)."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                for line in f:
                    if line.startswith("voluntary_ctxt_switches"):
                        total += int(line.split()[1])
        except (FileNotFoundError, ProcessLookupError):
            pass  # a thread that ended during the scan
    return total


def server_ticks():
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/comm") as f:
                comm = f.read().strip()
            if comm in SERVERS or comm.startswith("postgres"):
                total += sum(proc_ticks(pid))
        except (FileNotFoundError, ProcessLookupError):
            pass  # ended during the scan
    return total


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wrk(port, path, keyed, seconds, connections, scripts):
    script = scripts[(path, keyed)]
    out = subprocess.run(["wrk", "-t2", f"-c{connections}", f"-d{seconds}s", "--latency", "-s", script,
                          f"http://127.0.0.1:{port}"], check=True, capture_output=True, text=True).stdout
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    failed = (int(bad.group(1)) if bad else 0) + (sum(int(g) for g in errors.groups()) if errors else 0)
    if failed:
        # which failures (wrk times a request out after 2 s): on stderr, beside the report
        print(f"{path} keyed={keyed}: " + "; ".join(m.group(0).strip() for m in (bad, errors) if m),
              file=sys.stderr, flush=True)
    return requests, failed, {q: latency_us(out, q) for q in ("50", "99")}


def latency_us(out, quantile):
    """A quantile of wrk's latency distribution (--latency), in µs."""
    match = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s)\s*$" % quantile, out, re.MULTILINE)
    if not match:
        return float("nan")
    return float(match.group(1)) * {"us": 1, "ms": 1e3, "s": 1e6}[match.group(2)]


def phase(app_pid, port, path, keyed, args, scripts):
    (user0, sys0), cs0, srv0, t0 = proc_ticks(app_pid), context_switches(app_pid), server_ticks(), time.monotonic()
    requests, failed, latency = wrk(port, path, keyed, args.seconds, args.connections, scripts)
    (user1, sys1), cs1, srv1, t1 = proc_ticks(app_pid), context_switches(app_pid), server_ticks(), time.monotonic()
    return {"requests": requests, "failed": failed, "seconds": t1 - t0, "p50": latency["50"], "p99": latency["99"],
            "app_us": (user1 + sys1 - user0 - sys0) / TICK * 1e6, "app_sys_us": (sys1 - sys0) / TICK * 1e6,
            "app_cs": cs1 - cs0, "srv_us": (srv1 - srv0) / TICK * 1e6}


def total(phases):
    out = {k: sum(p[k] for p in phases)
           for k in ("requests", "failed", "seconds", "app_us", "app_sys_us", "app_cs", "srv_us")}
    return out


def lat(phases, key):
    """The phases' median of a latency quantile, in ms."""
    return f"{statistics.median(p[key] for p in phases) / 1000:.2f}"


def per_request(p, key):
    return p[key] / max(p["requests"], 1)


def properties(variant, name):
    stack, variant = variant.split("/", 1) if variant.startswith("webflux/") else ("mvc", variant)
    endpoint, spec = variant.split(":")
    durable = spec.endswith("+durable")
    spec = spec.removesuffix("+durable").removesuffix("+raw").removesuffix("+deflate").split("@")[0]
    parts = spec.split("/")
    store, mode = parts[0], parts[1]
    flavour = parts[2] if len(parts) > 2 else ""
    props = {
        "server.address": "127.0.0.1",
        "spring.main.banner-mode": "off",
        "logging.level.root": "WARN",
        "spring.liquibase.enabled": "false",
        "spring.datasource.url": f"{PG_URL}?currentSchema={name}",
        "spring.datasource.username": "postgres",
        "idempotency.mode": mode,
        # The same annotated controller on either stack: Spring MVC on Tomcat, or WebFlux on Netty.
        "spring.main.web-application-type": "reactive" if stack == "webflux" else "servlet",
    }
    if store == "memory":
        props["idempotency.store.type"] = "memory"
    elif store == "redis":
        props["idempotency.store.type"] = "redis"
        props["spring.data.redis.host"] = "127.0.0.1"
        props["idempotency.store.redis.key-prefix"] = name + ":"
    elif store == "r2dbc":
        if stack != "webflux":
            raise SystemExit(f"{variant}: the r2dbc store only on WebFlux (webflux/...)")
        props["idempotency.store.type"] = "r2dbc"
        # r2dbc-postgresql's schema option sets the connection's search_path: the store's table
        # and the orders in the variant's schema.
        props["spring.r2dbc.url"] = f"{R2DBC_URL}?schema={name}"
        props["spring.r2dbc.username"] = "postgres"
        props["idempotency.store.r2dbc.initialize-schema"] = "always"
        if flavour == "nonatomic":
            props["idempotency.store.r2dbc.transactional-completion"] = "false"
        elif flavour not in ("", "atomic"):
            raise SystemExit(f"{variant}: r2dbc takes /atomic (the default) or /nonatomic")
    elif store == "postgresql":
        props["idempotency.store.type"] = "jdbc"
        if flavour == "dedicated":
            props["idempotency.store.jdbc.url"] = f"{PG_URL}?currentSchema={name}_records"
            props["idempotency.store.jdbc.username"] = "postgres"
        elif flavour != "atomic":
            raise SystemExit(f"{variant}: postgresql needs /atomic or /dedicated")
    else:
        raise SystemExit(f"unknown store in {variant}")
    if durable:
        if store not in ("postgresql", "r2dbc"):
            raise SystemExit(f"{variant}: +durable is for the postgresql and r2dbc stores")
        props[f"idempotency.store.{'r2dbc' if store == 'r2dbc' else 'jdbc'}.postgresql.reserve-asynchronous-commit"] = "off"
    if stack == "webflux" and endpoint != "orders" and store != "r2dbc":
        raise SystemExit(f"{variant}: on WebFlux /orders/db only with the r2dbc store (JDBC's insert would "
                         f"block an event loop)")
    path = {"orders": "/orders", "orders-db": "/orders/db"}[endpoint]
    return stack, path, props


def wait_until_up(port, proc, timeout=90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit("the application exited at start-up; see its log")
        try:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/orders", data=BODY.encode(),
                                             headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(request, timeout=2) as response:
                if response.status == 201:
                    return
        except OSError:
            time.sleep(0.5)
    raise SystemExit("the application did not answer in time")


def run_variant(variant, args, classpath, report, workdir, baselines, added, checks):
    name = "wrk_bench_" + secrets.token_hex(6)
    stack, path, props = properties(variant, name)
    answered = {False: 0, True: 0}
    raw = variant.endswith("+raw")
    deflate = variant.endswith("+deflate")
    size = variant.removesuffix("+durable").removesuffix("+raw").removesuffix("+deflate").split("@")[1] if "@" in variant else ""
    request_bytes, answer_bytes = SIZES[size]
    body = BODY if request_bytes is None else sized_body(request_bytes, answer_bytes)
    psql(f"CREATE SCHEMA {name}; CREATE SCHEMA {name}_records;"
         f"CREATE TABLE {name}.light_order (id bigserial PRIMARY KEY, item text NOT NULL,"
         f" quantity int NOT NULL, created_at timestamptz NOT NULL DEFAULT now());")
    port = free_port()
    props["server.port"] = str(port)
    scripts = {}
    for keyed in (False, True):
        script = os.path.join(workdir, f"{path.strip('/').replace('/', '-')}-{keyed}.lua")
        with open(script, "w") as f:
            f.write(LUA % {"keyed": "true" if keyed else "false", "path": path, "body": body})
        scripts[(path, keyed)] = script
    jvm = ["java", "-Xms1g", "-Xmx1g"]
    if raw:
        # answers stored as they are, never deflated: what compression costs and saves
        props["idempotency.store.compression"] = "none"
    if deflate:
        # answers deflated from 256 bytes by every store, those that keep bodies as they are too
        props["idempotency.store.compression"] = "deflate"
    if args.jfr:
        jfr = os.path.join(args.jfr, variant.replace(":", "_").replace("/", "_") + ".jfr")
        jvm.append(f"-XX:StartFlightRecording=filename={jfr},settings=profile")
    command = jvm + ["-cp", classpath, "dev.idempotency.sample.catalog.bench.OrdersBenchApp"] + \
        [f"--{k}={v}" for k, v in props.items()]
    log = open(os.path.join(workdir, name + ".log"), "w")
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        try:
            wait_until_up(port, proc)
        except SystemExit:
            log.flush()
            with open(log.name) as f:
                print(f.read()[-4000:], file=sys.stderr)
            raise
        # The keyed side warms up longer and last: after a short warm-up the C2 compiler threads were
        # still a third of the application's CPU samples (perf) in the first keyed phases, which then
        # counted JIT compilation as the starter's cost.
        answered[False] += wrk(port, path, False, args.warmup, args.connections, scripts)[0]
        answered[True] += wrk(port, path, True, args.keyed_warmup, args.connections, scripts)[0]
        plain, keyed = [], []
        for pair in range(args.pairs):
            order = (True, False) if pair % 2 else (False, True)
            for k in order:
                measured = phase(proc.pid, port, path, k, args, scripts)
                answered[k] += measured["requests"]
                (keyed if k else plain).append(measured)
        p, k = total(plain), total(keyed)
        app_added = [per_request(kk, "app_us") - per_request(pp, "app_us") for pp, kk in zip(plain, keyed)]
        srv_added = [per_request(kk, "srv_us") - per_request(pp, "srv_us") for pp, kk in zip(plain, keyed)]
        both = (per_request(k, "app_us") - per_request(p, "app_us")) + \
            (per_request(k, "srv_us") - per_request(p, "srv_us"))
        line = (f"| {variant} | {p['requests'] / p['seconds']:.0f} | {k['requests'] / k['seconds']:.0f} "
                f"| **{(k['requests'] / k['seconds']) / (p['requests'] / p['seconds']):.2f}** "
                f"| {per_request(p, 'app_us'):.0f} → {per_request(k, 'app_us'):.0f} "
                f"(**{per_request(k, 'app_us') - per_request(p, 'app_us'):+.0f}**; {statistics.median(app_added):+.0f}) "
                f"| {per_request(p, 'srv_us'):.0f} → {per_request(k, 'srv_us'):.0f} "
                f"(**{per_request(k, 'srv_us') - per_request(p, 'srv_us'):+.0f}**; {statistics.median(srv_added):+.0f}) "
                f"| {per_request(k, 'app_sys_us') - per_request(p, 'app_sys_us'):+.0f} "
                f"| {per_request(k, 'app_cs') - per_request(p, 'app_cs'):+.1f} "
                f"| **{both:+.0f}** "
                f"| {lat(plain, 'p50')} / {lat(plain, 'p99')} → {lat(keyed, 'p50')} / {lat(keyed, 'p99')} "
                f"| {p['failed'] + k['failed']} | {os.getloadavg()[0]:.1f} |")
        emit(report, line)
        added.append((variant, stack, both))
        if not size:
            baselines.setdefault((stack, path), []).append((per_request(p, "app_us"), per_request(p, "srv_us")))
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
        try:
            checks.append(rows_left(variant, name, path, props, answered))
        finally:
            psql(f"DROP SCHEMA {name} CASCADE; DROP SCHEMA {name}_records CASCADE;")
        if props.get("idempotency.store.type") == "redis":
            subprocess.run(f"redis-cli -h 127.0.0.1 --scan --pattern '{name}:*' | xargs -r -n 1000 redis-cli "
                           f"-h 127.0.0.1 del > /dev/null", shell=True, check=True)


def psql(sql):
    subprocess.run(PG + ["-c", sql], check=True, capture_output=True)


def psql_value(sql):
    return subprocess.run(PG + ["-tA", "-c", sql], check=True, capture_output=True, text=True).stdout.strip()


def rows_left(variant, name, path, props, answered):
    """What a variant left in PostgreSQL, after the application stopped: its records (one per keyed
    request answered, give or take the requests in flight when a phase ended), its orders (one per
    request on /orders/db), how many of those committed in a record's transaction (same xmin), and in how
    many transactions more than one order committed (none should: each request commits its own)."""
    store = props.get("idempotency.store.type")
    schema = f"{name}_records" if "idempotency.store.jdbc.url" in props else name
    table = f"{schema}.idempotency_record"
    records = "-"
    if store in ("jdbc", "r2dbc") and psql_value(f"SELECT to_regclass('{table}') IS NOT NULL") == "t":
        records = psql_value(f"SELECT count(*) FROM {table}")
    orders = psql_value(f"SELECT count(*) FROM {name}.light_order")
    shared = psql_value(f"SELECT count(*) FROM (SELECT xmin::text FROM {name}.light_order GROUP BY 1 HAVING count(*) > 1) t")
    joined = "-"
    if records != "-" and path == "/orders/db":
        joined = psql_value(f"SELECT count(*) FROM {name}.light_order o WHERE o.xmin IN (SELECT xmin FROM {table})")
    return (f"| {variant} | {answered[True]} | {records} | {answered[False] + answered[True]} | {orders} "
            f"| {joined} | {shared} |")


def emit(report, text):
    print(text, flush=True)
    report.append(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", default=DEFAULT_VARIANTS)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=15, help="seconds of unkeyed warm-up")
    parser.add_argument("--keyed-warmup", type=int, default=40, help="seconds of keyed warm-up, after the unkeyed one")
    parser.add_argument("--connections", type=int, default=16)
    parser.add_argument("--out")
    parser.add_argument("--jfr", help="directory for one JFR profile per variant")
    args = parser.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    module = os.path.dirname(here)
    with open(os.path.join(module, "target", "cp.txt")) as f:
        classpath = ":".join([os.path.join(module, "target", "test-classes"),
                              os.path.join(module, "target", "classes"), f.read().strip()])
    variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    if any(":r2dbc/" in v for v in variants) and "r2dbc-postgresql" not in classpath:
        raise SystemExit("the r2dbc variants need PostgreSQL's R2DBC driver on the classpath: build target/cp.txt "
                         "with -P'!nullaway,bench-r2dbc' (see the usage above)")
    report, baselines, added, checks = [], {}, [], []
    emit(report, f"# Light endpoint from outside (wrk), {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}")
    emit(report, "")
    emit(report, f"cores={os.cpu_count()} connections={args.connections} seconds/phase={args.seconds} "
                 f"pairs={args.pairs} warmup={args.warmup}s unkeyed, {args.keyed_warmup}s keyed; load before={os.getloadavg()[0]:.1f}; "
                 f"git {subprocess.run(['git', 'rev-parse', '--short', 'HEAD'], capture_output=True, text=True, cwd=here).stdout.strip()}")
    emit(report, "")
    emit(report, "| variant | unkeyed req/s | keyed req/s | keyed/unkeyed | app CPU µs/req unkeyed → keyed "
                 "(**added**; pairs' median) | store server CPU µs/req (**added**; pairs' median) "
                 "| of it app kernel (sys) µs/req added | app voluntary context switches/req added "
                 "| app + server added | latency p50 / p99 ms, unkeyed → keyed (phases' median) | failed | load |")
    emit(report, "|---|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="light-wrk-") as workdir:
        for variant in variants:
            run_variant(variant, args, classpath, report, workdir, baselines, added, checks)
    # The application's own cost of one durable write, measured in the same run: what a store round
    # trip with a commit costs on this machine, against which the rows above compare. I through JDBC
    # on Spring MVC, I_r2dbc through R2DBC on WebFlux.
    units = {}
    for stack, unit, how in (("mvc", "I", "JDBC on Spring MVC"), ("webflux", "I_r2dbc", "R2DBC on WebFlux")):
        if (stack, "/orders") not in baselines or (stack, "/orders/db") not in baselines:
            continue
        app = [statistics.median(a for a, _ in baselines[(stack, p)]) for p in ("/orders", "/orders/db")]
        srv = [statistics.median(s for _, s in baselines[(stack, p)]) for p in ("/orders", "/orders/db")]
        units[stack] = app[1] - app[0] + srv[1] - srv[0]
        emit(report, "")
        emit(report, f"The application's own insert, {unit} ({how}: unkeyed /orders/db minus unkeyed /orders, "
                     f"medians over the variants): app {app[1] - app[0]:+.0f} µs/req, store server "
                     f"{srv[1] - srv[0]:+.0f} µs/req, together **{units[stack]:+.0f}** for one auto-commit "
                     f"INSERT round trip.")
    if units:
        emit(report, "")
        emit(report, "Each row's added cost (app + server) in units of this run's own insert: I (JDBC) for every "
                     "row, I_r2dbc (R2DBC) for the WebFlux rows, the unit of the R2DBC store's rows.")
        emit(report, "")
        emit(report, "| variant | app + server added µs/req | in I (JDBC) | in I_r2dbc (R2DBC) |")
        emit(report, "|---|---|---|---|")
        for variant, stack, both in added:
            in_units = [f"{both / units[s]:.2f}" if s in units and (s == "mvc" or stack == "webflux") and units[s] > 0
                        else "-" for s in ("mvc", "webflux")]
            emit(report, f"| {variant} | {both:+.0f} | {in_units[0]} | {in_units[1]} |")
    emit(report, "")
    emit(report, "Rows left in PostgreSQL, counted after the application stopped (requests answered: wrk's "
                 "count, warm-ups included; those in flight when a phase ended are not in it):")
    emit(report, "")
    emit(report, "| variant | keyed requests answered | records | requests answered | orders "
                 "| orders in a record's transaction | transactions with more than one order |")
    emit(report, "|---|---|---|---|---|---|---|")
    for check in checks:
        emit(report, check)
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(report) + "\n")


if __name__ == "__main__":
    sys.exit(main())
