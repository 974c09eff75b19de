package bench

import "net/http"

// kinds are the transports every benchmark compares.
var kinds = []string{kindPlain, kindReadAll}

func newTeebody(cfg stackConfig, inner *http.Transport) (underTest, error) {
	return underTest{}, errNoTeebody
}
