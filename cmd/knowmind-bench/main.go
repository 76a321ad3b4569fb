// Command knowmind-bench runs knowmind's benchmarks: retrieval quality on LoCoMo, recall speed on
// synthetic memories, and the import rate. It lives apart from the service (cmd/knowmind) so that
// the product carries no benchmark code. It speaks to Dgraph directly through graph/dql (a
// tenant's namespace, logged in as an analyst would be), to send recall's DQL without the service
// and to load workloads fast.
// The workloads and the measured numbers are in the README ("Benchmarks") and docs/bulk.md.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"
)

const usage = `usage: knowmind-bench <benchmark> [flags]

benchmarks:
  locomo --data FILE   retrieval quality on a LoCoMo-format file (recall@k, MRR, ablations)
  german               retrieval quality on the German check (bench/german: recall@k, MRR, ablations, off-topic)
  speed [--n N]        recall latency/throughput at N synthetic memories, vs the same DQL sent directly
  tenants [--tenants T --per N --big B --big-n N --index-memory-mb MB]
                       many tenants in one service under the index memory budget (hot p95, cold first recall, RSS)
  stores [--n N --stores S]
                       store_memory latency with and without a writer (its implicit sequence's two reads)
  rules --locomo FILE --german FILE
                       simulate rules over the scores on the locomo and german benches' --dump files (no Dgraph)
  import --n N --tenant NAME [--batch N] [--out FILE] [serve flags]
                       write N synthetic memories as JSONL and import them with knowmind import (the import rate)

Run ` + "`knowmind-bench <benchmark> -h`" + ` for its flags.`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	var err error
	switch os.Args[1] {
	case "locomo":
		err = runBenchLocomo(ctx, os.Args[2:])
	case "german":
		err = runBenchGerman(ctx, os.Args[2:])
	case "speed":
		err = runBenchSpeed(ctx, os.Args[2:])
	case "tenants":
		err = runBenchTenants(ctx, os.Args[2:])
	case "stores":
		err = runBenchStores(ctx, os.Args[2:])
	case "import":
		err = runBenchImport(ctx, os.Args[2:])
	case "rules":
		err = runRules(os.Args[2:])
	default:
		if a := os.Args[1]; a != "-h" && a != "--help" && a != "help" {
			fmt.Fprintf(os.Stderr, "unknown benchmark %q\n\n", a)
		}
		fmt.Fprintln(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "knowmind-bench:", err)
		os.Exit(1)
	}
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

func portOpen(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}
