// Package teebody makes an HTTP request body readable several times from its
// first byte. A client can then replay the body (http.Request.GetBody) after
// its upstream refused the request. An HTTP/2 server refuses the streams it
// had not accepted when it sends a graceful GOAWAY.
//
// # Shape
//
// A Tee wraps the body, called the source. One filler goroutine is the only
// reader of the source. It starts when a reader first asks for data, and
// appends what it reads to a log of pooled chunks. Every body handed out is
// a follower: the first one, and one for each GetBody call. A follower is a
// cursor that reads the log from offset 0. At the end of the log it waits for
// the filler.
//
//	source ──filler──▶ log [chunk][chunk][chunk…]
//	                         ▲      ▲
//	                follower 1      follower 2 (newest)
//
// # Life cycle
//
// The owner of a Tee, such as an http.RoundTripper, drives it through three
// states:
//
//  1. Open: NewReader hands out followers. The filler keeps every byte,
//     within the limit (WithLimit) and the Budget (WithBudget). It reads at
//     most 1 MiB past the furthest follower. So a slow upstream slows the
//     client down, as it would through a plain proxy.
//  2. Sealed (Seal): a response arrived, so no replay can happen any more.
//     NewReader hands out no new follower. The newest follower streams on,
//     and the bytes behind it are dropped as it reads them. AfterStreamed
//     tells the owner when the newest follower is done.
//  3. Over (Close): the request is over. Every follower's Read fails. At
//     most one more source Read runs, and what it brings is dropped. The
//     memory and the budget go back at once, whatever followers are left,
//     but for the chunk that Read fills: it goes back when the Read returns.
//     Tee.Close states this contract in full. The function given with
//     WithOnDone tells when the last goroutine the Tee started is gone.
//
// A body may outgrow its limit or its budget, or yield its budget to another
// body (see Budget). The Tee then neither blocks nor fails the request. It
// streams on to the newest follower, and only replays fail. It keeps the
// bytes that follower has not read yet: what the filler had read ahead, at
// most 1 MiB past the furthest follower. It drops each chunk once that
// follower has read it. From then on it holds at most one chunk that the
// follower has not read yet. Every refused replay is a
// NotReplayableError. It matches ErrNotReplayable with errors.Is, and tells
// its Reason through errors.As.
//
// # Invariants
//
// The package's tests and comments cite these by number:
//
//  1. Bytes are exact. Every follower yields the source's bytes from offset
//     0, in order. Then it returns the source's own terminal result (io.EOF
//     or its error), ErrClosed, or a NotReplayableError. A body is never
//     silently truncated, and no byte is ever out of place.
//  2. Nothing blocks on the client. NewReader, Seal and Close never wait for
//     the source. A follower's Read waits only for data, the source's end, or
//     a Close of that follower or of the Tee.
//  3. Memory is bounded. What a Tee keeps stays within its limit and its
//     Budget. Once it only streams, it holds at most one more chunk. Once no
//     replay can happen (Seal, an overflow, a yield), the bytes that no
//     follower needs are dropped as soon as they are read.
//  4. Release is once, prompt, and needs no garbage collector. Close gives
//     back the budget and the chunks, whatever followers are left. The chunk
//     a source Read is filling goes back when that Read returns. The source
//     is closed exactly once (Tee.Close).
//  5. The end stops the reads. After Close every follower's Read fails. At
//     most one more source Read runs: one under way, or one the filler was
//     about to start. What it brings is dropped (Tee.Close).
//  6. No leaks. Once the function given with WithOnDone runs, no goroutine
//     the Tee started is left but the one running it, which returns right
//     after. Before, only the filler, blocked in its one source Read, and the
//     goroutine closing the source can be left. Each ends as soon as the
//     source lets it go.
//
// All methods of a Tee and of its followers are safe for concurrent use.
package teebody
