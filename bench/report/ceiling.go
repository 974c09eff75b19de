package main

// The reads that a kept body needs.
//
// The bench counts the reads of the proxy's inbound connections. Each
// upload takes three kinds, through any transport:
//   - the head read: net/http's server reads a request's head through a
//     4 KiB bufio.Reader, whose first read also brings the body's first
//     bytes, up to 4 KiB less the head;
//   - the body's reads;
//   - the background read: once the body is read, the server reads ahead,
//     and that read returns the next request's first byte.
//
// The filler copies each byte once, from the client straight into the log's
// last chunk, so the size of its Read is the size of the chunk it reads
// into. Two bounds of pkg/teebody cap that chunk:
//   - the charge bound: a body that has received r bytes holds at most
//     2r + 4 KiB, so its next chunk, and Read, takes at most r + 4 KiB;
//   - the size classes, which stop at the read-ahead window, 1 MiB.
//
// So the head read and k reads after it bring at most 4 KiB·(2^(k+1) − 1)
// until the classes cap them, and a body of n bytes takes at least readsFor(n)
// reads: 6 at 64 KiB, where plain takes 3, and 10 at 1 MiB, where plain
// takes about 4. Its mean read cannot be larger than n ÷ readsFor(n) (the
// head's own bytes aside), whatever the client and the kernel do.
const (
	firstChunk = 4 << 10 // the smallest class, net/http's read buffer, and what a body may hold before its first byte
	maxChunk   = 1 << 20 // the largest class
)

// readsFor returns the fewest reads of the inbound connection in which a
// kept body of n bytes can arrive: the head read, which brings at most
// firstChunk of it; reads that each take at most what has arrived before
// them plus firstChunk, and at most maxChunk; and the background read. An
// empty body takes none.
func readsFor(n int64) int64 {
	if n <= 0 {
		return 0
	}
	got, reads := min(n, firstChunk), int64(2)
	for got < n {
		got += min(got+firstChunk, maxChunk)
		reads++
	}
	return reads
}

// readCeilingKiB returns the largest mean read, in KiB, of a kept body of n
// bytes, or 0 for an empty body.
func readCeilingKiB(n int64) float64 {
	if n <= 0 {
		return 0
	}
	return float64(n) / float64(readsFor(n)) / 1024
}
