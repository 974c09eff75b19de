package main

// The read size that a kept body can reach.
//
// The filler copies each byte once, from the client straight into the log's
// last chunk, so the size of its Read is the size of the chunk it reads
// into. Two bounds of pkg/teebody cap that chunk:
//   - the charge bound: a body that has received r bytes holds at most
//     2r + 4 KiB, so its next chunk, and Read, takes at most r + 4 KiB;
//   - the size classes, which stop at the read-ahead window, 1 MiB.
//
// So k reads bring at most 4 KiB·(2^k − 1) until the classes cap them, and
// a body of n bytes takes at least readsFor(n) reads. The mean read of an
// upload cannot be larger than n ÷ readsFor(n), whatever the client and the
// kernel do: 12.8 KiB at 64 KiB, where plain reads about 21 KiB, and
// 113.8 KiB at 1 MiB, where plain reads about 254 KiB.
const (
	firstChunk = 4 << 10 // the smallest class, and what a body may hold before its first byte
	maxChunk   = 1 << 20 // the largest class
)

// readsFor returns the fewest Reads in which a kept body of n bytes can
// arrive: each takes at most what has arrived before it plus firstChunk,
// and at most maxChunk. The last Read ends the body; the Read that returns
// io.EOF carries no bytes and is not counted.
func readsFor(n int64) int64 {
	var got, reads int64
	for got < n {
		got += min(got+firstChunk, maxChunk)
		reads++
	}
	return reads
}

// readCeilingKiB returns the largest mean Read, in KiB, of a kept body of n
// bytes, or 0 for an empty body.
func readCeilingKiB(n int64) float64 {
	if n <= 0 {
		return 0
	}
	return float64(n) / float64(readsFor(n)) / 1024
}
