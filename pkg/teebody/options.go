package teebody

// DefaultLimit is the per-request limit of a Tee made without WithLimit:
// 50 MiB.
const DefaultLimit = 50 << 20

// An Option configures a Tee made by New.
type Option func(*Tee)

// WithLimit sets the most a Tee keeps for replays, in bytes of chunk capacity
// (a little more than the body bytes they hold, never more than the limit). A
// body that grows past it goes on streaming to the newest follower, and its
// replays fail with ReasonTooLarge. A limit of zero or less keeps nothing.
func WithLimit(perRequestBytes int64) Option {
	return func(t *Tee) { t.limit = perRequestBytes }
}

// WithOnDone makes the Tee call f once it is done, right after it closes the
// channel Done returns: on the goroutine that let go last (the one calling
// Close, the filler, or the goroutine that closed the source), never before
// Close. f must not block. It lets an owner that tracks many Tees learn of
// their end without a goroutine waiting on each Done.
func WithOnDone(f func()) Option {
	return func(t *Tee) { t.onDone = f }
}

// WithBudget makes the Tee charge what it keeps to b, a budget shared with
// other Tees. When b has nothing free once bytes have arrived, a body that
// holds more and has that much to give may yield to this one (see Budget);
// when none can, the body goes on streaming to the newest follower, and its
// replays fail with ReasonNoBudget. The Tee gives back all it took when it is closed, or
// earlier, as soon as it drops bytes that no replay can need. A nil b means
// no shared budget.
func WithBudget(b *Budget) Option {
	return func(t *Tee) { t.budget = b }
}

// WithSizeHint tells the Tee the body's length when it is known in advance
// (a request's ContentLength). The hint only ever makes chunks smaller: each
// is at most what the body has left, so that the chunks exceed the body by
// less than 4 KiB, and the filler finds the end without taking another
// chunk. It never makes one larger than the bytes that have arrived, so a
// client that announces much and sends little holds little. A body that
// announces more than its limit or its budget could keep takes no budget back
// from others. A hint of zero or less means unknown. A wrong hint costs only
// memory or reads: the bytes are the source's, whatever it said.
func WithSizeHint(n int64) Option {
	return func(t *Tee) { t.sizeHint = max(n, 0) }
}
