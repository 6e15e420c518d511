#!/usr/bin/env bash
# A local Redis Cluster (3 primaries, 3 replicas) for trying the Redis store by hand.
# The tests do not need it: they start their own cluster from Java (RedisCluster in the
# auto-configure module's test sources), with the same steps as here.
#
#   .ci/redis-cluster/cluster.sh start [first-port]   # default 17000: ports 17000..17005, bus +10000
#   .ci/redis-cluster/cluster.sh stop  [first-port]
#
# Each node runs from its own directory under ${TMPDIR:-/tmp}/idem-redis-cluster-<first-port>,
# without persistence. Needs redis-server and redis-cli (Redis 7) on the PATH.
set -euo pipefail

command=${1:-}
first=${2:-17000}
dir="${TMPDIR:-/tmp}/idem-redis-cluster-${first}"
ports=$(seq "$first" $((first + 5)))

start() {
	for port in $ports; do
		if redis-cli -p "$port" ping >/dev/null 2>&1 || (exec 3<>"/dev/tcp/127.0.0.1/$((port + 10000))") 2>/dev/null; then
			echo "port $port or its bus port $((port + 10000)) is in use; pick another first port" >&2
			exit 1
		fi
	done
	mkdir -p "$dir"
	for port in $ports; do
		mkdir -p "$dir/$port"
		redis-server --port "$port" --bind 127.0.0.1 --cluster-enabled yes --cluster-config-file nodes.conf \
			--cluster-node-timeout 2000 --dir "$dir/$port" --save "" --appendonly no --repl-diskless-sync-delay 0 \
			--daemonize yes --pidfile "$dir/$port/redis.pid" --logfile "$dir/$port/redis.log"
	done
	for port in $ports; do
		until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
	done
	nodes=$(for port in $ports; do printf '127.0.0.1:%s ' "$port"; done)
	# shellcheck disable=SC2086
	redis-cli --cluster create $nodes --cluster-replicas 1 --cluster-yes >"$dir/create.log"
	for port in $ports; do
		for _ in $(seq 1 600); do
			redis-cli -p "$port" cluster info | grep -q '^cluster_state:ok' && break
			sleep 0.1
		done
		redis-cli -p "$port" cluster info | grep -q '^cluster_state:ok' || { echo "node $port: cluster not ok" >&2; exit 1; }
	done
	echo "cluster ok on 127.0.0.1:${first}..$((first + 5)) (data in $dir)"
}

stop() {
	for port in $ports; do
		pidfile="$dir/$port/redis.pid"
		if [ -f "$pidfile" ]; then
			kill "$(cat "$pidfile")" 2>/dev/null || true
		fi
	done
	rm -rf "$dir"
}

case "$command" in
	start) start ;;
	stop) stop ;;
	*) echo "usage: $0 start|stop [first-port]" >&2; exit 2 ;;
esac
