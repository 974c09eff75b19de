// Package teebody makes an HTTP request body readable several times from its
// first byte, so that a transport can replay it (http.Request.GetBody) after
// its upstream refused the request, as an HTTP/2 server does to the streams it
// had not accepted when it sends a graceful GOAWAY.
//
// # Shape
//
// A Tee wraps the body (the source). One filler goroutine, started when a
// reader first asks for data, is the only reader of the source: it appends
// what it reads to an append-only log of pooled chunks. Every body handed out
// — the first, and one for each GetBody call — is a follower: a cursor that
// reads the log from offset 0 and waits for the filler at its end.
//
//	source ──filler──▶ log [chunk][chunk][chunk…]
//	                         ▲      ▲
//	                follower 1      follower 2 (newest)
//
// # Life cycle
//
// The owner (the http.RoundTripper of package transport, or your own code)
// drives a Tee through three states:
//
//  1. Open: NewReader hands out followers. The filler keeps every byte, as
//     long as the per-request limit (WithLimit) and the shared Budget
//     (WithBudget) allow, and reads at most 1 MiB past the furthest
//     follower, so that a slow upstream slows the client down as it would
//     through a plain proxy.
//  2. Sealed (Seal): a response arrived, so no replay can happen any more.
//     No new follower is handed out; the newest one streams on, and the bytes
//     behind it are dropped as it reads them. AfterStreamed tells the owner
//     when the newest follower is done with the body.
//  3. Over (Close): the request is over. The source is never read again,
//     every follower's Read fails, and the memory and budget go back at
//     once, whatever followers are left open or abandoned. Tee.Close states
//     this contract, the end of a request, in full; Done tells when the last
//     goroutine the Tee started is gone.
//
// When a body outgrows the limit or the budget, or yields its budget to
// another body (see Budget), the Tee does not block and does not fail the
// request: it keeps streaming to the newest follower, holding at most one
// chunk that the follower has not read yet, and only replays fail. Every
// refused replay is a NotReplayableError, which matches ErrNotReplayable
// with errors.Is and tells its Reason through errors.As.
//
// # Invariants
//
// The package's tests and comments cite these by number:
//
//  1. Bytes are exact: every follower yields the source's bytes from offset
//     0, in order, then the source's own terminal result (io.EOF or its
//     error) — or ErrClosed, or a NotReplayableError. Never a silent
//     truncation, never a byte out of place.
//  2. Nothing blocks on the client: NewReader, Seal and Close never wait for
//     the source. A follower's Read waits only for data, the source's end, or
//     a Close of that follower or of the Tee.
//  3. Memory is bounded: what a Tee keeps is within its limit (WithLimit)
//     and its Budget, plus at most one chunk in flight once it only streams;
//     once no replay can happen (Seal, an overflow, a yield), the bytes that
//     no follower needs any more are dropped as soon as they are read.
//  4. Release is once, prompt, and needs no garbage collector: Close gives
//     back all the budget and chunks, whatever followers are left open or
//     abandoned, and the source is closed exactly once (Tee.Close).
//  5. Nothing happens after the end: after Close the source is not read
//     again and every follower's Read fails (Tee.Close states the one Read
//     that may still be under way).
//  6. No leaks: once Done is closed, no goroutine the Tee started is left;
//     before, only the filler blocked in its one source Read and the
//     goroutine closing the source can be, and each ends as soon as the
//     source lets it go.
//
// All methods of a Tee and of its followers are safe for concurrent use.
package teebody
