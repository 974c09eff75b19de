package transport_test

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/teebody/teebody/pkg/teebody"
)

// classRefusedReplay is errClass's kind for a replay the Tee refused.
const classRefusedReplay = "teebody: a replay refused"

// answerLog counts the answers of an ErrorHandler by the class of the
// error it was given and the status it wrote.
type answerLog struct {
	mu sync.Mutex
	n  map[string]int // guarded by mu: "class → status" to count
}

// wrap returns h, counting its answers in l.
func (l *answerLog) wrap(h func(http.ResponseWriter, *http.Request, error)) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		sw := &statusWriter{ResponseWriter: w}
		h(sw, r, err)
		class := errClass(err)
		if errors.Is(err, teebody.ErrNotReplayable) {
			class = classRefusedReplay
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.n == nil {
			l.n = map[string]int{}
		}
		l.n[class+" → "+strconv.Itoa(sw.code)]++
	}
}

// check fails t unless every answer was 429 for an error that proves the
// upstream did not process the request, or 502 for a read of a body that
// an earlier attempt closed, which proves nothing
// (TestFactClosedBodyResendReachesUpstream). It returns the counts of both.
func (l *answerLog) check(t *testing.T) (retryLater, badGateway int) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for answer, n := range l.n {
		switch answer {
		case classCannotRetry + " → 429", classCannotRewind + " → 429", classRefusedReplay + " → 429":
			retryLater += n
		case classClosedBody + " → 502":
			badGateway += n
		default:
			t.Errorf("%d × %s; want 429 for a proven refusal, 502 for a closed body's read, nothing else", n, answer)
		}
	}
	return retryLater, badGateway
}

// String lists the answers, for a log.
func (l *answerLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.n)
}
