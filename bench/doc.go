// Package bench holds the end-to-end benchmarks and the leak suite of the
// teebody library. It has no API: everything lives in its tests.
//
// Every run builds the same stack on loopback:
//
//	client ──HTTP/1.1 (or TLS HTTP/2)──▶ httputil.ReverseProxy ──TLS HTTP/2──▶ upstream
//
// The upstream drains the request body, checksums it (CRC-32C), reports
// when it saw the first and the last byte, and answers a configurable
// fraction of requests with "Connection: close", which makes Go's HTTP/2
// server send a graceful GOAWAY, as an API server's --goaway-chance does.
// The proxy's transport is one of three:
//
//   - plain: the inner *http.Transport, no replay (the speed limit);
//   - teebody: transport.New around the same inner transport;
//   - readall: the read-everything-first baseline (io.ReadAll, then a
//     bytes.Reader GetBody), what go-retryablehttp does.
//
// BenchmarkOutOfProcess, the headline of docs/BENCHMARKS.md, runs the same
// stack in three processes, all of this test binary (TestMain hands a
// process to its role when BENCH_ROLE names one): an upstream, a proxy per
// transport and body size, and the benchmark itself as the client
// (cleartext HTTP/1.1, a Content-Length, 8 uploads at once), so that what
// the proxy pays is not diluted by the client's and the upstream's work. The
// proxy answers commands on its standard input with its getrusage CPU time,
// context switches, allocations and reads, and writes CPU profiles on
// demand; it ends when its standard input does. It adds two transports:
//
//   - floor, the copy floor: plain, whose request body copies every byte it
//     reads once into pooled chunks (4 to 64 KiB, sized by the announced
//     length) and gives them back at Close; no replay, no goroutine, no
//     budget. Any proxy that keeps every byte of a body for a replay while
//     it hands the body on copies each byte once more than plain does, and
//     reads memory that the copy wrote; the floor does exactly that and
//     nothing else, so no such proxy costs less, and what teebody costs
//     beyond it (÷ floor in the headline) is what the library's own
//     machinery costs: the filler goroutine, the followers, the budget;
//   - adaptive: teebody in adaptive mode, whose upstream never sends GOAWAY.
//
// BenchmarkProxy says how the client writes (write=length: a Content-Length
// and 32 KiB writes; write=chunked: 32 KiB chunks), since that decides how
// the proxy reads; BenchmarkSweep holds 1 to 2,048 uploads in flight at once
// and measures what each adds to the heap, the stacks and the goroutines.
//
// Each benchmark and each test tears its stack down and then checks with
// goleak (and the goroutine count) that nothing was left behind. The tests
// run the same code at a small size, so `go test ./bench/...` is the leak
// suite; bench/run.sh runs the benchmarks and, through bench/report (a
// module of its own, on golang.org/x/perf), writes docs/BENCHMARKS.md.
package bench
