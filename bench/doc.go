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
