package noisytest

import "net/http"

// Consume reads the rest of r's body, of which the caller has read read
// bytes already. If want > 0, it calls arrived once at least want bytes are
// in, once. It answers 200 when the body's length matches its
// Content-Length, else 400.
func Consume(w http.ResponseWriter, r *http.Request, read, want int64, arrived func()) {
	n := read
	buf := make([]byte, 32<<10)
	counted := want <= 0
	for {
		m, err := r.Body.Read(buf)
		n += int64(m)
		if !counted && n >= want {
			counted = true
			arrived()
		}
		if err != nil {
			break
		}
	}
	if n != r.ContentLength {
		http.Error(w, "short body", http.StatusBadRequest)
		return
	}
	w.WriteHeader(http.StatusOK)
}
