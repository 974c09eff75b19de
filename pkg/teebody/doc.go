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
//     behind it are dropped as it reads them.
//  3. Over (Close): the source is never read again; every follower's Read
//     fails; chunks and budget go back at once, but for the chunk the filler
//     is reading into, which stays charged until its Read returns. The
//     source is closed once, never by Close itself: by the filler as soon as
//     it returned io.EOF, otherwise on a goroutine of its own. Done is closed
//     when the filler and the source's Close have returned. docs/design.md
//     ("The end of a request") states this contract in full.
//
// When a body outgrows the limit or the budget, or yields its budget to a
// smaller body, the Tee does not block and does not fail the request: it
// keeps streaming to the newest follower, holding at most one chunk that the
// follower has not read yet, and only replays fail. Every refused replay is
// a *NotReplayableError, which matches ErrNotReplayable with errors.Is and
// tells its Reason through errors.As.
//
// # Guarantees
//
//   - Bytes are exact: every follower yields the source's bytes from offset
//     0, in order, then the source's own terminal result (io.EOF or its
//     error) — or ErrClosed, or a *NotReplayableError. Never a silent
//     truncation.
//   - Nothing blocks on the client: NewReader, Seal and Close never wait for
//     the source. A follower's Read waits only for data, the source's end, or
//     a Close of that follower or of the Tee.
//   - Memory is bounded: what a Tee keeps is within its limit and its budget,
//     plus at most one chunk in flight once it only streams.
//   - Release is prompt and needs no garbage collector: Close gives back all
//     the budget and chunks, whatever followers are left open or abandoned.
//   - Nothing happens after the end: after Close the source is never read
//     again (the one Read the filler had already set out on may complete; its
//     bytes are dropped).
//
// All methods of a Tee and of its followers are safe for concurrent use.
package teebody
