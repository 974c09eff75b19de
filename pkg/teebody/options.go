package teebody

// defaultLimit is the per-request limit of a Tee made without WithLimit.
const defaultLimit = 50 << 20

// An Option configures a Tee made by New. The With functions of this
// package make Options. The zero Option changes nothing.
type Option struct {
	apply func(*Tee) // nil in the zero Option
}

// WithLimit sets the most a Tee keeps for replays, in bytes of chunk
// capacity. Chunk capacity is a little more than the body bytes it holds. A
// body that grows past the limit streams on to the newest follower, and its
// replays fail with ReasonTooLarge. A limit of zero or less keeps nothing.
func WithLimit(perRequestBytes int64) Option {
	return Option{func(t *Tee) { t.limit = perRequestBytes }}
}

// WithOnDone makes the Tee call f once, when nothing it started is left: it
// is closed, the source's Close has returned, and the filler goroutine has
// exited. The call is made on the goroutine that lets go last: the one
// calling Close, the filler, or the one closing the source. It never comes
// before Close, and not as long as the source blocks a Read or a Close. The
// function f must not block. An owner of many Tees thus learns of their end
// without a goroutine waiting on each.
func WithOnDone(f func()) Option {
	return Option{func(t *Tee) { t.onDone = f }}
}

// WithBudget makes the Tee charge what it keeps to b, a Budget shared with
// other Tees. When b is spent, another body may yield to this one (see
// Budget). Else this body loses its replay (ReasonNoBudget) and streams on.
// The Tee gives back its charge when it is closed. The chunk a source Read
// is filling then goes back when that Read returns. The Tee gives back a
// chunk earlier once no replay can need the chunk. A nil b means no shared
// budget.
func WithBudget(b *Budget) Option {
	return Option{func(t *Tee) { t.budget = b }}
}

// WithSizeHint tells the Tee the body's length, when it is known in advance,
// as a request's ContentLength is. The hint only ever makes chunks smaller.
// Each chunk is at most what the body has left, or 4 KiB for its last few
// bytes, so the chunks exceed the body by less than 4 KiB. The filler then
// finds the end without taking another chunk. A chunk is never more than
// 4 KiB larger than the bytes that have arrived, whatever the hint.
// A body that announces more than its limit or its budget can keep makes no
// other body yield. A hint of zero or less means unknown.
// A wrong hint costs only memory or reads: the bytes are the source's.
func WithSizeHint(n int64) Option {
	return Option{func(t *Tee) { t.sizeHint = max(n, 0) }}
}
