package noisytest_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/teebody/teebody/internal/noisytest"
)

// Consume counts a body as arrived once, when want bytes are in, and
// answers by whether the body's length matches its Content-Length.
func TestConsume(t *testing.T) {
	for _, tc := range []struct {
		name          string
		read, length  int64
		want          int64
		arrived, code int
	}{
		{"whole", 0, 10, 4, 1, http.StatusOK},
		{"read before", 3, 13, 4, 1, http.StatusOK},
		{"never counted", 0, 10, 0, 0, http.StatusOK},
		{"short of want", 0, 10, 11, 0, http.StatusOK},
		{"short", 0, 11, 4, 1, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader("0123456789"))
			r.ContentLength = tc.length
			w := httptest.NewRecorder()
			arrived := 0
			noisytest.Consume(w, r, tc.read, tc.want, func() { arrived++ })
			if arrived != tc.arrived || w.Code != tc.code {
				t.Errorf("arrived %d times, answered %d; want %d, %d", arrived, w.Code, tc.arrived, tc.code)
			}
		})
	}
}
